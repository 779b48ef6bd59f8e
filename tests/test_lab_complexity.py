"""aiayn.lab.complexity: every MAC formula equals what torch.utils.flop_counter counts on the real
layer, and the live-tensor counter counts what is allocated and freed (the timer:
tests/test_lab_layer_timing.py)."""

import pytest
import torch

from aiayn.lab.complexity import KINDS, Layer, LiveTensorBytes, count_flops, macs, peak_bytes, table1_term


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 7, 16, 40])
def test_mac_formula_equals_the_flop_counter(kind, n):
    d, k, r = 16, 5, 7
    torch.manual_seed(0)
    layer = Layer(kind, d, k, r, heads=4)
    assert count_flops(layer, torch.randn(1, n, d)) == 2 * macs(kind, n, d, k, r)["total"]


def test_formulas_are_the_papers_where_the_paper_gives_them():
    n, d, k, r = 100, 64, 3, 9
    assert macs("recurrent", n, d)["total"] == 2 * n * d * d  # x W and h U
    assert macs("attention_alone", n, d)["total"] == 2 * n * n * d  # Q K^T and weights V
    assert macs("self_attention", n, d)["total"] == 4 * n * d * d + 2 * n * n * d
    assert macs("convolution", n, d, k)["total"] == table1_term("convolution", n, d, k) == k * n * d * d
    assert macs("separable", n, d, k)["total"] == table1_term("separable", n, d, k) == k * n * d + n * d * d
    # blocks of (r-1)/2 = 4 queries meet 4 + 8 keys: 12 per query instead of r = 9
    assert macs("restricted", n, d, r=r)["attention"] == 2 * n * 12 * d
    assert table1_term("self_attention", n, d) == n * n * d and table1_term("restricted", n, d, r=r) == r * n * d
    assert macs("torch_rnn", n, d) == macs("recurrent", n, d)  # the same layer, looping in C++
    # Table 1's two middle terms cross exactly at n = d
    assert macs("attention_alone", d, d)["total"] == macs("recurrent", d, d)["total"]


def test_live_tensor_bytes_follows_allocation_and_freeing():
    x = torch.ones(3000)  # exists before: never counted

    def work():
        a = torch.empty(1000)              # 4,000 bytes
        b = torch.empty(2000)              # 8,000: 12,000 alive
        view = b[10:].view(-1, 10)         # a view: no new memory
        b.add_(1.0)                        # in place: no new memory
        x.mul_(2.0)                        # in place on an input: no new memory
        del a                              # 8,000 alive
        c = torch.empty(500)               # 2,000: 10,000 alive
        del view, b
        return c                           # 2,000 bytes handed out
    with LiveTensorBytes() as tracker:
        out = work()
    assert (tracker.peak, tracker.live) == (12_000, 2_000)
    del out
    assert tracker.live == 0  # the finaliser ran when the returned tensor was freed
    assert peak_bytes(lambda: torch.empty(20) + torch.empty(20, 10)[:, 0]) == 80 + 800 + 80


def test_peak_bytes_of_attention_is_its_two_n_by_n_matrices():
    n, d = 256, 8
    x = torch.randn(1, n, d)
    peak = peak_bytes(lambda: Layer("attention_alone", d)(x))
    scores_and_weights = 2 * n * n * 4
    assert scores_and_weights <= peak <= scores_and_weights + 4 * n * d * 4


def test_bad_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="kind must be one of"):
        Layer("lstm", 8)
    with pytest.raises(ValueError, match="n must be a positive int"):
        macs("recurrent", 0, 8)
    with pytest.raises(ValueError, match="kind must be one of"):
        macs("lstm", 4, 8)
    with pytest.raises(ValueError, match="kind must be one of"):
        table1_term("lstm", 4, 8)
