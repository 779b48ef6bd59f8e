"""aiayn.lab.layer_norm_cost: the two LayerNorms agree, and the operator counts the chapter
residual_and_layer_norm states are what PyTorch runs."""

import torch
import torch.nn.functional as F

from aiayn.lab.layer_norm_cost import (RELABEL_ONLY, layer_norm_fused, layer_norm_written_out,
                                       operator_counts, operators)
from aiayn.pt.normalization import LayerNorm


def _inputs(dtype=torch.float32):
    torch.manual_seed(0)
    x = torch.randn(3, 5, 16, dtype=dtype, requires_grad=True)
    return x, torch.randn(16, dtype=dtype, requires_grad=True), torch.randn(16, dtype=dtype, requires_grad=True)


def test_written_out_equals_f_layer_norm_and_the_course_layer_norm_in_value_and_gradient():
    x, w, b = _inputs(torch.float64)
    norm = LayerNorm(16).double()
    with torch.no_grad():
        norm.weight.copy_(w)
        norm.bias.copy_(b)
    outputs = [f(x, w, b) for f in (layer_norm_written_out, layer_norm_fused)] + [norm(x)]
    for out in outputs[1:]:
        torch.testing.assert_close(out, outputs[0], rtol=0, atol=1e-12)
    grads = [torch.autograd.grad(out.square().sum(), x)[0] for out in outputs]
    for g in grads[1:]:
        torch.testing.assert_close(g, grads[0], rtol=0, atol=1e-10)


def test_f_layer_norm_is_one_operator_each_way_and_the_formula_is_a_chain():
    x, w, b = _inputs()
    fused_forward, fused_backward = operator_counts(layer_norm_fused, x, w, b)
    assert fused_forward == ["aten::layer_norm"] and fused_backward == ["aten::native_layer_norm_backward"]
    forward, backward = operator_counts(layer_norm_written_out, x, w, b)
    # mean, var, sub, add, sqrt, div, mul, add: one operator per step of the formula
    assert [n.removeprefix("aten::") for n in forward] == ["mean", "var", "sub", "add", "sqrt", "div", "mul", "add"]
    assert len(backward) > 2 * len(forward) and not set(forward + backward) & RELABEL_ONLY


def test_operators_counts_top_level_calls_only():
    a, w = torch.randn(4, 8), torch.randn(3, 8)
    # F.linear runs t and addmm inside: one operator counted, not the ones it calls.
    assert operators(lambda: F.linear(a, w)) == ["aten::linear"]
    assert operators(lambda: a.view(32)) == []  # relabelling only
