"""aiayn.lab.path_length: the measured number of stacked layers that connects the two ends of a
sequence is Table 1's, exactly as the receptive fields predict; forward-mode (one column of the
Jacobian) and reverse-mode (the whole Jacobian) agree; the position-parallel recurrence is the
RNN after n sweeps; the autograd graph of a recurrent layer deepens with n, the others' not."""

import math

import pytest
import torch

from aiayn.lab.complexity import Layer
from aiayn.lab.path_length import (dependency_pattern, graph_depth, layer_stack, layers_to_connect,
                                   recurrent_sweep, table1_path_length)
from aiayn.lab.rnn_vs_attention import ElmanRNN, max_path_length

LENGTHS = [2, 5, 16, 33, 64]


def expected(kind: str, n: int, width: int | None) -> int:
    """Receptive-field arithmetic: how far one layer reaches, and how many layers span n - 1."""
    if kind == "self_attention":
        return 1
    if kind == "recurrent":
        return n  # one sweep brings x_0 into h_0, n - 1 more carry it to h_{n-1}
    if kind == "dilated":  # causal taps 0, k^l, .., (k-1) k^l: k^L positions after L layers
        return max(1, math.ceil(math.log(n) / math.log(width) - 1e-12))
    return math.ceil((n - 1) / ((width - 1) // 2)) if n > 1 else 1


@pytest.mark.parametrize("kind, width", [("self_attention", None), ("recurrent", None), ("convolution", 3),
                                         ("convolution", 9), ("dilated", 2), ("dilated", 3),
                                         ("restricted", 5), ("restricted", 33)])
def test_table1_path_length_is_the_receptive_field_arithmetic(kind, width):
    # integer arithmetic in the library, floating point here: exact powers (n = 9, 27, 81 with
    # k = 3; n = 2^j with k = 2) are where a rounding error would show
    assert [table1_path_length(kind, n, width) for n in range(1, 600)] == [
        expected(kind, n, width) for n in range(1, 600)]


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("kind, width", [("self_attention", None), ("recurrent", None),
                                         ("convolution", 3), ("convolution", 9), ("dilated", 2),
                                         ("dilated", 3), ("restricted", 5), ("restricted", 9)])
def test_layers_to_connect_is_tables_path_length(kind, width, n):
    measured = layers_to_connect(kind, n, width)
    assert measured == expected(kind, n, width)
    if kind != "dilated" and n > 1:  # the breadth-first count of the first chapter, in edges
        bfs = max_path_length(kind, n, width)
        assert measured == bfs + (kind == "recurrent")


def test_path_lengths_at_a_thousand_positions_do_not_underflow():
    # hundreds of layers: a dependency must stay a number far from zero, not vanish
    assert layers_to_connect("convolution", 1024, 9) == 256
    assert layers_to_connect("dilated", 1024, 3) == 7


@pytest.mark.parametrize("kind, width, layers, band", [("convolution", 5, 2, 4), ("restricted", 3, 3, 3)])
def test_dependency_pattern_is_a_band_that_widens_per_layer(kind, width, layers, band):
    pattern = dependency_pattern(kind, 12, layers, width)
    i = torch.arange(12)
    assert torch.equal(pattern, (i[:, None] - i[None, :]).abs() <= band)


def test_recurrent_dependency_pattern_is_the_last_s_inputs():
    pattern = dependency_pattern("recurrent", 8, 3)  # after 3 sweeps: x_{t-2}, x_{t-1}, x_t
    i = torch.arange(8)
    assert torch.equal(pattern, (i[:, None] - i[None, :] >= 0) & (i[:, None] - i[None, :] < 3))


@pytest.mark.parametrize("kind, width", [("convolution", 3), ("dilated", 2), ("restricted", 5)])
def test_forward_and_reverse_mode_agree(kind, width):
    n = 12
    L = layers_to_connect(kind, n, width)
    assert dependency_pattern(kind, n, L, width)[n - 1, 0]
    assert not dependency_pattern(kind, n, L - 1, width)[n - 1, 0]


def test_n_sweeps_of_the_recurrence_are_the_rnn():
    torch.manual_seed(0)
    rnn = ElmanRNN(4, 4).double()
    x = torch.randn(2, 7, 4, dtype=torch.float64)
    h = torch.zeros_like(x)
    for s in range(1, 8):
        h = recurrent_sweep(rnn, x, h)
        assert (h[:, :s] - rnn(x)[:, :s]).abs().max() <= 1e-12  # the first s states are final
    assert (h - rnn(x)).abs().max() <= 1e-12


def test_recurrent_stack_shares_one_cell():
    stack = layer_stack("recurrent", 4, None, torch.Generator().manual_seed(0))
    x = torch.randn(1, 5, 4, dtype=torch.float64)
    h0 = torch.randn(1, 5, 4, dtype=torch.float64)
    first, second = next(stack), next(stack)
    assert torch.equal(first(x, h0), second(x, h0))


def depth(kind: str, n: int) -> int:
    torch.manual_seed(0)
    return graph_depth(Layer(kind, 8, heads=2)(torch.randn(1, n, 8, requires_grad=True)))


@pytest.mark.parametrize("recurrent", ["recurrent", "torch_rnn"])  # the loop in Python or in C++
def test_only_the_recurrent_graph_deepens_with_n(recurrent):
    step = depth(recurrent, 32) - depth(recurrent, 16)  # 16 more steps
    assert step > 0 and depth(recurrent, 64) - depth(recurrent, 32) == 2 * step  # 32 more
    for kind in ("self_attention", "attention_alone", "convolution", "separable", "restricted"):
        assert depth(kind, 70) == depth(kind, 20), kind


def test_bad_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="kind must be one of"):
        layers_to_connect("lstm", 8)
    with pytest.raises(ValueError, match="width must be odd"):
        layers_to_connect("convolution", 8, 4)
    with pytest.raises(ValueError, match="reaches a neighbour"):
        layers_to_connect("dilated", 8, 1)
    with pytest.raises(ValueError, match="no autograd graph"):
        graph_depth(torch.ones(3))
