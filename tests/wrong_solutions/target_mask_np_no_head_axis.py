"""A target mask of shape (B, T, T): the axis that broadcasts over the heads is missing.

exercise: attention_in_the_model/target_mask
caught by: bool (B, 1, T, T), equal to the course's target_mask on a padded batch
message mentions: (B, 1, T, T)
breaks: target_mask: shape
"""

import numpy as np


def target_mask(tokens, pad_id):
    T = tokens.shape[1]
    padding = (tokens != pad_id)[:, None, None, :]
    causal = np.tril(np.ones((T, T), dtype=bool))[None, None]
    return (padding & causal)[:, 0]  # the mistake: (B, T, T)
