"""Applies dropout to the sum, after the residual addition, instead of to the sub-layer's output.

exercise: architecture_overview/residual
caught by: Post-LN: dropout acts on the sub-layer's output, before the addition
message mentions: sub-layer's output only
breaks: residual: dropout
"""


def residual(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(x + sublayer(norm(x)))  # the mistake: dropout on the sum
    return norm(dropout(x + sublayer(x)))
