"""Grader of the chapter "Common mistakes": a "fix the bug" exercise. The reader's file starts
as the chapter's ``merge_heads`` with ``.view`` after a transpose; the checks compare it with
``aiayn.pt.attention.merge_heads`` and undo ``aiayn.pt.attention.split_heads``, on shapes where
every axis has its own size so that a missing or wrong transpose gives different numbers."""

import torch

from ...pt.attention import merge_heads as course_merge
from ...pt.attention import split_heads
from ..compare import expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need

ex = exercise("common_mistakes/merge_heads", "common_mistakes/merge_heads.py",
              "fix the bug: merge_heads (B, H, T, d_k) -> (B, T, H * d_k)")

VIEW_HINT = ("after .transpose(1, 2) the tensor's memory is still in (B, H, T, d_k) order: "
             "only its strides changed, so .view cannot merge H and d_k. Use .reshape (it "
             "copies when it must) or .contiguous().view")
NO_TRANSPOSE = ("you reshaped (B, H, T, d_k) straight to (B, T, H * d_k) without moving the "
                "heads axis: the shape is right but each 'position' now holds pieces of "
                "several positions of one head. Transpose to (B, T, H, d_k) first")
WRONG_TRANSPOSE = ("you swapped the wrong axes: the heads axis (1) must move next to d_k, "
                   "(B, H, T, d_k) -> (B, T, H, d_k) is .transpose(1, 2)")


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
        raise CheckFailed("(B, T, H * d_k) from a (B, H, T, d_k) input",
                          f"RuntimeError: {first[:90]}", VIEW_HINT) from None


def mistakes(x):
    B, H, T, d_k = x.shape
    x = x.detach()
    return [(x.reshape(B, T, H * d_k), NO_TRANSPOSE),
            (x.transpose(2, 3).reshape(B, T, H * d_k), WRONG_TRANSPOSE),
            (x.permute(0, 2, 3, 1).reshape(B, T, H * d_k), "the features of one position "
             "must be head 0's d_k values, then head 1's, ...: (B, T, H, d_k) before the "
             "reshape, not (B, T, d_k, H)")]


@ex.check("(B, H, T, d_k) -> (B, T, H * d_k), equal to the course's merge_heads")
def _(mod, rng):
    x = random_heads(rng)
    got = merge(mod, x)
    expect_array(got, "torch", "merged heads")
    B, H, T, d_k = x.shape
    expect_shape(got, (B, T, H * d_k), "merged heads", "concatenate the heads along the "
                 "features: (B, T, H * d_k)")
    expect_close(got, course_merge(x), "merged heads",
                 "position t holds head 0's features at t, then head 1's, ...", mistakes(x))


@ex.check("undoes split_heads, and merges the output of attention, weights @ V")
def _(mod, rng):
    x = random_heads(rng)
    B, H, T, d_k = x.shape
    y = torch.from_numpy(rng.standard_normal((B, T, H * d_k)))
    expect_close(merge(mod, split_heads(y, H)), y, "merge_heads(split_heads(y))",
                 "split_heads views (B, T, d_model) as (B, T, H, d_k) and moves H forward; "
                 "merge_heads must do exactly the reverse", mistakes(split_heads(y, H)))
    # The round trip alone hides the .view bug: split_heads returns a transposed view, and
    # transposing it back restores contiguous memory. A matmul's output is laid out anew.
    weights = torch.softmax(torch.from_numpy(rng.standard_normal((B, H, T, T))), dim=-1)
    out = weights @ split_heads(y, H)
    try:
        got = merge(mod, out)
    except CheckFailed as failed:
        raise CheckFailed(failed.expected, failed.got, failed.hint + ". The round trip "
                          "merge_heads(split_heads(y)) works with .view, which is why this bug "
                          "survives tests that only check the round trip") from None
    expect_close(got, course_merge(out), "merged attention output",
                 "position t holds head 0's features at t, then head 1's, ...", mistakes(out))


@ex.check("gradients flow through it unchanged (a permutation of the values)")
def _(mod, rng):
    x = random_heads(rng, requires_grad=True)
    out = merge(mod, x)
    g = torch.from_numpy(rng.standard_normal(tuple(out.shape)))
    if getattr(out, "requires_grad", False):  # else the graph was cut: no gradient comes back
        (out * g).sum().backward()
    if x.grad is None:
        raise CheckFailed("a gradient for the input", "None", "stay in PyTorch: no .numpy(), "
                          ".detach() or torch.tensor(...) copies inside merge_heads")
    expect_close(x.grad, split_heads(g, x.shape[1]), "gradient of the input",
                 "the gradient of a rearrangement is the inverse rearrangement of the "
                 "incoming gradient; fix the forward pass first")


FIRST = "(B, H, T, d_k) -> (B, T, H * d_k), equal to the course's merge_heads"
ANY_INPUT = "undoes split_heads, and merges the output of attention, weights @ V"
ex.keeps({
    "merge_heads: shape": FIRST,
    "merge_heads: order": (FIRST, ANY_INPUT),
    "merge_heads: any-input": ANY_INPUT,
    "merge_heads: gradients": "gradients flow through it unchanged (a permutation of the values)",
})
