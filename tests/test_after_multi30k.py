"""The Multi30k experiments of "After the paper" (after_base, after_rmsnorm, after_swiglu,
after_gqa): each arm's results file pairs with the base file of the same commit and settings, its
verdicts are its runs', the key-value cache's bytes are those of its heads, RMSNorm's counted
costs are what the code counts, and the first updates of an arm's seed 0 repeat the committed ones."""

import json
import os
from pathlib import Path

import pytest
import torch

from aiayn.experiments import after_base, after_gqa, after_rmsnorm, after_swiglu
from aiayn.experiments.after_common import MULTI30K_METRICS, multi30k_data, multi30k_run, verdicts
from aiayn.experiments.record import read_results

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AIAYN_DATA") or ROOT.parent / "shared" / "data")
needs_data = pytest.mark.skipif(not (DATA / "multi30k").is_dir(), reason="Multi30k not available (set AIAYN_DATA)")
EXPERIMENTS = {"rmsnorm": after_rmsnorm, "swiglu": after_swiglu, "gqa": after_gqa}


def test_the_base_file_is_three_seeds_of_the_papers_model():
    record = read_results(after_base.RESULTS)
    values = record["values"]
    assert record["command"] == "python -m aiayn.experiments.after_base"
    assert record["threads"] == 1 and record["code_changes"] == []
    assert values["seeds"] == [0, 1, 2] and values["steps"] == 600 and values["config"] == "multi30k-cpu"
    for run in values["runs"]:
        assert run["changes"] == {} and len(run["loss_curve"]) == 600
        assert run["cache_bytes_per_token_and_layer"] == {"self": 2 * 4 * 32 * 4, "cross": 2 * 4 * 32 * 4}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_each_arm_pairs_with_the_base_of_its_commit_and_its_verdicts_are_its_runs(name):
    exp = EXPERIMENTS[name]
    record, base = read_results(exp.RESULTS), read_results(after_base.RESULTS)
    values = record["values"]
    assert record["command"] == exp.PROG and record["threads"] == 1 and record["code_changes"] == []
    assert values["base_commit"] == base["commit"] == record["commit"]
    assert values["arms"] == exp.ARMS and values["seeds"] == base["values"]["seeds"]
    for arm, runs in values["runs"].items():
        assert [r["seed"] for r in runs] == values["seeds"] and all(r["changes"] == exp.ARMS[arm] for r in runs)
    again = verdicts({arm: (runs, base["values"]["runs"]) for arm, runs in values["runs"].items()}, MULTI30K_METRICS)
    assert json.loads(json.dumps(again)) == values["verdicts"]


def test_grouped_heads_shrink_the_cache_by_their_share():
    values = read_results(after_gqa.RESULTS)["values"]
    for arm, kv in (("gqa_2", 2), ("mqa_1", 1)):
        for run in values["runs"][arm]:  # 2 (keys and values) x heads x d_k 32 x 4 bytes
            assert run["cache_bytes_per_token_and_layer"] == {"self": 2 * kv * 32 * 4, "cross": 2 * kv * 32 * 4}


def test_rms_norms_counted_costs_are_what_the_code_counts():
    committed = read_results(after_rmsnorm.RESULTS)["values"]["costs"]
    fresh = json.loads(json.dumps(after_rmsnorm.costs()))
    assert fresh == committed
    assert committed["arithmetic_per_element"]["layer"] == pytest.approx(7 + 4 / 128)
    assert committed["arithmetic_per_element"]["rms"] == pytest.approx(4 + 3 / 128)


@needs_data
@pytest.mark.parametrize("name, arm", [("rmsnorm", "rms"), ("swiglu", "swiglu"), ("gqa", "mqa_1")])
def test_the_first_updates_of_seed_0_reproduce_the_committed_run(name, arm):
    """Five updates of the arm's seed 0, the loss of each: the committed run's first five (another
    CPU rounds float32 sums in another order: 1e-4 relative)."""
    committed = read_results(EXPERIMENTS[name].RESULTS)["values"]["runs"][arm][0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = multi30k_run(committed["changes"], 0, multi30k_data(DATA), steps=5, decode=False)
    finally:
        torch.set_num_threads(threads)
    assert fresh["parameters"] == committed["parameters"]
    assert fresh["loss_curve"] == pytest.approx(committed["loss_curve"][:5], rel=1e-4)


def test_an_arm_without_its_base_file_says_which_command_writes_it(tmp_path, capsys):
    assert after_gqa.main(["--base", str(tmp_path / "none.json"), "--out", str(tmp_path / "gqa.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{after_gqa.PROG}: error: no results file") and err.count("\n") == 1
