"""Uses math.pow, which takes one number: right for an int length, a TypeError for an array.

exercise: copy_task/length_penalty
caught by: length_penalty works element-wise on a NumPy array of lengths
message mentions: math.pow
breaks: length_penalty: elementwise
"""

import math


def length_penalty(length, alpha):
    return math.pow((5 + length) / 6, alpha)  # the mistake: scalars only


def normalised_score(log_prob, length, alpha):
    return log_prob / ((5 + length) / 6) ** alpha
