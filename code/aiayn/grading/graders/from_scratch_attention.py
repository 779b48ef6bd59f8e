"""Graders of the from-scratch chapter, stages 1-4: attention, multi-head attention, masks,
positional encoding. All grade ``exercises/from_scratch/transformer.py`` against ``aiayn.pt``
(and ``aiayn.np`` for the sinusoid table)."""

import numpy as np
import torch
from torch import nn

from ...np.embeddings import sinusoidal_table
from ...pt import attention as course
from ...pt import masks as course_masks
from ..calls import lines_run, modules_of_type
from ..compare import as_numpy, expect_close, expect_equal, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr
from ._modules import build, copy_weights, grads_of, head_dims, tensor, token_ids
from ._attention import (ALL_MASKED, GRADIENTS, MASK_HINT, MASKED, OUTPUT, OWN_ATTENTION,
                         SCALED, SHAPES, SUMS, attention_checks)

FILE = "from_scratch/transformer.py"

# Stage 1 -----------------------------------------------------------------------------------
attention = exercise("from_scratch/attention", FILE,
                     "stage 1: scaled dot-product attention (PyTorch)",
                     zh="第 1 步：缩放点积注意力（PyTorch）")
attention_checks(attention, "torch")
attention.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "value": (SUMS, SCALED, OUTPUT), "mask": MASKED,
    "all-masked": (ALL_MASKED, GRADIENTS), "own-attention": OWN_ATTENTION}.items()})

# Stage 2 -----------------------------------------------------------------------------------
mha = exercise("from_scratch/multi_head_attention", FILE,
               "stage 2: multi-head attention, all heads in one batched matmul",
               zh="第 2 步：多头注意力，所有头在一次批量矩阵乘法中算完")

TRANSPOSE_HINT = Text(
    "heads split without the transpose: x.view(B, H, T, d_k) cuts the sequence, not the features, "
    "into heads, so one 'position' mixes several tokens. Reshape to (B, T, H, d_k), then "
    "transpose(1, 2) to (B, H, T, d_k); merge with transpose(1, 2) then reshape(B, T, d_model)",
    "拆分多头时没有转置：x.view(B, H, T, d_k) 切开的是序列而不是特征，于是一个“位置”混进了好几个"
    "词元。先 reshape 成 (B, T, H, d_k)，再 transpose(1, 2) 得到 (B, H, T, d_k)；合并时先 "
    "transpose(1, 2)，再 reshape(B, T, d_model)")


def pair(rng):
    """A course MultiHeadAttention and the reader's, same weights, float64, eval mode."""
    B, H, d_k, d_model = head_dims(rng)
    theirs = course.MultiHeadAttention(d_model, H).double().eval()
    return B, H, d_model, theirs


def reader_mha(mod, d_model, H, theirs):
    mine = build(mod, "MultiHeadAttention", d_model, H)
    copy_weights(mine, theirs)
    return mine


