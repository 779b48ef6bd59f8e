"""A target mask whose causal part is upper triangular: each position sees the future.

exercise: attention_in_the_model/target_mask
caught by: without padding it is the causal mask, for every sentence
message mentions: upper triangular; np.tril
breaks: target_mask: causal
"""

import numpy as np


def target_mask(tokens, pad_id):
    T = tokens.shape[1]
    causal = np.triu(np.ones((T, T), dtype=bool))  # the mistake: triu keeps j >= i
    return (tokens != pad_id)[:, None, None, :] & causal[None, None]
