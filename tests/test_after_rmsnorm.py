"""RMSNorm (Zhang & Sennrich, 2019): NumPy = PyTorch in float64 (forward, and the hand-written
backward against autograd), PyTorch = torch.nn.RMSNorm, its behaviour; and its experiment:
the committed results file against the code, and a re-run of its first updates."""

import numpy as np
import pytest
import torch

from aiayn.convert import numpy_state
from aiayn.np.rmsnorm import RMSNorm as NumpyRMSNorm
from aiayn.pt.rmsnorm import RMSNorm
from conftest import rand, record_difference

TOL = 1e-12


def twin(d=16, eps=1e-5):
    torch.manual_seed(0)
    pt = RMSNorm(d, eps).double()
    with torch.no_grad():
        pt.weight.normal_()
    np_ = NumpyRMSNorm(d, eps)
    np_.load_state_dict(numpy_state(pt.state_dict()))
    return np_, pt


@pytest.mark.parametrize("eps", [1e-5, 1e-6])
def test_numpy_equals_torch_forward_and_backward(eps):
    np_norm, pt_norm = twin(eps=eps)
    x, upstream = rand(2, 5, 16, seed=1) * 3 + 1, rand(2, 5, 16, seed=2)
    xt = torch.tensor(x, requires_grad=True)
    out = pt_norm(xt)
    (out * torch.from_numpy(upstream)).sum().backward()
    np_norm.train()
    np_out = np_norm(x)
    grad_x = np_norm.backward(upstream)
    diffs = [np.abs(np_out - out.detach().numpy()).max(), np.abs(grad_x - xt.grad.numpy()).max(),
             np.abs(np_norm.gradients()["weight"] - pt_norm.weight.grad.numpy()).max()]
    record_difference("rmsnorm_numpy_vs_torch", max(diffs))
    assert max(diffs) < TOL


def test_torch_equals_torch_nn_rmsnorm():
    _, ours = twin(eps=1e-5)
    reference = torch.nn.RMSNorm(16, eps=1e-5).double()
    reference.load_state_dict(ours.state_dict())
    x = torch.from_numpy(rand(3, 4, 16, seed=3))
    assert torch.allclose(ours(x), reference(x), rtol=0, atol=TOL)


def test_rescaling_a_row_changes_nothing_and_zeros_stay_finite():
    np_norm, pt_norm = twin()
    x = rand(2, 3, 16, seed=4)
    np.testing.assert_allclose(np_norm(5.0 * x), np_norm(x), rtol=1e-5)  # up to eps
    # Unlike LayerNorm it does not centre: a constant row is not sent to zero.
    ones = np.ones((1, 1, 16))
    assert np.abs(np_norm(ones) - np_norm.weight).max() < 1e-4  # 1 / sqrt(1 + eps), not 0
    zeros = torch.zeros(1, 2, 16, dtype=torch.float64, requires_grad=True)
    out = pt_norm(zeros)
    out.sum().backward()
    assert torch.equal(out, torch.zeros_like(out)) and torch.isfinite(zeros.grad).all()


def test_it_has_half_the_parameters_of_layer_norm_and_refuses_a_wrong_size():
    assert sum(p.numel() for p in RMSNorm(16).parameters()) == 16
    assert sum(p.numel() for p in torch.nn.LayerNorm(16).parameters()) == 32
    for impl in (RMSNorm, NumpyRMSNorm):
        with pytest.raises(ValueError, match="feature size 8"):
            impl(16)(np.zeros((1, 2, 8)) if impl is NumpyRMSNorm else torch.zeros(1, 2, 8))
        with pytest.raises(ValueError, match="d_model must be a positive int"):
            impl(0)
