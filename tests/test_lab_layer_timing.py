"""aiayn.lab.layer_timing: the timer interleaves and reports every round with its spread, the
crossovers interpolate where the ratio passes one (once per round, too), and the product timer
measures the two shapes it names. Speeds are never asserted here (the experiment measures them)."""

import pytest
import torch

from aiayn.lab.complexity import Layer
from aiayn.lab.layer_timing import crossover, crossover_by_round, product_seconds, spread, time_layers


def test_spread_is_min_quartiles_max():
    assert spread([5, 1, 3, 2, 4]) == {"min": 1, "q1": 2, "median": 3, "q3": 4, "max": 5}
    assert spread([7.0]) == {"min": 7.0, "q1": 7.0, "median": 7.0, "q3": 7.0, "max": 7.0}
    with pytest.raises(ValueError, match="values must not be empty"):
        spread([])


def test_time_layers_interleaves_and_reports_every_round_with_its_spread():
    layers = {kind: Layer(kind, 8, heads=2) for kind in ("recurrent", "torch_rnn", "convolution")}
    result = time_layers(layers, torch.randn(1, 6, 8), rounds=3)
    assert set(result) == set(layers)
    for row in result.values():
        assert row["runs"] == len(row["cpu_s"]) == 3 and 0 < row["min_s"] <= row["median_s"]
        assert row["cpu_min_s"] == min(row["cpu_s"]) and row["cpu_max_s"] == max(row["cpu_s"])
        assert row["cpu_min_s"] <= row["cpu_q1_s"] <= row["cpu_median_s"] <= row["cpu_q3_s"] <= row["cpu_max_s"]
    assert time_layers(layers, torch.randn(1, 6, 8), rounds=50, budget_s=0.0)["recurrent"]["runs"] == 1
    with pytest.raises(ValueError, match="rounds must be a positive int"):
        time_layers(layers, torch.randn(1, 2, 8), rounds=0)


def test_crossover_interpolates_where_the_ratio_passes_one():
    ns = [16, 64, 256, 1024]
    assert crossover(ns, [1, 2, 8, 32], [2, 4, 4, 4]) == pytest.approx(128)  # log-log midpoint
    assert crossover(ns, [1, 1, 1, 1], [2, 2, 2, 2]) is None
    with pytest.raises(ValueError, match="same length"):
        crossover(ns, [1, 2], [2, 1])


def test_crossover_by_round_takes_each_round_across_the_lengths():
    ns = [16, 64, 256]
    a = [[1, 1], [2, 2], [8, 1]]  # round 0 rises past b, round 1 never does
    b = [[2, 2], [4, 4], [4, 4]]
    got = crossover_by_round(ns, a, b)
    assert got[0] == pytest.approx(crossover(ns, [1, 2, 8], [2, 4, 4])) and got[1] is None
    with pytest.raises(ValueError, match="same length"):
        crossover_by_round(ns, a[:2], b)


def test_product_seconds_times_a_matrix_vector_and_a_matrix_matrix_product():
    result = product_seconds(16, 32, rounds=3, calls=4)
    assert result["matrix_vector"]["macs"] == 16 * 16
    assert result["matrix_matrix"]["macs"] == 32 * 16 * 16
    for row in result.values():
        assert len(row["seconds"]) == 3 and 0 <= row["min"] <= row["median"] <= row["max"]
    with pytest.raises(ValueError, match="calls must be a positive int"):
        product_seconds(16, 32, calls=0)


def test_the_benchmark_prints_cpu_minimum_and_quartiles_of_both_recurrent_layers():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_rnn_vs_attention.py"
    run = subprocess.run([sys.executable, str(script), "--threads", "1", "--lengths", "8", "--d-model", "16",
                          "--heads", "2", "--rounds", "2", "--device", "cpu"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    header, row = run.stdout.splitlines()[-2:]
    assert "Elman, Python loop" in header and "torch.nn.RNN" in header and "self-attention" in header
    assert row.split()[0] == "8" and row.count("[") == 3 and "CPU time" in run.stdout
    bad = subprocess.run([sys.executable, str(script), "--d-model", "16", "--heads", "3"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
