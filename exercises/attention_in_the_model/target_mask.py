"""Exercise: the decoder's self-attention mask, padding AND causal (§3.2.3), in NumPy.

Check your work:  python -m aiayn.grading attention_in_the_model/target_mask
"""

import numpy as np


def target_mask(tokens: np.ndarray, pad_id: int) -> np.ndarray:
    """The decoder's self-attention mask: padding AND causal.

    tokens: (B, T) int64 target token ids; positions equal to ``pad_id`` are padding (usually
    at the end of a sentence). The axis of size 1 broadcasts over the heads of the attention
    scores (B, H, T, T).

    Promises (the grader checks each one):
      - shape: a boolean array of shape (B, 1, T, T).
      - convention: True = "query i may attend to key j", False = blocked.
      - causal: entry [b, 0, i, j] is False for every j > i: position i sees itself and the
        positions before it, never the future.
      - padding: entry [b, 0, i, j] is False where key j is padding in sentence b, decided
        from the ids (padding may stand anywhere), for any pad_id.
      - and: an entry is True exactly when both hold: key j is not padding AND j <= i.
    """
    raise NotImplementedError
