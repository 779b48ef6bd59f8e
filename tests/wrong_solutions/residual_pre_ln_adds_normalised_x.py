"""Pre-LN that adds LayerNorm(x), not x, around the sub-layer: the residual stream is
normalised after all.

exercise: architecture_overview/residual
caught by: Pre-LN (norm_first=True): x + Sublayer(LayerNorm(x)), dropout as identity
message mentions: adds the raw x
breaks: residual: pre-ln
"""


def residual(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        h = norm(x)
        return h + dropout(sublayer(h))  # the mistake: the residual adds norm(x)
    return norm(x + dropout(sublayer(x)))
