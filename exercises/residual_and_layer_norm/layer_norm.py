"""Exercise: layer normalisation (Ba et al., 2016), the LayerNorm of §3.1, in NumPy.

Check your work:  python -m aiayn.grading residual_and_layer_norm/layer_norm
"""

import numpy as np


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
               eps: float = 1e-5) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias, with mean and var over the LAST axis.

    x:      (..., d_model), e.g. (B, T, d_model): each position is normalised over its own
            features, independently of the other positions and of the other sentences.
    weight: (d_model,) gain; bias: (d_model,) shift.
    var is the biased variance (divide by d_model, as torch.nn.LayerNorm does).
    Returns an array of the shape of ``x``. Do not modify ``x`` in place.
    """
    raise NotImplementedError
