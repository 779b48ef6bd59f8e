"""Converts the log-probability with float(): right for a number, a TypeError for an array.

exercise: copy_task/length_penalty
caught by: normalised_score works element-wise on NumPy arrays
message mentions: float()
breaks: normalised_score: elementwise
"""


def length_penalty(length, alpha):
    return ((5 + length) / 6) ** alpha


def normalised_score(log_prob, length, alpha):
    return float(log_prob) / length_penalty(length, alpha)  # the mistake: scalars only