def without_transpose(theirs, query, key, value, mask, split_ok, merge_ok):
    """What multi-head attention returns when splitting and/or merging skips the transpose."""
    H = theirs.num_heads

    def split(x):
        B, T, D = x.shape
        return course.split_heads(x, H) if split_ok else x.reshape(B, H, T, D // H)

    out, weights = course.scaled_dot_product_attention(
        split(theirs.w_q(query)), split(theirs.w_k(key)), split(theirs.w_v(value)), mask)
    B, _, T_q, d_k = out.shape
    out = course.merge_heads(out) if merge_ok else out.reshape(B, T_q, H * d_k)
    return theirs.w_o(out), weights


def transpose_mistakes(theirs, query, key, value, mask=None):
    return [(without_transpose(theirs, query, key, value, mask, s, m)[0], TRANSPOSE_HINT)
            for s, m in ((False, True), (True, False), (False, False))]


@mha.check("has w_q, w_k, w_v, w_o = nn.Linear(d_model, d_model)",
           zh="有 w_q、w_k、w_v、w_o，都是 nn.Linear(d_model, d_model)")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    reader_mha(mod, d_model, H, theirs)


@mha.check("self-attention equals the course's (same weights)",
           zh="自注意力与课程的实现一致（权重相同）")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    x = tensor(rng, B, int(rng.integers(3, 7)), d_model)
    result = mine(x, x, x)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailed(tr("a pair (output, weights)", "一对值 `(output, weights)`"),
                          type(result).__name__,
                          tr("return self.w_o(merged heads) and the attention weights",
                             "返回 self.w_o(合并后的多头) 和注意力权重"))
    out, weights = result
    want_out, want_weights = theirs(x, x, x)
    expect_shape(as_numpy(weights), tuple(want_weights.shape), "weights",
                 tr("weights are (B, H, T_q, T_k): one map per head",
                    "权重的形状是 (B, H, T_q, T_k)：每个头一张注意力图"))
    expect_close(out, want_out, "output", tr(
        "project, split into heads, attend, merge, project with w_o",
        "投影，拆成多个头，做注意力，合并，再用 w_o 投影"), transpose_mistakes(theirs, x, x, x))
    expect_close(weights, want_weights, "weights", TRANSPOSE_HINT)


@mha.check("permuting the tokens permutes the output (no position mixing)",
           zh="打乱词元的顺序，输出也按同样的方式打乱（不同位置互不混杂）")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T = int(rng.integers(4, 7))
    x, perm = tensor(rng, B, T, d_model), torch.from_numpy(rng.permutation(T))
    expect_close(mine(x[:, perm], x[:, perm], x[:, perm])[0], mine(x, x, x)[0][:, perm],
                 tr("output for permuted tokens", "打乱顺序的词元的输出"), Text(
                     "self-attention without a mask has no notion of order: each output row "
                     "must depend on its own token, not on its place. ",
                     "不带掩码的自注意力不知道顺序：输出的每一行只能取决于它自己的词元，而不是它所在"
                     "的位置。") + TRANSPOSE_HINT)


@mha.check("cross-attention: T_q != T_k, keys and values from another sequence",
           zh="交叉注意力：T_q != T_k，键和值来自另一个序列")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T_q = int(rng.integers(3, 6))
    query, memory = tensor(rng, B, T_q, d_model), tensor(rng, B, T_q + 2, d_model)
    expect_close(mine(query, memory, memory)[0], theirs(query, memory, memory)[0], "output", tr(
        "queries come from `query`, keys and values from `key` and `value`; split each with its "
        "own length (x.size(1), or -1)",
        "查询来自 `query`，键和值来自 `key` 和 `value`；拆分时各用各的长度（x.size(1)，或 -1）"),
        transpose_mistakes(theirs, query, memory, memory))


@mha.check("the mask reaches the attention (True = may attend)",
           zh="掩码传到了注意力里（True 表示可以关注）")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T = int(rng.integers(4, 7))
    x = tensor(rng, B, T, d_model)
    ids = token_ids(rng, B, T, 9, 0)
    ids[-1, -1] = 0  # a padded key, whatever the draw: the mask must matter
    mask = course_masks.padding_mask(ids, 0)
    _, want = theirs(x, x, x, mask)
    expect_close(mine(x, x, x, mask)[1], want, "weights", tr("pass the mask on to the attention",
                                                             "把掩码传给注意力"),
                 [(theirs(x, x, x, ~mask)[1], MASK_HINT), (theirs(x, x, x)[1], tr(
                     "the mask was ignored: pass it to scaled_dot_product_attention",
                     "掩码被忽略了：要把它传给 scaled_dot_product_attention"))])


@mha.check("gradients equal the course's for all four projections",
           zh="四个投影的梯度都与课程的实现一致")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    x, target = tensor(rng, B, 5, d_model), tensor(rng, B, 5, d_model)
    for m in (mine, theirs):
        (m(x, x, x)[0] * target).sum().backward()
    for name, want in grads_of(theirs).items():
        got = grads_of(mine)[name]
        if got is None:
            raise CheckFailed(tr(f"a gradient for {name}", f"{name} 有梯度"), "None", tr(
                "every projection must be used in forward, and nothing may be detached",
                "`forward` 里每个投影都要用到，而且不能 `detach` 任何东西"))
        expect_close(got, want, tr(f"gradient of {name}", f"{name} 的梯度"), TRANSPOSE_HINT)


MHA_LOOP = "no loop over heads: 2 heads and 4 heads run as many lines"
MHA_OWN = "written with nn.Linear: no nn.MultiheadAttention inside"


@mha.check(MHA_LOOP, zh="不用循环逐个处理头：2 个头与 4 个头运行的代码行数相同")
def _(mod, rng):
    d_model, lines = 8, {}
    x = tensor(rng, 2, 5, d_model)
    for H in (2, 4):
        mine = build(mod, "MultiHeadAttention", d_model, H)
        with torch.no_grad():
            lines[H] = lines_run(mine, x, x, x)
    if lines[2] != lines[4]:
        raise CheckFailed(tr("as many lines of your code for 4 heads as for 2",
                             "4 个头与 2 个头运行的代码行数相同"),
                          tr(f"{lines[2]} lines for 2 heads, {lines[4]} for 4",
                             f"2 个头运行 {lines[2]} 行，4 个头运行 {lines[4]} 行"),
                          tr("a Python loop over the heads runs its body once per head: split "
                             "the projections into heads, (B, T, d_model) -> (B, H, T, d_k), and "
                             "call scaled_dot_product_attention once on all of them",
                             "遍历头的 Python 循环，每个头都要把循环体跑一遍：把投影结果拆成多个头，"
                             "(B, T, d_model) -> (B, H, T, d_k)，再对所有头只调用一次 "
                             "scaled_dot_product_attention"))


@mha.check(MHA_OWN, zh="用 nn.Linear 写成：内部没有 nn.MultiheadAttention")
def _(mod, rng):
    B, H, d_model, _ = pair(rng)
    found = modules_of_type(build(mod, "MultiHeadAttention", d_model, H),
                            (nn.MultiheadAttention,))
    if found:
        raise CheckFailed(tr("no nn.MultiheadAttention", "没有 nn.MultiheadAttention"),
                          tr(", ", "、").join(found),
                          tr("writing multi-head attention is this stage: four nn.Linear "
                             "(w_q, w_k, w_v, w_o), split into heads, your "
                             "scaled_dot_product_attention, merge the heads",
                             "这一步就是要自己写多头注意力：四个 nn.Linear（w_q、w_k、w_v、w_o），"
                             "拆成多个头，调用你自己的 scaled_dot_product_attention，再合并各头"))


mha.keeps({
    "MultiHeadAttention: attributes": "has w_q, w_k, w_v, w_o = nn.Linear(d_model, d_model)",
    "MultiHeadAttention: value": (
        "self-attention equals the course's (same weights)",
        "permuting the tokens permutes the output (no position mixing)",
        "cross-attention: T_q != T_k, keys and values from another sequence",
        "gradients equal the course's for all four projections"),
    "MultiHeadAttention: mask": "the mask reaches the attention (True = may attend)",
    "MultiHeadAttention: no-head-loop": MHA_LOOP,
    "MultiHeadAttention: own-attention": MHA_OWN,
})

# Stage 3 -----------------------------------------------------------------------------------
masks = exercise("from_scratch/masks", FILE, "stage 3: padding, causal and target masks",
                 zh="第 3 步：填充掩码、因果掩码和目标掩码")

CAUSAL_SLIPS = [
    Text("the diagonal is blocked: position i must attend to itself (j <= i, diagonal "
         "included). An off by one: tril's diagonal must be 0, not -1",
         "对角线被屏蔽了：位置 i 必须能关注它自己（j <= i，包括对角线）。差了一位：`tril` 的 "
         "`diagonal` 应为 0，不是 -1"),
    Text("position i sees position i + 1, the next token, the very one it must predict. An off "
         "by one: tril's diagonal must be 0, not 1",
         "位置 i 看到了位置 i + 1，也就是它要预测的下一个词元。差了一位：`tril` 的 `diagonal` "
         "应为 0，不是 1"),
    Text("inverted: True marks the future. True must mean 'may attend': the past and the "
         "diagonal (torch.tril)",
         "方向反了：True 标出的是未来。True 必须表示“可以关注”：过去和对角线（torch.tril）"),
    Text("inverted: this is the mask of the future and the diagonal; use torch.tril",
         "方向反了：这是未来加对角线的掩码；要用 torch.tril")]


def causal_mistakes(T, padding=None):
    """The causal masks of the classic slips (AND ``padding``, for target_mask) and their hints."""
    ones = torch.ones(T, T, dtype=torch.bool)
    found = zip((torch.tril(ones, diagonal=-1), torch.tril(ones, diagonal=1),
                 torch.triu(ones, diagonal=1), torch.triu(ones)), CAUSAL_SLIPS)
    if padding is None:
        return [(m[None, None], hint) for m, hint in found]
    return [(padding & m[None, None], Text("your causal part is wrong: ", "因果部分不对：") + hint)
            for m, hint in found]


def expect_bool(got, what):
    if getattr(got, "dtype", None) != torch.bool:
        raise CheckFailed(tr(f"{what} of dtype torch.bool", f"dtype 为 torch.bool 的 {what}"),
                          f"{getattr(got, 'dtype', type(got))}",
                          tr("masks are boolean: compare (tokens != pad_id) or build with "
                             "dtype=torch.bool; a 0/1 float mask is not a condition",
                             "掩码是布尔值：比较 (tokens != pad_id)，或用 dtype=torch.bool 构造；"
                             "由 0/1 浮点数组成的掩码不是条件"))


@masks.check("padding_mask: bool (B, 1, 1, T), False exactly at padding",
             zh="padding_mask：布尔型 (B, 1, 1, T)，恰好在填充处为 False")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))  # not always 0: pad_id is an argument
    ids = token_ids(rng, int(rng.integers(2, 5)), int(rng.integers(4, 8)), 12, pad_id)
    got = need(mod, "padding_mask")(ids, pad_id)
    expect_bool(got, "padding_mask")
    want = course_masks.padding_mask(ids, pad_id)
    expect_shape(got, tuple(want.shape), "padding_mask", tr(
        "(B, T) -> (B, 1, 1, T): tokens[:, None, None, :], so it broadcasts over heads and "
        "queries", "(B, T) -> (B, 1, 1, T)：tokens[:, None, None, :]，这样才能在头和查询上广播"))
    expect_equal(got, want, "padding_mask", tr(f"True where tokens != pad_id ({pad_id})",
                                               f"tokens != pad_id（{pad_id}）处为 True"),
                 [(~want, MASK_HINT + Text(": padding must be False, real tokens True",
                                           "：填充处应为 False，真实词元处为 True"))])


