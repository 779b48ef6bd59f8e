"""aiayn.lab.rnn_vs_attention: the RNN loop is torch.nn.RNN, the counts are right, the timer
returns what it promises. Speeds are never asserted here (benchmarks/ measures them)."""

import math

import pytest
import torch
from torch import nn

from aiayn.lab.rnn_vs_attention import (ElmanRNN, count_sequential_steps, max_path_length,
                                        table1_counts)
from aiayn.pt.attention import MultiHeadAttention


@pytest.mark.parametrize("bias", [True, False])
def test_elman_loop_equals_torch_rnn_float64(bias):
    torch.manual_seed(0)
    reference = nn.RNN(6, 5, nonlinearity="tanh", batch_first=True, bias=bias).double()
    ours = ElmanRNN(6, 5).double().copy_from(reference)
    x = torch.randn(3, 7, 6, dtype=torch.float64)
    h0 = torch.randn(3, 5, dtype=torch.float64)
    expected, last = reference(x, h0[None])
    got = ours(x, h0)
    assert got.shape == (3, 7, 5)
    assert (got - expected).abs().max().item() <= 1e-10
    assert (got[:, -1] - last[0]).abs().max().item() <= 1e-10


def test_elman_zero_initial_state_is_the_default():
    torch.manual_seed(1)
    reference = nn.RNN(4, 4, batch_first=True).double()
    ours = ElmanRNN(4, 4).double().copy_from(reference)
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    assert (ours(x) - reference(x)[0]).abs().max().item() <= 1e-10


def test_elman_state_depends_only_on_the_past():
    torch.manual_seed(2)
    rnn = ElmanRNN(4, 4).double()
    x = torch.randn(1, 6, 4, dtype=torch.float64)
    changed = x.clone()
    changed[:, 3:] += 1.0
    a, b = rnn(x), rnn(changed)
    assert torch.equal(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])


def test_copy_from_rejects_other_rnns():
    with pytest.raises(ValueError, match="nonlinearity"):
        ElmanRNN(4, 4).copy_from(nn.RNN(4, 4, nonlinearity="relu"))
    with pytest.raises(ValueError, match="weight_ih_l0"):
        ElmanRNN(4, 4).copy_from(nn.RNN(3, 4))


def test_elman_rejects_wrong_input():
    with pytest.raises(ValueError, match="x must be 3-D"):
        ElmanRNN(4, 4)(torch.randn(5, 4))
    with pytest.raises(ValueError, match="feature size 3"):
        ElmanRNN(4, 4)(torch.randn(1, 5, 3))


@pytest.mark.parametrize("T", [1, 2, 9, 33])
def test_sequential_steps_are_counted(T):
    x = torch.randn(2, T, 8)
    assert count_sequential_steps(ElmanRNN(8, 8), x) == T
    assert count_sequential_steps(MultiHeadAttention(8, 2), x) == 1


def test_counting_leaves_no_hook_behind():
    rnn, mha = ElmanRNN(8, 8), MultiHeadAttention(8, 2)
    x = torch.randn(1, 4, 8)
    count_sequential_steps(rnn, x)
    count_sequential_steps(mha, x)
    assert not rnn.cell._forward_hooks and not mha._forward_hooks
    with pytest.raises(ValueError, match="ElmanRNN or MultiHeadAttention"):
        count_sequential_steps(nn.Linear(8, 8), x)


@pytest.mark.parametrize("n", [1, 2, 5, 16, 100])
def test_path_lengths_of_table1(n):
    assert max_path_length("recurrent", n) == n - 1
    assert max_path_length("self_attention", n) == min(1, n - 1)
    # A centred kernel of width k reaches (k - 1) / 2 per layer: O(n / k) layers.
    assert max_path_length("convolution", n, 5) == math.ceil((n - 1) / 2)
    # A neighbourhood of size r reaches r / 2 per layer: O(n / r).
    assert max_path_length("restricted", n, 8) == math.ceil((n - 1) / 4)


def brute_force_diameter(kind, n, width):
    """Shortest paths from *every* position (Floyd-Warshall), to check the two-end shortcut."""
    from aiayn.lab.rnn_vs_attention import _neighbours
    inf = float("inf")
    d = [[0 if i == j else inf for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in _neighbours(kind, i, n, width):
            if j != i:
                d[i][j] = 1
    for m in range(n):
        for i in range(n):
            for j in range(n):
                d[i][j] = min(d[i][j], d[i][m] + d[m][j])
    return max(x for row in d for x in row if x < inf)


@pytest.mark.parametrize("kind,width", [("recurrent", None), ("self_attention", None),
                                        ("convolution", 3), ("convolution", 7),
                                        ("restricted", 2), ("restricted", 5)])
def test_two_end_search_equals_all_pairs(kind, width):
    for n in (1, 2, 7, 12):
        assert max_path_length(kind, n, width) == brute_force_diameter(kind, n, width)


def test_path_length_rejects_bad_arguments():
    with pytest.raises(ValueError, match="kind must be"):
        max_path_length("lstm", 4)
    with pytest.raises(ValueError, match="odd kernel width"):
        max_path_length("convolution", 4, 4)
    with pytest.raises(ValueError, match="neighbourhood width"):
        max_path_length("restricted", 4, None)
    with pytest.raises(ValueError, match="n must be a positive int"):
        max_path_length("recurrent", 0)


def test_table1_counts():
    counts = table1_counts(64, 32, k=3, r=8)
    assert counts["self_attention"] == (64 * 64 * 32, 1, 1)
    assert counts["recurrent"] == (64 * 32 * 32, 64, 63)
    assert counts["convolution"] == (3 * 64 * 32 * 32, 1, 63)
    assert counts["restricted"] == (8 * 64 * 32, 1, 16)


@pytest.mark.parametrize("B,T,d", [(1, 4, 8), (2, 16, 32), (3, 40, 16)])
def test_matmul_flops_match_the_formulas(B, T, d):
    from aiayn.lab.rnn_vs_attention import matmul_flops
    x = torch.randn(B, T, d)
    assert matmul_flops(ElmanRNN(d, d), x) == 2 * B * 2 * T * d * d
    assert matmul_flops(MultiHeadAttention(d, 4), x) == 2 * B * (4 * T * d * d + 2 * T * T * d)
