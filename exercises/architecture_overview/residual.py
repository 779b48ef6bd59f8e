"""Exercise: the residual wrapper around every sub-layer (§3.1), Post-LN and Pre-LN (NumPy).

Check your work:  python -m aiayn.grading architecture_overview/residual
"""

import numpy as np


def residual(x: np.ndarray, sublayer, norm, dropout, norm_first: bool) -> np.ndarray:
    """Wraps ``sublayer`` with a residual connection, dropout and layer normalisation.

    x:          (B, T, d_model) activations.
    sublayer:   a function (B, T, d_model) -> (B, T, d_model), e.g. self-attention or the FFN.
    norm:       a function (B, T, d_model) -> (B, T, d_model), the layer's LayerNorm.
    dropout:    a function (B, T, d_model) -> (B, T, d_model) (the identity at inference).
    norm_first: False is the paper's Post-LN:  LayerNorm(x + Dropout(Sublayer(x)));
                True is the Pre-LN variant:    x + Dropout(Sublayer(LayerNorm(x))).
    Returns (B, T, d_model). Call each of the three functions; do not build your own.
    """
    raise NotImplementedError
