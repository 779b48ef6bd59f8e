"""GNMT's length penalty without the division by 6: every score is off by 6 ** alpha, a
constant factor that leaves the ranking at one alpha unchanged.

exercise: copy_task/length_penalty
caught by: length_penalty equals ((5 + |Y|) / 6) ** alpha (values, not only the ranking)
message mentions: division by 6; constant factor; 6 ** alpha
breaks: length_penalty: value
"""


def length_penalty(length, alpha):
    return (5.0 + length) ** alpha  # the mistake: ((5 + length) / 6) ** alpha is meant


def normalised_score(log_prob, length, alpha):
    return log_prob / length_penalty(length, alpha)
