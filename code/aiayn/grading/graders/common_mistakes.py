"""Grader of the chapter "Common mistakes": a "fix the bug" exercise. The reader's file starts
as the chapter's ``merge_heads`` with ``.view`` after a transpose; the checks compare it with
``aiayn.pt.attention.merge_heads`` and undo ``aiayn.pt.attention.split_heads``, on shapes where
every axis has its own size so that a missing or wrong transpose gives different numbers."""

import torch

from ...pt.attention import merge_heads as course_merge
from ...pt.attention import split_heads
from ..compare import expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("common_mistakes/merge_heads", "common_mistakes/merge_heads.py",
              "fix the bug: merge_heads (B, H, T, d_k) -> (B, T, H * d_k)",
              zh="修复错误：merge_heads (B, H, T, d_k) -> (B, T, H * d_k)")

VIEW_HINT = Text("after .transpose(1, 2) the tensor's memory is still in (B, H, T, d_k) order: "
                 "only its strides changed, so .view cannot merge H and d_k. Use .reshape (it "
                 "copies when it must) or .contiguous().view",
                 ".transpose(1, 2) 之后，张量在内存里仍按 (B, H, T, d_k) 的顺序存放：变的只是步长"
                 "（stride），所以 .view 没法把 H 和 d_k 合并。改用 .reshape（必要时它会复制），"
                 "或者 .contiguous().view")
NO_TRANSPOSE = Text("you reshaped (B, H, T, d_k) straight to (B, T, H * d_k) without moving the "
                    "heads axis: the shape is right but each 'position' now holds pieces of "
                    "several positions of one head. Transpose to (B, T, H, d_k) first",
                    "你没有移动头所在的维，就把 (B, H, T, d_k) 直接 reshape 成了 (B, T, H * d_k)："
                    "形状对了，但每个“位置”装的是同一个头在几个位置上的片段。先转置成 "
                    "(B, T, H, d_k)")
WRONG_TRANSPOSE = Text("you swapped the wrong axes: the heads axis (1) must move next to d_k, "
                       "(B, H, T, d_k) -> (B, T, H, d_k) is .transpose(1, 2)",
                       "你交换错了维：头所在的维（1）要挪到 d_k 旁边，"
                       "(B, H, T, d_k) -> (B, T, H, d_k) 是 .transpose(1, 2)")
FEATURE_ORDER = Text("the features of one position must be head 0's d_k values, then head 1's, "
                     "...: (B, T, H, d_k) before the reshape, not (B, T, d_k, H)",
                     "一个位置的特征要先放头 0 的 d_k 个值，再放头 1 的，依此类推：reshape 之前"
                     "应是 (B, T, H, d_k)，不是 (B, T, d_k, H)")
HEAD_ORDER = Text("position t holds head 0's features at t, then head 1's, ...",
                  "位置 t 先放头 0 在 t 处的特征，再放头 1 的，依此类推")
MERGED = Text("merged heads", "合并后的多头")


def random_heads(rng, requires_grad=False):
    B, H = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    T = H + int(rng.integers(1, 4))
    d_k = T + int(rng.integers(1, 4))  # B, H, T, d_k all different
    x = torch.from_numpy(rng.standard_normal((B, H, T, d_k)))
    return x.requires_grad_() if requires_grad else x


def merge(mod, x):
    """The reader's merge_heads; a RuntimeError from .view becomes a lesson, not a traceback."""
    try:
        return need(mod, "merge_heads")(x)
    except RuntimeError as error:
        first = str(error).splitlines()[0]
        if "view" not in first:
            raise
        raise CheckFailed(tr("(B, T, H * d_k) from a (B, H, T, d_k) input",
                             "由 (B, H, T, d_k) 的输入得到 (B, T, H * d_k)"),
                          tr(f"RuntimeError: {first[:90]}", "抛出了异常：\n" + " " * 10
                             + f"RuntimeError: {first[:90]}"), VIEW_HINT) from None


def mistakes(x):
    B, H, T, d_k = x.shape
    x = x.detach()
    return [(x.reshape(B, T, H * d_k), NO_TRANSPOSE),
            (x.transpose(2, 3).reshape(B, T, H * d_k), WRONG_TRANSPOSE),
            (x.permute(0, 2, 3, 1).reshape(B, T, H * d_k), FEATURE_ORDER)]


