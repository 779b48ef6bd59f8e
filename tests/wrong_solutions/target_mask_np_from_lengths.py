"""Counts each sentence's real tokens and blocks the keys after that length: right while
padding stands at the end, wrong when it stands anywhere else.

exercise: attention_in_the_model/target_mask
caught by: follows the ids: padding anywhere, and a single position (T = 1)
message mentions: sentence's length; decide from the ids
breaks: target_mask: padding
"""

import numpy as np


def target_mask(tokens, pad_id):
    B, T = tokens.shape
    lengths = (tokens != pad_id).sum(axis=1)  # the mistake: a length, not the ids
    padding = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
    return padding & np.tril(np.ones((T, T), dtype=bool))[None, None]
