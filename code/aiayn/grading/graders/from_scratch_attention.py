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
from ..language import tr
from ._modules import build, copy_weights, grads_of, head_dims, tensor, token_ids
from ._attention import (ALL_MASKED, GRADIENTS, MASK_HINT, MASKED, OUTPUT, OWN_ATTENTION,
                         SCALED, SHAPES, SUMS, attention_checks)

FILE = "from_scratch/transformer.py"

# Stage 1 -----------------------------------------------------------------------------------
attention = exercise("from_scratch/attention", FILE,
                     "stage 1: scaled dot-product attention (PyTorch)")
attention_checks(attention, "torch")
attention.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "value": (SUMS, SCALED, OUTPUT), "mask": MASKED,
    "all-masked": (ALL_MASKED, GRADIENTS), "own-attention": OWN_ATTENTION}.items()})

# Stage 2 -----------------------------------------------------------------------------------
mha = exercise("from_scratch/multi_head_attention", FILE,
               "stage 2: multi-head attention, all heads in one batched matmul")

TRANSPOSE_HINT = (
    "heads split without the transpose: x.view(B, H, T, d_k) cuts the sequence, not the features, "
    "into heads, so one 'position' mixes several tokens. Reshape to (B, T, H, d_k), then "
    "transpose(1, 2) to (B, H, T, d_k); merge with transpose(1, 2) then reshape(B, T, d_model)")


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


@mha.check("has w_q, w_k, w_v, w_o = nn.Linear(d_model, d_model)")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    reader_mha(mod, d_model, H, theirs)


@mha.check("self-attention equals the course's (same weights)")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    x = tensor(rng, B, int(rng.integers(3, 7)), d_model)
    result = mine(x, x, x)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailed("a pair (output, weights)", type(result).__name__,
                          "return self.w_o(merged heads) and the attention weights")
    out, weights = result
    want_out, want_weights = theirs(x, x, x)
    expect_shape(as_numpy(weights), tuple(want_weights.shape), "weights",
                 "weights are (B, H, T_q, T_k): one map per head")
    expect_close(out, want_out, "output", "project, split into heads, attend, merge, project "
                 "with w_o", transpose_mistakes(theirs, x, x, x))
    expect_close(weights, want_weights, "weights", TRANSPOSE_HINT)


@mha.check("permuting the tokens permutes the output (no position mixing)")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T = int(rng.integers(4, 7))
    x, perm = tensor(rng, B, T, d_model), torch.from_numpy(rng.permutation(T))
    expect_close(mine(x[:, perm], x[:, perm], x[:, perm])[0], mine(x, x, x)[0][:, perm],
                 "output for permuted tokens", "self-attention without a mask has no notion "
                 "of order: each output row must depend on its own token, not on its place. "
                 + TRANSPOSE_HINT)


@mha.check("cross-attention: T_q != T_k, keys and values from another sequence")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T_q = int(rng.integers(3, 6))
    query, memory = tensor(rng, B, T_q, d_model), tensor(rng, B, T_q + 2, d_model)
    expect_close(mine(query, memory, memory)[0], theirs(query, memory, memory)[0], "output",
                 "queries come from `query`, keys and values from `key` and `value`; split each "
                 "with its own length (x.size(1), or -1)", transpose_mistakes(
                     theirs, query, memory, memory))


@mha.check("the mask reaches the attention (True = may attend)")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    T = int(rng.integers(4, 7))
    x = tensor(rng, B, T, d_model)
    ids = token_ids(rng, B, T, 9, 0)
    ids[-1, -1] = 0  # a padded key, whatever the draw: the mask must matter
    mask = course_masks.padding_mask(ids, 0)
    _, want = theirs(x, x, x, mask)
    expect_close(mine(x, x, x, mask)[1], want, "weights", "pass the mask on to the attention",
                 [(theirs(x, x, x, ~mask)[1], MASK_HINT), (theirs(x, x, x)[1],
                  "the mask was ignored: pass it to scaled_dot_product_attention")])


