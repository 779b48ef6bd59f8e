"""A residual wrapper that always computes Pre-LN, also when Post-LN (the paper) is asked.

exercise: architecture_overview/residual
caught by: Post-LN (norm_first=False): LayerNorm(x + Sublayer(x)), dropout as identity
message mentions: Pre-LN; normalises the SUM
breaks: residual: post-ln
"""


def residual(x, sublayer, norm, dropout, norm_first):
    return x + dropout(sublayer(norm(x)))  # the mistake: norm_first is ignored
