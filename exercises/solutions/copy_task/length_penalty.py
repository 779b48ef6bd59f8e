"""Reference solution: GNMT's length penalty and the normalised score."""

import numpy as np


def length_penalty(length, alpha: float):
    return ((5.0 + length) / 6.0) ** alpha  # the / 6 makes lp(1) = 1 for every alpha


def normalised_score(log_prob, length, alpha: float):
    # log_prob < 0 and lp grows with the length: longer outputs are penalised less per token.
    return log_prob / length_penalty(length, alpha)
