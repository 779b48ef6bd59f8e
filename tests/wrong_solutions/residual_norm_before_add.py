"""Post-LN with the LayerNorm applied to x before the addition: LayerNorm(x) + Sublayer(x).

exercise: architecture_overview/residual
caught by: Post-LN (norm_first=False): LayerNorm(x + Sublayer(x)), dropout as identity
message mentions: before adding; after the addition
breaks: residual: post-ln
"""


def residual(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x) + dropout(sublayer(x))  # the mistake: normalises x, not the sum