@masks.check("causal_mask: bool (1, 1, T, T), position i sees j <= i, diagonal included",
             zh="causal_mask：布尔型 (1, 1, T, T)，位置 i 能看到 j <= i，包括对角线")
def _(mod, rng):
    T = int(rng.integers(4, 9))
    got = need(mod, "causal_mask")(T)
    expect_bool(got, "causal_mask")
    want = course_masks.causal_mask(T)
    expect_shape(got, (1, 1, T, T), "causal_mask", tr("add two leading axes: [None, None]",
                                                      "在前面加两个维：[None, None]"))
    expect_equal(got, want, "causal_mask", "torch.tril(torch.ones(T, T, dtype=torch.bool))",
                 causal_mistakes(T))


@masks.check("target_mask: padding AND causal, (B, 1, T, T)",
             zh="target_mask：填充掩码与因果掩码取 AND，形状 (B, 1, T, T)")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))
    ids = token_ids(rng, int(rng.integers(2, 5)), int(rng.integers(4, 8)), 12, pad_id)
    got = need(mod, "target_mask")(ids, pad_id)
    expect_bool(got, "target_mask")
    pad, causal = course_masks.padding_mask(ids, pad_id), course_masks.causal_mask(ids.shape[1])
    want = pad & causal
    expect_shape(got, tuple(want.shape), "target_mask", tr(
        "padding (B, 1, 1, T) & causal (1, 1, T, T) broadcasts to (B, 1, T, T)",
        "填充 (B, 1, 1, T) & 因果 (1, 1, T, T) 广播成 (B, 1, T, T)"))
    expect_equal(got, want, "target_mask", "padding_mask(tokens, pad_id) & causal_mask(T)", [
        (pad | causal, tr("use AND (&), not OR: a key is visible only if it is no padding AND "
                          "not in the future",
                          "要用 AND（&），不是 OR：一个键既不是填充、又不在未来，才能被看到")),
        (causal.expand_as(want), tr("padding is missing: AND the causal mask with the padding "
                                    "mask", "缺了填充部分：把因果掩码与填充掩码取 AND")),
        *causal_mistakes(ids.shape[1], pad)])


