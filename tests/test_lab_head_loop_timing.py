"""aiayn.lab.head_loop_timing: the loop over heads against the batched module, in CPU time."""

import json
import time

import pytest
import torch

from aiayn.lab.head_loop_timing import (cpu_rounds_ms, main, measure, print_table, ratios,
                                        round_ratios, torch_heads_loop)
from aiayn.pt.attention import MultiHeadAttention


def test_the_torch_loop_computes_the_module():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).double()
    x = torch.randn(2, 7, 32, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(torch_heads_loop(mha, x), mha(x, x, x)[0], atol=1e-12)


def busy(ms):
    end = time.process_time() + ms / 1e3
    while time.process_time() < end:
        pass


def test_cpu_rounds_count_this_process_work_per_call_and_not_waiting():
    calls = []
    times = cpu_rounds_ms({"sleeps": lambda: (calls.append("s"), time.sleep(0.02)),
                           "works": lambda: (calls.append("w"), busy(5))}, calls=2, rounds=3, budget_s=60)
    assert [len(t) for t in times.values()] == [3, 3] and calls.count("s") == calls.count("w") == 6
    assert max(times["sleeps"]) < 5  # 20 ms asleep costs almost no CPU time
    assert all(4.5 < ms < 50 for ms in times["works"])  # per call, not per round of 2 calls


def test_cpu_rounds_stop_when_the_budget_is_spent():
    times = cpu_rounds_ms({"a": lambda: busy(2)}, calls=1, rounds=50, budget_s=1e-9)
    assert len(times["a"]) == 1  # the first round always runs, no other


def test_measure_keeps_every_round_and_the_minimum():
    values = measure(lengths=(4, 8), d_model=32, heads=4, budget_s=0.01, rounds=3)
    assert values["lengths"] == [4, 8]
    for library, variants in (("numpy", ("loop", "views", "course")), ("torch", ("loop", "batched"))):
        for variant in variants:
            per_length = values["rounds_ms"][library][variant]
            assert len(per_length) == 2 and all(1 <= len(r) <= 3 and min(r) > 0 for r in per_length)
            assert values[f"{library}_ms"][variant] == [min(r) for r in per_length]
    assert values["softmax_ms"] == {k: min(v) for k, v in values["softmax_rounds_ms"].items()}
    r = ratios(values)
    assert r["numpy_loop"][0] == values["numpy_ms"]["loop"][0] / values["numpy_ms"]["course"][0]


def test_round_ratios_pair_the_rounds():
    values = {"rounds_ms": {"torch": {"loop": [[2.0, 6.0, 4.0]], "batched": [[1.0, 2.0, 4.0]]}}}
    p10, median, p90 = round_ratios(values, "torch")[0]  # per round: 2, 3, 1
    assert median == 2.0 and p10 == pytest.approx(1.2) and p90 == pytest.approx(2.8)


def test_the_table_shows_minimum_and_spread(capsys):
    values = measure(lengths=(4,), d_model=32, heads=4, budget_s=0.01, rounds=2)
    print_table(values)
    out = capsys.readouterr().out
    assert "loop / batched" in out and "minimum CPU time" in out and "10th-90th" in out


@pytest.mark.parametrize("kwargs, match", [(dict(lengths=()), "lengths"), (dict(budget_s=0), "budget_s")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        measure(**kwargs)


def test_command_writes_a_results_file_with_load_and_spread(tmp_path, capsys):
    out = tmp_path / "heads_loop.json"
    assert main(["--out", str(out), "--budget", "0.01", "--lengths", "4"]) == 0
    record = json.loads(out.read_text())
    values = record["values"]
    assert values["lengths"] == [4] and values["rounds_ms"]["numpy"]["loop"][0]
    assert len(values["load_average"]["before"]) == len(values["load_average"]["after"]) == 3
    assert values["cpu_count"] >= 1 and "CPU time" in values["clock"]
    assert {"command", "commit", "machine", "threads", "seconds", "cpu_seconds"} <= set(record)
    assert "written to" in capsys.readouterr().out


def test_command_refuses_a_bad_budget_in_one_line(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "x.json"), "--budget", "0"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: --budget") and len(out.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()
