"""aiayn.lab.score_scaling: saturation and gradients with and without the 1/sqrt(d_k) (§3.2.1)."""

import math

import pytest
import torch

from aiayn.lab.score_scaling import SATURATED, STATISTICS, score_gradients, spread, sweep


def test_every_statistic_finite_and_deterministic():
    first = score_gradients(16, scaled=True, seed=3, n_rows=50)
    assert set(first) == set(STATISTICS)
    assert all(math.isfinite(value) for value in first.values())
    assert score_gradients(16, scaled=True, seed=3, n_rows=50) == first
    assert score_gradients(16, scaled=True, seed=4, n_rows=50) != first


def test_scaling_is_the_only_difference():
    # d_k = 1: sqrt(d_k) = 1, so both settings see the same inputs and compute the same thing.
    assert score_gradients(1, scaled=False, seed=0, n_rows=40) == score_gradients(1, scaled=True, seed=0, n_rows=40)


@pytest.mark.parametrize("scaled", [False, True])
def test_gradients_match_the_softmax_jacobian(scaled):
    # One row, so every median is that row's value. With w = softmax(z) and loss sum_j w_j v_j:
    # dL/dz = w * (v - w.v), dL/dq = dL/dz @ K / c, dL/dK = dL/dz^T q / c, c = sqrt(d_k) or 1.
    d_k, n_keys, seed = 8, 5, 11
    stats = score_gradients(d_k, scaled, seed, n_rows=1, n_keys=n_keys)
    g = torch.Generator().manual_seed(seed)  # the same draws, in the same order
    q = torch.randn(1, 1, d_k, generator=g, dtype=torch.float64)[0, 0]
    k = torch.randn(1, n_keys, d_k, generator=g, dtype=torch.float64)[0]
    v = torch.randn(1, n_keys, 1, generator=g, dtype=torch.float64)[0, :, 0]
    c = math.sqrt(d_k) if scaled else 1.0
    w = torch.softmax(k @ q / c, dim=0)
    grad_z = w * (v - w @ v)
    assert stats["grad_z_median"] == pytest.approx(float(grad_z.norm()), rel=1e-12)
    assert stats["grad_q_median"] == pytest.approx(float((grad_z @ k / c).norm()), rel=1e-12)
    assert stats["grad_k_median"] == pytest.approx(float(grad_z.norm() * q.norm() / c), rel=1e-12)
    assert stats["max_weight"] == pytest.approx(float(w.max()), rel=1e-12)
    assert stats["entropy"] == pytest.approx(float(-(w * w.log()).sum()), rel=1e-12)
    assert stats["saturated"] == float(w.max() > SATURATED)


def test_without_scaling_rows_saturate_as_d_k_grows():
    unscaled = [score_gradients(d, False, seed=0, n_rows=300)["saturated"] for d in (4, 64, 1024)]
    scaled = [score_gradients(d, True, seed=0, n_rows=300)["saturated"] for d in (4, 64, 1024)]
    assert unscaled[0] < unscaled[1] < unscaled[2] and unscaled[2] > 0.5
    assert scaled == [0.0, 0.0, 0.0]


def test_percentiles_are_ordered():
    stats = score_gradients(64, scaled=False, seed=1, n_rows=200)
    assert stats["grad_q_p10"] <= stats["grad_q_median"] <= stats["grad_q_p90"]


def test_sweep_and_spread():
    results = sweep([4, 16], seeds=[0, 1, 2], n_rows=20)
    assert set(results) == {(False, 4), (False, 16), (True, 4), (True, 16)}
    assert all(len(values) == 3 for stats in results.values() for values in stats.values())
    assert results[True, 16]["entropy"][1] == score_gradients(16, True, 1, n_rows=20)["entropy"]
    assert spread([1.0, 3.0, 2.0]) == (2.0, 1.0, 3.0)
    # Correctly rounded whatever the Python: 3.11's sum() gives 0.9999999999999999 here, 3.12's 1.0.
    assert spread([0.1] * 10)[0] == 0.1 and spread([1e16, 1.0, -1e16])[0] == 1 / 3


@pytest.mark.parametrize("kwargs, match", [
    (dict(d_k=0, scaled=True, seed=0), "d_k must be a positive int"),
    (dict(d_k=4, scaled=True, seed=0, n_rows=0), "n_rows must be a positive int"),
    (dict(d_k=4, scaled=True, seed=0, n_keys=1), "n_keys=1"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        score_gradients(**kwargs)


def test_sweep_needs_a_seed():
    with pytest.raises(ValueError, match="seeds is empty"):
        sweep([4], seeds=[])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plot_saturation_draws_both_settings_per_panel(lang, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aiayn.lab.score_scaling import plot_saturation
    from aiayn.plotting import use_course_style

    use_course_style()  # the CJK font, for the Chinese labels
    monkeypatch.setenv("AIAYN_LANG", lang)
    d_ks = [4, 64]
    results = sweep(d_ks, seeds=[0, 1], n_rows=30)
    fig = plot_saturation(results, d_ks)
    left, right = fig.axes
    unscaled, scaled = (line.get_ydata() for line in right.lines[:2])
    assert list(unscaled) == [spread(results[False, d]["saturated"])[0] for d in d_ks]
    assert list(scaled) == [0.0, 0.0]
    assert len(left.lines) == 3 and left.lines[2].get_ydata()[0] == 0.1  # the uniform line, 1/10
    assert ("Share of saturated rows" if lang == "en" else "饱和行的比例") in right.get_title()
    plt.close(fig)
