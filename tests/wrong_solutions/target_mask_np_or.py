"""Combines the padding and causal masks with OR instead of AND.

exercise: attention_in_the_model/target_mask
caught by: bool (B, 1, T, T), equal to the course's target_mask on a padded batch
message mentions: OR; AND
breaks: target_mask: and
"""

import numpy as np


def target_mask(tokens, pad_id):
    T = tokens.shape[1]
    padding = (tokens != pad_id)[:, None, None, :]
    causal = np.tril(np.ones((T, T), dtype=bool))[None, None]
    return padding | causal  # the mistake: OR
