"""Exercise: layer normalisation (Ba et al., 2016), the LayerNorm of §3.1, in NumPy.

Check your work:  python -m aiayn.grading residual_and_layer_norm/layer_norm
"""

import numpy as np


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
               eps: float = 1e-5) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias, with mean and var over the LAST axis.

    x:      (..., d_model), e.g. (B, T, d_model).
    weight: (d_model,) gain; bias: (d_model,) shift.

    Promises (the grader checks each one):
      - value: returns an array of the shape of ``x``: each position normalised over its own
        features, independently of the other positions and sentences, with the biased
        variance (divided by d_model, as torch.nn.LayerNorm does) and eps inside the root.
      - leading-axes: any number of leading axes: (T, d_model) as well as (B, T, d_model).
      - input-unchanged: ``x`` is not modified in place.
    """
    raise NotImplementedError