masks.keeps({
    "padding_mask: mask": "padding_mask: bool (B, 1, 1, T), False exactly at padding",
    "causal_mask: mask": "causal_mask: bool (1, 1, T, T), position i sees j <= i, diagonal "
                         "included",
    "target_mask: mask": "target_mask: padding AND causal, (B, 1, T, T)",
})

# Stage 4 -----------------------------------------------------------------------------------
pe = exercise("from_scratch/positional_encoding", FILE, "stage 4: sinusoidal positional encoding",
              zh="第 4 步：正弦位置编码")


def pe_variant(max_len, d_model, freq_of_column, layout="interleave"):
    pos = np.arange(max_len)[:, None]
    if layout == "halves":  # [sin of all pairs | cos of all pairs]
        freq = freq_of_column[0::2]
        return np.concatenate([np.sin(pos * freq), np.cos(pos * freq)], axis=1)
    angle = pos * freq_of_column
    table = np.empty((max_len, d_model))
    first, second = (np.sin, np.cos) if layout == "interleave" else (np.cos, np.sin)
    table[:, 0::2], table[:, 1::2] = first(angle[:, 0::2]), second(angle[:, 1::2])
    return table


def pe_dims(rng):
    return int(rng.integers(40, 80)), 2 * int(rng.integers(4, 11))