@mha.check("gradients equal the course's for all four projections")
def _(mod, rng):
    B, H, d_model, theirs = pair(rng)
    mine = reader_mha(mod, d_model, H, theirs)
    x, target = tensor(rng, B, 5, d_model), tensor(rng, B, 5, d_model)
    for m in (mine, theirs):
        (m(x, x, x)[0] * target).sum().backward()
    for name, want in grads_of(theirs).items():
        got = grads_of(mine)[name]
        if got is None:
            raise CheckFailed(f"a gradient for {name}", "None", "every projection must be "
                              "used in forward, and nothing may be detached")
        expect_close(got, want, f"gradient of {name}", TRANSPOSE_HINT)


MHA_LOOP = "no loop over heads: 2 heads and 4 heads run as many lines"
MHA_OWN = "written with nn.Linear: no nn.MultiheadAttention inside"


@mha.check(MHA_LOOP, zh="不按头循环：2 个头与 4 个头运行的代码行数相同")
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
                             "对头的 Python 循环每个头都要把循环体跑一遍：把投影结果拆成多个头，"
                             "(B, T, d_model) -> (B, H, T, d_k)，再对所有头只调用一次 "
                             "scaled_dot_product_attention"))


@mha.check(MHA_OWN, zh="用 nn.Linear 写成：内部没有 nn.MultiheadAttention")
def _(mod, rng):
    B, H, d_model, _ = pair(rng)
    found = modules_of_type(build(mod, "MultiHeadAttention", d_model, H),
                            (nn.MultiheadAttention,))
    if found:
        raise CheckFailed(tr("no nn.MultiheadAttention", "没有 nn.MultiheadAttention"),
                          ", ".join(found),
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
masks = exercise("from_scratch/masks", FILE, "stage 3: padding, causal and target masks")


def causal_mistakes(T, padding=None):
    """The causal masks of the classic slips (AND ``padding``, for target_mask) and their hints."""
    ones = torch.ones(T, T, dtype=torch.bool)
    found = [
        (torch.tril(ones, diagonal=-1), "the diagonal is blocked: position i must attend to "
         "itself (j <= i, diagonal included). An off by one: tril's diagonal must be 0, not -1"),
        (torch.tril(ones, diagonal=1), "position i sees position i + 1, the next token, the very "
         "one it must predict. An off by one: tril's diagonal must be 0, not 1"),
        (torch.triu(ones, diagonal=1), "inverted: True marks the future. True must mean 'may "
         "attend': the past and the diagonal (torch.tril)"),
        (torch.triu(ones), "inverted: this is the mask of the future and the diagonal; use "
         "torch.tril")]
    if padding is None:
        return [(m[None, None], hint) for m, hint in found]
    return [(padding & m[None, None], "your causal part is wrong: " + hint) for m, hint in found]


def expect_bool(got, what):
    if getattr(got, "dtype", None) != torch.bool:
        raise CheckFailed(f"{what} of dtype torch.bool", f"{getattr(got, 'dtype', type(got))}",
                          "masks are boolean: compare (tokens != pad_id) or build with "
                          "dtype=torch.bool; a 0/1 float mask is not a condition")


@masks.check("padding_mask: bool (B, 1, 1, T), False exactly at padding")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))  # not always 0: pad_id is an argument
    ids = token_ids(rng, int(rng.integers(2, 5)), int(rng.integers(4, 8)), 12, pad_id)
    got = need(mod, "padding_mask")(ids, pad_id)
    expect_bool(got, "padding_mask")
    want = course_masks.padding_mask(ids, pad_id)
    expect_shape(got, tuple(want.shape), "padding_mask", "(B, T) -> (B, 1, 1, T): "
                 "tokens[:, None, None, :], so it broadcasts over heads and queries")
    expect_equal(got, want, "padding_mask", f"True where tokens != pad_id ({pad_id})",
                 [(~want, MASK_HINT + ": padding must be False, real tokens True")])


@masks.check("causal_mask: bool (1, 1, T, T), position i sees j <= i, diagonal included")
def _(mod, rng):
    T = int(rng.integers(4, 9))
    got = need(mod, "causal_mask")(T)
    expect_bool(got, "causal_mask")
    want = course_masks.causal_mask(T)
    expect_shape(got, (1, 1, T, T), "causal_mask", "add two leading axes: [None, None]")
    expect_equal(got, want, "causal_mask", "torch.tril(torch.ones(T, T, dtype=torch.bool))",
                 causal_mistakes(T))


