"""Exercise: a softmax that respects a mask (NumPy).

Check your work:  python -m aiayn.grading scaled_dot_product_attention/masked_softmax
"""

import numpy as np


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the LAST axis (the keys) of ``scores``, with masked keys given weight 0.

    scores: float array, e.g. attention scores of shape (B, H, T_q, T_k).
    mask:   None, or a boolean array broadcastable to ``scores`` (e.g. (B, 1, 1, T_k) for
            padding, (1, 1, T_q, T_k) for a causal mask). True = "this query may attend to
            this key"; False = blocked.

    Promises (the grader checks each one):
      - softmax: returns an array of the shape of ``scores``, the softmax over the LAST axis:
        the weights of each row (query) sum to 1 over the keys that are not blocked.
      - mask: every weight of a blocked key is exactly 0 (True = may attend), for any mask
        that broadcasts, a causal (1, 1, T_q, T_k) one included.
      - all-masked: a row whose keys are ALL blocked is all zeros (not NaN: 0/0 must not
        happen).
      - no-overflow: huge scores (say 1000) do not overflow: exp(1000) is inf in float64.
      - input-unchanged: ``scores`` is not modified in place: the caller still needs it.
    """
    raise NotImplementedError
