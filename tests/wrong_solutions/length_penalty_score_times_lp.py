"""Multiplies the log-probability by the penalty instead of dividing by it.

exercise: copy_task/length_penalty
caught by: normalised_score equals log P / lp, the score beam search ranks by
message mentions: divide by the penalty
breaks: normalised_score: value
"""


def length_penalty(length, alpha):
    return ((5 + length) / 6) ** alpha


def normalised_score(log_prob, length, alpha):
    return log_prob * length_penalty(length, alpha)  # the mistake: * instead of /