@masks.check("target_mask: padding AND causal, (B, 1, T, T)")
def _(mod, rng):
    pad_id = int(rng.integers(0, 4))
    ids = token_ids(rng, int(rng.integers(2, 5)), int(rng.integers(4, 8)), 12, pad_id)
    got = need(mod, "target_mask")(ids, pad_id)
    expect_bool(got, "target_mask")
    pad, causal = course_masks.padding_mask(ids, pad_id), course_masks.causal_mask(ids.shape[1])
    want = pad & causal
    expect_shape(got, tuple(want.shape), "target_mask", "padding (B, 1, 1, T) & causal "
                 "(1, 1, T, T) broadcasts to (B, 1, T, T)")
    expect_equal(got, want, "target_mask", "padding_mask(tokens, pad_id) & causal_mask(T)", [
        (pad | causal, "use AND (&), not OR: a key is visible only if it is no padding AND not "
         "in the future"),
        (causal.expand_as(want), "padding is missing: AND the causal mask with the padding mask"),
        *causal_mistakes(ids.shape[1], pad)])


masks.keeps({
    "padding_mask: mask": "padding_mask: bool (B, 1, 1, T), False exactly at padding",
    "causal_mask: mask": "causal_mask: bool (1, 1, T, T), position i sees j <= i, diagonal "
                         "included",
    "target_mask: mask": "target_mask: padding AND causal, (B, 1, T, T)",
})

# Stage 4 -----------------------------------------------------------------------------------
pe = exercise("from_scratch/positional_encoding", FILE, "stage 4: sinusoidal positional encoding")


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


@pe.check("returns a float tensor of shape (max_len, d_model)")
def _(mod, rng):
    max_len, d_model = pe_dims(rng)
    got = need(mod, "positional_encoding")(max_len, d_model)
    if not (isinstance(got, torch.Tensor) and got.dtype.is_floating_point):
        raise CheckFailed("a floating-point tensor", f"{getattr(got, 'dtype', type(got))}",
                          "build the table with torch (float32 is fine); a NumPy table "
                          "becomes one with torch.from_numpy")
    expect_shape(got, (max_len, d_model), "table", "one row per position, one column per "
                 "feature: (max_len, d_model)")


@pe.check("equals the paper's sinusoids, sin on even and cos on odd columns")
def _(mod, rng):
    max_len, d_model = pe_dims(rng)
    got = need(mod, "positional_encoding")(max_len, d_model)
    pair_index = np.arange(d_model) // 2  # columns 2i and 2i + 1 share frequency i
    freq = 1.0 / 10000.0 ** (2 * pair_index / d_model)
    expect_close(got, sinusoidal_table(max_len, d_model), "table",
                 "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)", [
                     (pe_variant(max_len, d_model, freq, "swapped"), "sin and cos are swapped: "
                      "even columns (0, 2, ...) hold sin, odd columns cos"),
                     (pe_variant(max_len, d_model, freq, "halves"), "the paper interleaves: "
                      "column 2i is sin and column 2i + 1 is cos of the same frequency, not "
                      "all sines then all cosines"),
                     (pe_variant(max_len, d_model, 1.0 / 10000.0 ** (pair_index / d_model)),
                      "the exponent is 2i/d_model with i the pair index: arange(0, d_model, 2) "
                      "/ d_model, not arange(d_model // 2) / d_model"),
                     (pe_variant(max_len, d_model, 1.0 / 10000.0 ** (np.arange(d_model) / d_model)),
                      "columns 2i and 2i + 1 share ONE frequency, 1/10000^(2i/d_model): do not "
                      "use each column's own index in the exponent")],
                 atol=1e-4, rtol=1e-4)  # float32 is enough for a table of sines


pe.keeps({
    "positional_encoding: shape": "returns a float tensor of shape (max_len, d_model)",
    "positional_encoding: value": "equals the paper's sinusoids, sin on even and cos on odd "
                                  "columns",
})
