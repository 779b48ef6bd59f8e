"""The loss-spike experiment of the copy-task chapter: the spike rule by hand, the committed
results file against the code and the chapter's recipe, a tiny run and the command line."""

import json

import pytest
import torch

from aiayn.experiments import copy_spikes
from aiayn.experiments.record import read_results


def test_a_spike_is_a_rise_above_the_recent_lowest_loss_after_the_warm_up():
    losses = [3.0 - 0.01 * i for i in range(250)]  # falling: no spike
    assert copy_spikes.count_spikes(losses) == []
    losses[230:233] = [losses[229] + 0.6, losses[229] + 1.0, losses[229] + 0.7]  # one spike, 3 updates
    losses[245] = losses[244] + 0.6
    assert copy_spikes.count_spikes(losses) == [231]  # 246 is within the window of the first
    early = [1.0] * 150 + [2.0] + [1.0] * 99
    assert copy_spikes.count_spikes(early) == []  # during the warm-up: not counted
    assert copy_spikes.count_spikes(early, settled=100) == [151]
    assert copy_spikes.rises([1.0, 0.5, 0.7, 0.4], window=2, settled=1) == pytest.approx([-0.5, 0.2, -0.1])


def test_committed_results_match_the_code_and_hold_what_the_chapter_says():
    record = read_results(copy_spikes.RESULTS)
    values = record["values"]
    assert (values["task"], values["model"], values["recipe"]) == (copy_spikes.TASK, copy_spikes.MODEL, copy_spikes.RECIPE)
    assert record["command"] == "python -m aiayn.experiments.copy_spikes" and record["threads"] == 1
    runs = values["runs"]
    assert set(runs) == set(copy_spikes.CLIPPING)
    for name, seeds in runs.items():
        assert [r["seed"] for r in seeds] == list(range(12))
        for r in seeds:
            assert len(r["loss"]) == len(r["grad_norm"]) == values["steps"]
            assert r["spikes"] == copy_spikes.count_spikes(r["loss"])  # the rules, re-applied
            assert r["largest_rise"] == pytest.approx(max(copy_spikes.rises(r["loss"])), abs=1e-4)
            exact = {int(step): share for step, share in r["exact_match"].items()}
            assert r["first_exact"] == next((s for s in sorted(exact) if exact[s] == 1.0), None)
            assert r["clip"] == copy_spikes.CLIPPING[name]
    # The recorder reads the gradient the update applies: after clipping, at most 1.
    assert all(max(r["grad_norm"]) <= 1.0 + 1e-5 for r in runs["1.0"])


def test_the_first_updates_reproduce_the_committed_run():
    torch.set_num_threads(1)
    committed = read_results(copy_spikes.RESULTS)["values"]["runs"]["none"][0]
    ours = copy_spikes.run_one(seed=0, clip=None, steps=3)
    assert ours["loss"] == pytest.approx(committed["loss"][:3], rel=1e-4)  # other CPUs round differently
    assert ours["grad_norm"] == pytest.approx(committed["grad_norm"][:3], rel=1e-3)
    assert set(ours["exact_match"]) == {3} and ours["first_exact"] is None and ours["largest_rise"] == 0.0


def test_command_line_writes_a_record_and_refuses_bad_arguments(tmp_path, capsys):
    torch.set_num_threads(1)
    out = tmp_path / "spikes.json"
    assert copy_spikes.main(["--steps", "2", "--seeds", "0", "--out", str(out)]) == 0
    values = json.loads(out.read_text())["values"]
    assert [len(values["runs"][name]) for name in copy_spikes.CLIPPING] == [1, 1] and values["steps"] == 2
    capsys.readouterr()
    for argv in (["--steps", "0"], ["--seeds", "1", "1"], ["--seeds", "-1"]):
        assert copy_spikes.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("python -m aiayn.experiments.copy_spikes: error:")
