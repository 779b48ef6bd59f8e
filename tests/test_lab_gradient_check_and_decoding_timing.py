"""aiayn.lab.gradient_check (the backpropagation chapter's referees) and
aiayn.lab.decoding_timing (how the decoding benchmarks time and record)."""

import unicodedata

import numpy as np
import pytest

from aiayn.lab.decoding_timing import (DirtyTree, check_clean_tree, load_average, speedup,
                                       timed_rounds, translate_table)
from aiayn.lab.gradient_check import (autograd_gradients, autograd_saved_nbytes, finite_differences,
                                       sample_coordinates)


def test_autograd_gradients_of_a_linear_map():
    rng = np.random.default_rng(0)
    x, w, g = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal((4, 2))
    grad_x, grad_w = autograd_gradients(lambda x, w: x @ w.T, [x, w], g)
    np.testing.assert_allclose(grad_x, g @ w, atol=1e-14)
    np.testing.assert_allclose(grad_w, g.T @ x, atol=1e-14)
    with pytest.raises(ValueError, match="grad_out"):
        autograd_gradients(lambda x, w: x @ w.T, [x, w], g[:2])


def test_finite_differences_match_a_known_derivative_and_restore_the_input():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4))
    before = x.copy()
    coords = sample_coordinates(x.shape, 5, rng)
    slopes = finite_differences(lambda: float((np.sin(x) ** 2).sum()), x, coords)
    np.testing.assert_allclose(slopes, [np.sin(2 * before[i]) for i in coords], atol=1e-8)
    assert np.array_equal(x, before)  # moved in place, put back exactly
    with pytest.raises(ValueError, match="h must"):
        finite_differences(lambda: 0.0, x, coords, h=0)


def test_sample_coordinates_are_distinct_and_inside():
    coords = sample_coordinates((2, 3, 4), 24, np.random.default_rng(0))
    assert len(set(coords)) == 24 and all(0 <= c[0] < 2 and 0 <= c[2] < 4 for c in coords)
    with pytest.raises(ValueError, match="n must"):
        sample_coordinates((2, 2), 5, np.random.default_rng(0))


def test_timed_rounds_runs_every_variant_once_per_round_in_a_shuffled_order():
    calls = []
    groups = {g: {v: (lambda g=g, v=v: calls.append((g, v))) for v in ("a", "b")} for g in (1, 2)}
    times = timed_rounds(groups, rounds=6, seed=0)
    assert sorted(calls) == sorted([(g, v) for g in (1, 2) for v in ("a", "b")] * 6)
    assert all(len(times[g][v]["cpu_s"]) == 6 and len(times[g][v]["wall_s"]) == 6
               for g in (1, 2) for v in ("a", "b"))
    firsts = {calls[i][1] for i in range(0, len(calls), 2)}  # which variant of a group ran first
    assert firsts == {"a", "b"}, "the order within a group must vary from round to round"
    with pytest.raises(ValueError, match="rounds"):
        timed_rounds(groups, rounds=0)


def test_speedup_is_the_ratio_of_the_fastest_rounds_with_each_rounds_ratio():
    s = speedup([4.0, 3.0, 5.0], [1.0, 1.5, 1.0])
    assert s["speedup_cpu"] == 3.0
    assert s["speedup_cpu_per_round"] == [4.0, 2.0, 5.0]
    with pytest.raises(ValueError, match="one time per round"):
        speedup([1.0], [1.0, 2.0])


def test_a_dirty_tree_is_refused_unless_allowed_and_then_flagged():
    assert check_clean_tree([], allow_dirty=False) is True
    with pytest.raises(DirtyTree, match="--allow-dirty"):
        check_clean_tree(["code/aiayn/pt/model.py"], allow_dirty=False)
    assert check_clean_tree(["code/aiayn/pt/model.py"], allow_dirty=True) is False


def test_load_average_and_the_table(monkeypatch):
    assert len(load_average()) in (0, 3)
    values = {"uncached_cpu_s": [30.0, 31.5], "cached_cpu_s": [12.0, 12.5], "uncached_bleu": 21.7,
              "cached_bleu": 21.7, **speedup([30.0, 31.5], [12.0, 12.5])}
    monkeypatch.setenv("AIAYN_LANG", "en")
    lines = translate_table(values)
    assert lines[1].split() == ["without", "cache", "30.0", "31.5", "21.70"]
    assert lines[3].split()[1:] == ["2.5x", "(rounds:", "2.5x", "to", "2.5x)"]
    monkeypatch.setenv("AIAYN_LANG", "zh")
    zh = translate_table(values)
    prefix = zh[1][:zh[1].index("30.0")]
    columns = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in prefix)
    assert zh[1].startswith("不用缓存") and columns == lines[1].index("30.0")  # the columns align


def test_autograd_saved_nbytes_counts_what_backward_needs_and_not_the_parameters():
    import torch

    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    x = torch.randn(4, 5, dtype=torch.float64)
    # x @ w.T saves x (4 x 5) for dW; w is a parameter and excluded. tanh saves its output (4 x 3).
    assert autograd_saved_nbytes(lambda: torch.tanh(x @ w.T), [w]) == (4 * 5 + 4 * 3) * 8
    assert autograd_saved_nbytes(lambda: x @ w.T, [w]) == 4 * 5 * 8
