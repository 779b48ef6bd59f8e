"""Grader of the chapter "Attention in the model": the decoder's target mask in NumPy,
checked against ``aiayn.np.masks.target_mask`` on random padded batches (pad_id not always 0,
padding not always at the end) and on a batch without padding, where it is the causal mask."""

import numpy as np

from ...np import masks as course_masks
from ..compare import expect_array, expect_equal, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("attention_in_the_model/target_mask", "attention_in_the_model/target_mask.py",
              "target_mask: padding AND causal, (B, 1, T, T), True = may attend",
              zh="target_mask：填充掩码与因果掩码取 AND，形状 (B, 1, T, T)，True 表示可以关注")

OR = Text("you combined the two masks with OR (|): a key is then visible if it is not padding OR "
          "not in the future, so the decoder sees future tokens. Use AND (&): both must hold",
          "你用 OR（|）合并了两个掩码：这样一个键只要不是填充、或者不在未来，就能被看到，解码器于是"
          "看到了未来的词元。要用 AND（&）：两个条件都得满足")
UPPER = Text("your causal part is upper triangular (np.triu, or j >= i): position i sees the "
             "future and not the past. Keep the lower triangle, j <= i: np.tril",
             "你的因果部分是上三角（np.triu，或 j >= i）：位置 i 看到的是未来而不是过去。要保留"
             "下三角，j <= i：np.tril")
NO_DIAGONAL = Text("your causal part blocks the diagonal (off by one): position i must see "
                   "itself, j <= i, np.tril(..., k=0)",
                   "你的因果部分把对角线也屏蔽了（差了一位）：位置 i 必须能看到自己，j <= i，"
                   "np.tril(..., k=0)")
NEXT_TOKEN = Text("your causal part lets position i see i + 1, the next token, the one it must "
                  "predict (off by one): np.tril(..., k=0), not k=1",
                  "你的因果部分让位置 i 看到了 i + 1，也就是它要预测的下一个词元（差了一位）："
                  "应该是 np.tril(..., k=0)，不是 k=1")
QUERY_PADDING = Text("you masked padded queries (rows) instead of padded keys (columns): padding "
                     "must be blocked along the LAST axis, (tokens != pad_id)[:, None, None, :]",
                     "你屏蔽的是填充的查询（行），应该屏蔽填充的键（列）：填充要沿最后一维屏蔽，"
                     "(tokens != pad_id)[:, None, None, :]")
NO_PADDING = Text("padding is missing: AND the causal mask with "
                  "(tokens != pad_id)[:, None, None, :]",
                  "缺了填充部分：把因果掩码与 (tokens != pad_id)[:, None, None, :] 取 AND")
NO_CAUSAL = Text("the causal part is missing: a position sees the future. AND the padding mask "
                 "with np.tril(np.ones((T, T), dtype=bool))",
                 "缺了因果部分：每个位置都能看到未来。把填充掩码与 "
                 "np.tril(np.ones((T, T), dtype=bool)) 取 AND")
INVERTED = Text("your mask is inverted: True must mean 'may attend' (not padding, not the "
                "future), as in F.scaled_dot_product_attention's boolean attn_mask",
                "掩码整体反了：True 必须表示“可以关注”（不是填充，也不在未来），与 "
                "F.scaled_dot_product_attention 的布尔 attn_mask 相同")


def token_ids(rng, B, T, pad_id, padding_at_end=True):
    """(B, T) ids in 0..11 except pad_id, then padded: one full sentence, one padded."""
    ids = rng.integers(0, 11, (B, T))
    ids[ids == pad_id] = 11  # ids equal to pad_id only where we pad
    if padding_at_end:
        lengths = rng.integers(1, T, B)
        lengths[0] = T  # a sentence without padding...
        lengths[1] = int(rng.integers(1, T - 1))  # ...and one with at least two padded keys
        ids[np.arange(T)[None, :] >= lengths[:, None]] = pad_id
    else:
        ids[rng.random((B, T)) < 0.3] = pad_id
        ids[:, 0] = pad_id  # padding first too: the mask follows the ids, not a length
    return ids


FROM_LENGTHS = Text("you computed each sentence's length and blocked the keys after it: decide "
                    "from the ids, tokens != pad_id, since padding may stand anywhere (here it "
                    "also stands first)",
                    "你先算出每个句子的长度，再屏蔽它后面的键：要直接根据 id 判断，"
                    "tokens != pad_id，因为填充可以出现在任何位置（这里句首也有填充）")


