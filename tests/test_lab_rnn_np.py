"""aiayn.lab.rnn_np: the NumPy Elman RNN equals the PyTorch one and torch.nn.RNN, and h_t
depends on x_1..x_t only."""

import numpy as np
import pytest
import torch
from torch import nn

from aiayn.lab.rnn_np import elman_rnn
from aiayn.lab.rnn_vs_attention import ElmanRNN


def weights_of(rnn: ElmanRNN):
    return [p.detach().numpy() for p in (rnn.w, rnn.cell.u, rnn.b)]


def test_numpy_equals_pytorch_and_nn_rnn_in_float64():
    torch.manual_seed(0)
    reference = nn.RNN(6, 5, nonlinearity="tanh", batch_first=True).double()
    rnn = ElmanRNN(6, 5).double().copy_from(reference)
    x = torch.randn(3, 9, 6, dtype=torch.float64)
    h0 = torch.randn(3, 5, dtype=torch.float64)
    ours = elman_rnn(x.numpy(), *weights_of(rnn), h0=h0.numpy())
    with torch.no_grad():
        expected, _ = reference(x, h0[None])
        np.testing.assert_allclose(ours, rnn(x, h0).numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours, expected.numpy(), rtol=0, atol=1e-12)
    assert ours.shape == (3, 9, 5)


def test_state_t_depends_on_the_inputs_up_to_t_only():
    rng = np.random.default_rng(0)
    w, u, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)) / 2, rng.standard_normal(4)
    x = rng.standard_normal((1, 6, 4))
    changed = x.copy()
    changed[0, 3] += 1.0
    diff = np.abs(elman_rnn(changed, w, u, b) - elman_rnn(x, w, u, b)).max(axis=-1)[0]
    assert np.all(diff[:3] == 0) and np.all(diff[3:] > 0)


def test_zero_initial_state_is_the_default():
    rng = np.random.default_rng(1)
    w, u, b, x = rng.standard_normal((3, 2)), rng.standard_normal((2, 2)), np.zeros(2), rng.standard_normal((2, 4, 3))
    np.testing.assert_array_equal(elman_rnn(x, w, u, b), elman_rnn(x, w, u, b, h0=np.zeros((2, 2))))


@pytest.mark.parametrize("x, w, u, name", [
    (np.zeros((4, 3)), np.zeros((3, 2)), np.zeros((2, 2)), "x"),
    (np.zeros((1, 4, 5)), np.zeros((3, 2)), np.zeros((2, 2)), "x"),
    (np.zeros((1, 4, 3)), np.zeros((3, 2)), np.zeros((3, 3)), "u"),
])
def test_bad_shapes_are_named(x, w, u, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        elman_rnn(x, w, u, np.zeros(2))
