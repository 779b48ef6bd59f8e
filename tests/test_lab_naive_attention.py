"""The per-head loop and the strided-views variant equal the course's batched NumPy
multi-head attention, for every kind of mask, in float64."""

import time

import numpy as np
import pytest

from aiayn.lab.naive_attention import (astype, best_times_ms, head_weights,
                                       multi_head_attention_loop, multi_head_attention_views)
from aiayn.np import masks as nm
from aiayn.np.attention import MultiHeadAttention
from conftest import rand, tokens

TOL = 1e-10
VARIANTS = [multi_head_attention_loop, multi_head_attention_views]


def masks():
    src = tokens(2, 6, 9, seed=3, pad_tail=[2, 0])
    tgt = tokens(2, 5, 9, seed=4, pad_tail=[1, 0])
    return {
        "none": (5, 5, None),
        "padding": (5, 6, nm.padding_mask(src, 0)),
        "causal": (5, 5, nm.causal_mask(5)),
        "target": (5, 5, nm.target_mask(tgt, 0)),
        "per_head": (5, 5, np.random.default_rng(7).random((2, 4, 5, 5)) < 0.6),
        # query 2 sees no key at all: zero weights, and a zero output from every head
        "all_masked_row": (5, 5, np.tril(np.ones((2, 1, 5, 5), dtype=bool)) & (np.arange(5) != 2)[:, None]),
    }


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", list(masks()))
def test_equals_batched(variant, name):
    T_q, T_k, mask = masks()[name]
    mha = MultiHeadAttention(16, 4)
    x, mem = rand(2, T_q, 16, seed=1), rand(2, T_k, 16, seed=2)
    out, weights = mha(x, mem, mem, mask)
    out2, weights2 = variant(mha, x, mem, mem, mask)
    assert out2.shape == out.shape == (2, T_q, 16)
    assert weights2.shape == weights.shape == (2, 4, T_q, T_k)
    assert np.abs(out2 - out).max() < TOL
    assert np.abs(weights2 - weights).max() < TOL
    assert not np.isnan(out2).any()


def test_heads_are_the_papers_blocks():
    """W_i^Q is a (d_model, d_k) block; swapping two heads' blocks changes the result,
    so the loop really uses head i's rows for head i."""
    mha = MultiHeadAttention(12, 3)
    w = head_weights(mha, 1)
    assert w["w_q"][0].shape == (12, 4) and w["w_v"][1].shape == (4,)
    np.testing.assert_array_equal(w["w_k"][0], mha.w_k.weight[4:8].T)
    x = rand(1, 4, 12, seed=5)
    before = multi_head_attention_loop(mha, x, x, x)[1]
    mha.w_q.weight[[0, 4]] = mha.w_q.weight[[4, 0]]
    after = multi_head_attention_loop(mha, x, x, x)[1]
    assert np.abs(before - after).max() > 1e-3


def test_astype_copies_and_casts():
    mha = MultiHeadAttention(8, 2)
    m32 = astype(mha, np.float32)
    assert all(p.dtype == np.float32 for _, p in m32.named_parameters())
    assert all(p.dtype == np.float64 for _, p in mha.named_parameters())  # original untouched
    x = rand(1, 3, 8).astype(np.float32)
    out32 = multi_head_attention_loop(m32, x, x, x)[0]
    assert out32.dtype == np.float32
    assert np.abs(out32 - mha(x.astype(np.float64), x, x)[0]).max() < 1e-5


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda f: f.__name__)
def test_bad_input_raises_like_the_module(variant):
    mha = MultiHeadAttention(8, 2)
    x = rand(2, 3, 8)
    with pytest.raises(ValueError, match="feature size"):
        variant(mha, rand(2, 3, 6), x, x)
    with pytest.raises(ValueError, match="boolean"):
        variant(mha, x, x, x, np.ones((2, 1, 1, 3)))
    with pytest.raises(ValueError, match="does not broadcast"):
        variant(mha, x, x, x, np.ones((2, 1, 1, 4), dtype=bool))


def test_best_times_ms_times_every_variant_per_call():
    calls = []
    times = best_times_ms({"fast": lambda: calls.append("f"),
                           "slow": lambda: (calls.append("s"), time.sleep(0.003))}, calls=2, rounds=3)
    assert list(times) == ["fast", "slow"]
    assert calls.count("f") == calls.count("s") == 6  # calls x rounds each
    assert 3.0 <= times["slow"] < 1000 and times["fast"] < times["slow"]


def test_best_times_ms_with_the_process_clock_does_not_count_waiting():
    times = best_times_ms({"sleeps": lambda: time.sleep(0.02)}, rounds=2, clock=time.process_time)
    assert times["sleeps"] < 10  # CPU time of this process, not the 20 ms of wall time


def test_best_times_ms_stops_when_the_budget_is_spent():
    calls = []
    best_times_ms({"a": lambda: (calls.append("a"), time.sleep(0.01))}, rounds=50, budget_s=0.0)
    assert calls == ["a"]  # the first round always runs, no other
    calls.clear()
    best_times_ms({"a": lambda: calls.append("a")}, rounds=4, budget_s=10.0)
    assert len(calls) == 4  # a generous budget leaves the number of rounds alone
