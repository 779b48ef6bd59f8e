"""split_heads that reshapes (B, T, d_model) straight to (B, H, T, d_k), and the merge_heads
that undoes it (so the round trip passes and hides the mistake).

exercise: multi_head_attention/split_merge_heads
caught by: split_heads: (B, T, d_model) -> (B, H, T, d_k), equal to the course's
message mentions: transpose; (B, T, H, d_k)
breaks: split_heads: value
"""


def split_heads(x, num_heads):
    B, T, d_model = x.shape
    return x.reshape(B, num_heads, T, d_model // num_heads)  # the mistake: no transpose


def merge_heads(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)  # the same mistake in reverse
