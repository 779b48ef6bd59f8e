"""Grader of the chapter "Multi-head attention": ``split_heads`` and ``merge_heads`` in NumPy,
checked against ``aiayn.np.attention`` on random shapes where B, H, T and d_k all differ, so
that a missing or wrong transpose gives different numbers (or a different shape), not the same
ones by accident."""

from ...np.attention import merge_heads as course_merge
from ...np.attention import split_heads as course_split
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape
from ..core import exercise, need
from ..language import tr

ex = exercise("multi_head_attention/split_merge_heads", "multi_head_attention/split_merge_heads.py",
              "split_heads (B, T, d_model) -> (B, H, T, d_k) and merge_heads, its inverse")

SPLIT_NO_TRANSPOSE = ("you reshaped (B, T, d_model) straight to (B, H, T, d_k): the shape is "
                      "right, but 'head 0' now holds the first T * d_k numbers of the sentence, "
                      "pieces of several positions. Reshape to (B, T, H, d_k) first, then "
                      "transpose the axes 1 and 2")
SPLIT_INTERLEAVED = ("you cut the features as (d_k, H), so head h got every H-th feature: "
                     "reshape to (B, T, H, d_k) (head h = features h * d_k ... (h + 1) * d_k - 1), "
                     "then transpose the axes 1 and 2")
MERGE_NO_TRANSPOSE = ("you reshaped (B, H, T, d_k) straight to (B, T, H * d_k) without moving "
                      "the heads axis: each 'position' now holds pieces of several positions of "
                      "one head. Transpose to (B, T, H, d_k) first, then reshape")
MERGE_INTERLEAVED = ("you put the features in (d_k, H) order: position t must hold head 0's d_k "
                     "features, then head 1's, ...: (B, T, H, d_k) before the reshape")


def random_sizes(rng):
    B, H = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    T = H + int(rng.integers(1, 4))
    d_k = T + int(rng.integers(1, 4))  # B, H, T, d_k all different, and T != d_k
    return B, H, T, d_k


def split_mistakes(x, H):
    B, T, D = x.shape
    return [(x.reshape(B, H, T, D // H), SPLIT_NO_TRANSPOSE),
            (x.reshape(B, T, D // H, H).transpose(0, 3, 1, 2), SPLIT_INTERLEAVED)]


def merge_mistakes(x):
    B, H, T, d_k = x.shape
    return [(x.reshape(B, T, H * d_k), MERGE_NO_TRANSPOSE),
            (x.transpose(0, 2, 3, 1).reshape(B, T, H * d_k), MERGE_INTERLEAVED)]


@ex.check("split_heads: (B, T, d_model) -> (B, H, T, d_k), equal to the course's")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    got = need(mod, "split_heads")(x.copy(), H)
    expect_array(got, "numpy", "split heads")
    expect_shape(got, (B, H, T, d_k), "split heads", "the heads axis comes second: "
                 "(B, H, T, d_k) with d_k = d_model // num_heads")
    expect_close(got, course_split(x, H), "split heads", "head h at position t holds "
                 "x[b, t, h * d_k:(h + 1) * d_k]: reshape to (B, T, H, d_k), then transpose",
                 split_mistakes(x, H), atol=0.0, rtol=0.0)


@ex.check("merge_heads: (B, H, T, d_k) -> (B, T, H * d_k), equal to the course's")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, H, T, d_k))
    got = need(mod, "merge_heads")(x.copy())
    expect_array(got, "numpy", "merged heads")
    expect_shape(got, (B, T, H * d_k), "merged heads", "concatenate the heads along the "
                 "features: (B, T, H * d_k)")
    expect_close(got, course_merge(x), "merged heads", "position t holds head 0's features "
                 "at t, then head 1's, ...: transpose to (B, T, H, d_k), then reshape",
                 merge_mistakes(x), atol=0.0, rtol=0.0)


@ex.check("merge_heads undoes split_heads, and split_heads undoes merge_heads")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    heads = rng.standard_normal((B, H, T, d_k))
    split, merge = need(mod, "split_heads"), need(mod, "merge_heads")
    # A pair that both skip the transpose passes these round trips: the two checks above are
    # what catch it. These catch a merge that is not the inverse of the reader's own split.
    expect_close(merge(split(x.copy(), H)), x, "merge_heads(split_heads(x, H))",
                 "merge_heads must reverse exactly what split_heads does, in reverse order: "
                 "transpose back to (B, T, H, d_k), then reshape", atol=0.0, rtol=0.0)
    expect_close(split(merge(heads.copy()), H), heads, "split_heads(merge_heads(heads), H)",
                 "split_heads must reverse merge_heads: reshape to (B, T, H, d_k), then "
                 "transpose the axes 1 and 2", atol=0.0, rtol=0.0)


UNCHANGED = "split_heads leaves x unchanged"


@ex.check(UNCHANGED, zh="split_heads 不修改 x")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    got = call_on_read_only(need(mod, "split_heads"), {"x": x, "num_heads": H}, tr(
        "the caller still needs x as it was: x.reshape(...) and .transpose(...) return new views "
        "and leave x alone, while x.shape = ... or x[...] = ... change the caller's array",
        "调用者还要用原来的 x：x.reshape(...) 和 .transpose(...) 返回新的视图，不会改动 x；而 "
        "x.shape = ... 或 x[...] = ... 会改掉调用者的数组"))
    expect_close(got, course_split(x, H), "split heads", "head h at position t holds "
                 "x[b, t, h * d_k:(h + 1) * d_k]", split_mistakes(x, H), atol=0.0, rtol=0.0)


INVERSE = "merge_heads undoes split_heads, and split_heads undoes merge_heads"
ex.keeps({
    "split_heads: value": ("split_heads: (B, T, d_model) -> (B, H, T, d_k), equal to the "
                           "course's", INVERSE),
    "split_heads: input-unchanged": UNCHANGED,
    "merge_heads: value": ("merge_heads: (B, H, T, d_k) -> (B, T, H * d_k), equal to the "
                           "course's", INVERSE),
})
