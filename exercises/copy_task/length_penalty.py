"""Exercise: GNMT's length penalty, by which the course's beam search ranks hypotheses (§6.1:
beam size 4, length penalty α = 0.6).

Check your work:  python -m aiayn.grading copy_task/length_penalty
"""

import numpy as np


def length_penalty(length, alpha: float):
    """lp(Y) = ((5 + |Y|) / 6) ** alpha (Wu et al., 2016), with |Y| = ``length``.

    length: the number of generated tokens, EOS included (an int >= 1, or a NumPy array of
    them).

    Promises (the grader checks each one):
      - value: returns the float ((5 + length) / 6) ** alpha: 1 for alpha = 0 whatever the
        length, 1 for length 1 whatever alpha.
      - elementwise: for a NumPy array of lengths, the array of their penalties.
    """
    raise NotImplementedError


def normalised_score(log_prob, length, alpha: float):
    """The score beam search ranks finished hypotheses by: log P(Y) / lp(Y).

    log_prob: log P(Y) <= 0, the model's log-probability of the whole output, EOS included;
    length and alpha as in ``length_penalty``.

    Promises (the grader checks each one):
      - value: returns the float log_prob / lp(length, alpha).
      - elementwise: for NumPy arrays of log-probabilities and lengths, the array of scores.
    """
    raise NotImplementedError
