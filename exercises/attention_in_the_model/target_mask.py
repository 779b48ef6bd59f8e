"""Exercise: the decoder's self-attention mask, padding AND causal (§3.2.3), in NumPy.

Check your work:  python -m aiayn.grading attention_in_the_model/target_mask
"""

import numpy as np


def target_mask(tokens: np.ndarray, pad_id: int) -> np.ndarray:
    """Boolean mask of shape (B, 1, T, T); True = "this query may attend to this key".

    tokens: (B, T) int64 target token ids; positions equal to ``pad_id`` are padding (usually
    at the end of a sentence, but decide from the ids, not from a length).
    Entry [b, 0, i, j] is True exactly when key j is not padding in sentence b AND j <= i
    (position i sees itself and the positions before it, never the future). The axis of size
    1 broadcasts over the heads of the attention scores (B, H, T, T).
    """
    raise NotImplementedError
