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
    norm_first: False is the paper's Post-LN, True the Pre-LN variant.

    Promises (the grader checks each one):
      - post-ln: with norm_first=False, returns LayerNorm(x + Dropout(Sublayer(x))), a NumPy
        array (B, T, d_model).
      - pre-ln: with norm_first=True, returns x + Dropout(Sublayer(LayerNorm(x))).
      - dropout: dropout acts on the sub-layer's output, before the addition: not on x, not on
        the sum.
      - given-functions: the three functions given are the ones called, whatever they compute:
        no LayerNorm or dropout of your own.
    """
    raise NotImplementedError
