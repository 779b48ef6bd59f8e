"""SwiGLU (Shazeer, 2020): NumPy = PyTorch in float64 (forward, and the hand-written backward
against autograd), PyTorch = the formula written with torch.nn.functional, equal parameters at
two thirds of the width; and its experiment: the committed results file against the code, and a
re-run of its first updates."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_state
from aiayn.np.swiglu import SwiGLUFeedForward as NumpySwiGLU, sigmoid
from aiayn.pt.feedforward import PositionwiseFeedForward
from aiayn.pt.model import Transformer
from aiayn.pt.swiglu import SwiGLUFeedForward, equal_parameter_width
from conftest import rand, record_difference

TOL = 1e-12


def twin(d=16, d_ff=24):
    torch.manual_seed(0)
    pt = SwiGLUFeedForward(d, d_ff).double()
    np_ = NumpySwiGLU(d, d_ff)
    np_.load_state_dict(numpy_state(pt.state_dict()))
    return np_, pt


def test_numpy_equals_torch_forward_and_backward():
    np_ffn, pt_ffn = twin()
    x, upstream = rand(2, 5, 16, seed=1) * 2, rand(2, 5, 16, seed=2)
    xt = torch.tensor(x, requires_grad=True)
    (pt_ffn(xt) * torch.from_numpy(upstream)).sum().backward()
    np_ffn.train()
    out = np_ffn(x)
    grad_x = np_ffn.backward(upstream)
    grads = np_ffn.gradients()
    diffs = [np.abs(out - pt_ffn(xt).detach().numpy()).max(), np.abs(grad_x - xt.grad.numpy()).max(),
             *(np.abs(grads[k] - p.grad.numpy()).max() for k, p in pt_ffn.named_parameters())]
    record_difference("swiglu_numpy_vs_torch", max(diffs))
    assert max(diffs) < TOL


def test_torch_equals_the_formula():
    _, ffn = twin()
    x = torch.from_numpy(rand(3, 4, 16, seed=3))
    w, v, w2 = ffn.w_1.weight, ffn.v.weight, ffn.w_2.weight
    reference = (F.silu(x @ w.T) * (x @ v.T)) @ w2.T  # (Swish(x W) * (x V)) W2
    assert torch.allclose(ffn(x), reference, rtol=0, atol=TOL)
    assert torch.allclose(F.silu(x), x * torch.sigmoid(x), rtol=0, atol=TOL)


def test_sigmoid_does_not_overflow():
    z = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    with np.errstate(over="raise"):
        s = sigmoid(z)
    np.testing.assert_allclose(s, torch.sigmoid(torch.from_numpy(z)).numpy(), rtol=1e-15, atol=0)


@pytest.mark.parametrize("d_model, d_ff", [(128, 512), (512, 2048), (64, 256)])
def test_two_thirds_of_the_width_holds_the_relu_networks_weights(d_model, d_ff):
    width = equal_parameter_width(d_ff)
    relu = sum(p.numel() for p in PositionwiseFeedForward(d_model, d_ff).parameters())
    swiglu = sum(p.numel() for p in SwiGLUFeedForward(d_model, width).parameters())
    assert abs(swiglu - relu) <= d_ff + d_model + 3 * d_model  # the biases, and rounding to a whole width
    assert equal_parameter_width(512) == 341 and equal_parameter_width(2048) == 1365


def test_in_the_model_gradients_reach_every_gate():
    model = Transformer(TransformerConfig(11, 11, d_model=16, num_heads=2, num_layers=1, d_ff=16, ffn="swiglu"))
    src, tgt = torch.randint(4, 11, (2, 5)), torch.randint(4, 11, (2, 6))
    model(src, tgt).square().mean().backward()
    for layer in [*model.encoder.layers, *model.decoder.layers]:
        assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0 for p in layer.ffn.parameters())