@pe.check("returns a float tensor of shape (max_len, d_model)",
          zh="返回形状为 (max_len, d_model) 的浮点张量")
def _(mod, rng):
    max_len, d_model = pe_dims(rng)
    got = need(mod, "positional_encoding")(max_len, d_model)
    if not (isinstance(got, torch.Tensor) and got.dtype.is_floating_point):
        raise CheckFailed(tr("a floating-point tensor", "浮点张量"),
                          f"{getattr(got, 'dtype', type(got))}",
                          tr("build the table with torch (float32 is fine); a NumPy table "
                             "becomes one with torch.from_numpy",
                             "用 torch 构造这张表（float32 就够了）；NumPy 的表可以用 "
                             "torch.from_numpy 转过来"))
    expect_shape(got, (max_len, d_model), "table", tr(
        "one row per position, one column per feature: (max_len, d_model)",
        "每个位置一行，每个特征一列：(max_len, d_model)"))


@pe.check("equals the paper's sinusoids, sin on even and cos on odd columns",
          zh="与论文的正弦编码相同：偶数列是正弦，奇数列是余弦")
def _(mod, rng):
    max_len, d_model = pe_dims(rng)
    got = need(mod, "positional_encoding")(max_len, d_model)
    pair_index = np.arange(d_model) // 2  # columns 2i and 2i + 1 share frequency i
    freq = 1.0 / 10000.0 ** (2 * pair_index / d_model)
    expect_close(got, sinusoidal_table(max_len, d_model), "table", tr(
        "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)",
        "PE[pos, 2i] = sin(pos / 10000^(2i/d_model))，PE[pos, 2i+1] 是同一角度的 cos"), [
        (pe_variant(max_len, d_model, freq, "swapped"), tr(
            "sin and cos are swapped: even columns (0, 2, ...) hold sin, odd columns cos",
            "正弦和余弦对调了：偶数列（0, 2, ...）放正弦，奇数列放余弦")),
        (pe_variant(max_len, d_model, freq, "halves"), tr(
            "the paper interleaves: column 2i is sin and column 2i + 1 is cos of the same "
            "frequency, not all sines then all cosines",
            "论文是交错排列的：第 2i 列是正弦，第 2i + 1 列是同一频率的余弦，不是先放全部正弦再放"
            "全部余弦")),
        (pe_variant(max_len, d_model, 1.0 / 10000.0 ** (pair_index / d_model)), tr(
            "the exponent is 2i/d_model with i the pair index: arange(0, d_model, 2) / d_model, "
            "not arange(d_model // 2) / d_model",
            "指数是 2i/d_model，i 是列对的编号：arange(0, d_model, 2) / d_model，不是 "
            "arange(d_model // 2) / d_model")),
        (pe_variant(max_len, d_model, 1.0 / 10000.0 ** (np.arange(d_model) / d_model)), tr(
            "columns 2i and 2i + 1 share ONE frequency, 1/10000^(2i/d_model): do not use each "
            "column's own index in the exponent",
            "第 2i 列和第 2i + 1 列共用同一个频率 1/10000^(2i/d_model)：不要在指数里用每一列自己的"
            "编号"))],
        atol=1e-4, rtol=1e-4)  # float32 is enough for a table of sines


pe.keeps({
    "positional_encoding: shape": "returns a float tensor of shape (max_len, d_model)",
    "positional_encoding: value": "equals the paper's sinusoids, sin on even and cos on odd "
                                  "columns",
})