@ex.check("(B, H, T, d_k) -> (B, T, H * d_k), equal to the course's merge_heads",
          zh="(B, H, T, d_k) -> (B, T, H * d_k)，与课程的 merge_heads 相同")
def _(mod, rng):
    x = random_heads(rng)
    got = merge(mod, x)
    expect_array(got, "torch", MERGED)
    B, H, T, d_k = x.shape
    expect_shape(got, (B, T, H * d_k), MERGED, tr(
        "concatenate the heads along the features: (B, T, H * d_k)",
        "沿特征维把各个头拼起来：(B, T, H * d_k)"))
    expect_close(got, course_merge(x), MERGED, HEAD_ORDER, mistakes(x))


@ex.check("undoes split_heads, and merges the output of attention, weights @ V",
          zh="能还原 split_heads 的结果，也能合并注意力的输出 weights @ V")
def _(mod, rng):
    x = random_heads(rng)
    B, H, T, d_k = x.shape
    y = torch.from_numpy(rng.standard_normal((B, T, H * d_k)))
    expect_close(merge(mod, split_heads(y, H)), y, "merge_heads(split_heads(y))", tr(
        "split_heads views (B, T, d_model) as (B, T, H, d_k) and moves H forward; merge_heads "
        "must do exactly the reverse",
        "split_heads 把 (B, T, d_model) 看成 (B, T, H, d_k)，再把 H 移到前面；merge_heads 要"
        "恰好反过来做"), mistakes(split_heads(y, H)))
    # The round trip alone hides the .view bug: split_heads returns a transposed view, and
    # transposing it back restores contiguous memory. A matmul's output is laid out anew.
    weights = torch.softmax(torch.from_numpy(rng.standard_normal((B, H, T, T))), dim=-1)
    out = weights @ split_heads(y, H)
    try:
        got = merge(mod, out)
    except CheckFailed as failed:
        raise CheckFailed(failed.expected, failed.got, failed.hint + tr(
            ". The round trip merge_heads(split_heads(y)) works with .view, which is why this "
            "bug survives tests that only check the round trip",
            "。往返一次 merge_heads(split_heads(y)) 用 .view 也能成功，所以只检查往返的测试"
            "发现不了这个错误")) from None
    expect_close(got, course_merge(out), tr("merged attention output", "合并后的注意力输出"),
                 HEAD_ORDER, mistakes(out))


@ex.check("gradients flow through it unchanged (a permutation of the values)",
          zh="梯度原样流过（只是把值重新排列）")
def _(mod, rng):
    x = random_heads(rng, requires_grad=True)
    out = merge(mod, x)
    g = torch.from_numpy(rng.standard_normal(tuple(out.shape)))
    if getattr(out, "requires_grad", False):  # else the graph was cut: no gradient comes back
        (out * g).sum().backward()
    if x.grad is None:
        raise CheckFailed(tr("a gradient for the input", "输入有梯度"), "None", tr(
            "stay in PyTorch: no .numpy(), .detach() or torch.tensor(...) copies inside "
            "merge_heads", "留在 PyTorch 里：merge_heads 里不要用 .numpy()、.detach() 或 "
            "torch.tensor(...) 复制"))
    expect_close(x.grad, split_heads(g, x.shape[1]), tr("gradient of the input", "输入的梯度"),
                 tr("the gradient of a rearrangement is the inverse rearrangement of the "
                    "incoming gradient; fix the forward pass first",
                    "重排操作的梯度，就是把传回来的梯度按相反的方式重排；先把前向传播改对"))


FIRST = "(B, H, T, d_k) -> (B, T, H * d_k), equal to the course's merge_heads"
ANY_INPUT = "undoes split_heads, and merges the output of attention, weights @ V"
ex.keeps({
    "merge_heads: shape": FIRST,
    "merge_heads: order": (FIRST, ANY_INPUT),
    "merge_heads: any-input": ANY_INPUT,
    "merge_heads: gradients": "gradients flow through it unchanged (a permutation of the values)",
})