def mistakes(ids, pad_id):
    T = ids.shape[1]
    pad = course_masks.padding_mask(ids, pad_id)
    shape = (ids.shape[0], 1, T, T)
    ones = np.ones((T, T), dtype=bool)
    lengths = (ids != pad_id).sum(axis=1)
    by_length = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
    found = [(by_length & np.tril(ones)[None, None], FROM_LENGTHS),
             (pad | np.tril(ones)[None, None], OR),
             (pad & np.triu(ones)[None, None], UPPER),
             (pad & np.tril(ones, -1)[None, None], NO_DIAGONAL),
             (pad & np.tril(ones, 1)[None, None], NEXT_TOKEN),
             ((ids != pad_id)[:, None, :, None] & np.tril(ones)[None, None], QUERY_PADDING),
             (np.broadcast_to(np.tril(ones), shape), NO_PADDING),
             (np.broadcast_to(pad, shape), NO_CAUSAL),
             (~(pad & np.tril(ones)[None, None]), INVERTED)]
    return [(np.broadcast_to(m, shape), hint) for m, hint in found]


def expect_mask(got, ids, pad_id):
    expect_array(got, "numpy", "target_mask")
    if got.dtype != bool:
        raise CheckFailed(tr("a mask of dtype bool", "布尔型（`dtype=bool`）的掩码"), str(got.dtype),
                          tr("masks are boolean: compare (tokens != pad_id) and build the "
                             "triangle with dtype=bool; a 0/1 number mask is not a condition",
                             "掩码是布尔值：比较 (tokens != pad_id)，用 dtype=bool 构造三角矩阵；"
                             "由 0/1 数值组成的掩码不是条件"))
    want = course_masks.target_mask(ids, pad_id)
    expect_shape(got, want.shape, "target_mask", tr(
        "padding (B, 1, 1, T) & causal (1, 1, T, T) broadcasts to (B, 1, T, T)",
        "填充 (B, 1, 1, T) & 因果 (1, 1, T, T) 广播成 (B, 1, T, T)"))
    expect_equal(got, want, "target_mask", tr(
        "entry [b, 0, i, j] is True when key j is not padding AND j <= i",
        "当键 j 不是填充并且 j <= i 时，元素 [b, 0, i, j] 为 True"), mistakes(ids, pad_id))


@ex.check("bool (B, 1, T, T), equal to the course's target_mask on a padded batch",
          zh="布尔型 (B, 1, T, T)，在有填充的批次上与课程的 target_mask 相同")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))  # not always 0: pad_id is an argument
    ids = token_ids(rng, int(rng.integers(3, 5)), int(rng.integers(5, 9)), pad_id)
    expect_mask(need(mod, "target_mask")(ids.copy(), pad_id), ids, pad_id)


@ex.check("without padding it is the causal mask, for every sentence",
          zh="没有填充时，每个句子的掩码都是因果掩码")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))
    ids = token_ids(rng, int(rng.integers(2, 4)), int(rng.integers(4, 8)), pad_id)
    ids[ids == pad_id] = 11  # no padding at all
    expect_mask(need(mod, "target_mask")(ids.copy(), pad_id), ids, pad_id)


@ex.check("follows the ids: padding anywhere, and a single position (T = 1)",
          zh="依据 id 判断：填充可在任意位置，也能处理只有一个位置的情况（T = 1）")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))
    ids = token_ids(rng, int(rng.integers(2, 4)), int(rng.integers(5, 8)), pad_id,
                    padding_at_end=False)
    expect_mask(need(mod, "target_mask")(ids.copy(), pad_id), ids, pad_id)
    one = ids[:, :1].copy()
    one[0, 0] = 11  # first sentence: one real token, which sees itself
    expect_mask(need(mod, "target_mask")(one.copy(), pad_id), one, pad_id)


FIRST = "bool (B, 1, T, T), equal to the course's target_mask on a padded batch"
ex.keeps({
    "target_mask: shape": FIRST,
    "target_mask: convention": FIRST,
    "target_mask: causal": "without padding it is the causal mask, for every sentence",
    "target_mask: padding": "follows the ids: padding anywhere, and a single position (T = 1)",
    "target_mask: and": FIRST,
})
