"""Post-LN against Pre-LN (aiayn.experiments.after_pre_ln): the schedules are §5.3's with and without
the warm-up, the committed results file matches the code and its verdicts its runs, and the first
updates of a run repeat the committed ones. (Pre-LN itself, ``norm_first``, is tested with the
model: test_backprop_model, test_incremental_decoding, test_after_variants.)"""

import json

import pytest
import torch

from aiayn.experiments import after_decoder_only, after_rope
from aiayn.experiments import after_pre_ln as exp
from aiayn.experiments.after_common import COPY_MODEL, COPY_TASK
from aiayn.experiments.record import read_results
from aiayn.train.schedule import transformer_lr


def test_with_warm_up_the_schedule_is_the_papers_and_without_it_starts_at_the_peak():
    for step in (1, 50, 199, 200, 201, 300):
        assert exp.rate("warmup")(step) == pytest.approx(transformer_lr(step, 64, 200, 0.25), rel=1e-12)
        assert exp.rate("warmup_x4")(step) == pytest.approx(4 * transformer_lr(step, 64, 200, 0.25), rel=1e-12)
        assert exp.rate("no_warmup")(step) == pytest.approx(exp.PEAK * min(1.0, (200 / step) ** 0.5), rel=1e-12)
    assert exp.rate("no_warmup")(1) == exp.rate("warmup")(200) == pytest.approx(2.2e-3, rel=0.01)
    assert exp.rate("no_warmup_x4")(250) == pytest.approx(exp.rate("warmup_x4")(250), rel=1e-12)


def test_committed_results_match_the_code_and_their_verdicts_their_runs():
    record = read_results(exp.RESULTS)
    values = record["values"]
    assert record["command"] == "python -m aiayn.experiments.after_pre_ln"
    assert record["threads"] == 1 and record["code_changes"] == []
    assert (values["task"], values["model"], values["steps"], values["seeds"]) == (
        COPY_TASK, COPY_MODEL, exp.STEPS, list(exp.SEEDS))
    assert set(values["runs"]) == {f"{s}_{d}layers" for s in exp.SCHEDULES for d in exp.DEPTHS}
    for arms in values["runs"].values():
        for runs in arms.values():
            assert [r["seed"] for r in runs] == list(exp.SEEDS) and all(r["steps"] == exp.STEPS for r in runs)
    again = json.loads(json.dumps(exp.verdicts_of(values["runs"])))
    assert again == values["verdicts"]


def test_the_first_updates_reproduce_the_committed_run():
    """25 updates of the Pre-LN run without warm-up at four times the rate: the first logged loss.
    Another CPU rounds float32 sums in another order: 1e-4 relative."""
    committed = read_results(exp.RESULTS)["values"]["runs"]["no_warmup_x4_2layers"]["pre_ln"][0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = exp.run_one("no_warmup_x4", 2, True, 0, steps=25, score=False)
    finally:
        torch.set_num_threads(threads)
    assert fresh["loss_curve"][0][0] == committed["loss_curve"][0][0] == 25
    assert fresh["loss_curve"][0][1] == pytest.approx(committed["loss_curve"][0][1], rel=1e-4)
    assert fresh["parameters"] == committed["parameters"]


@pytest.mark.parametrize("command", [exp, after_rope, after_decoder_only], ids=lambda m: m.__name__.rsplit(".", 1)[1])
@pytest.mark.parametrize("argv", [["--steps", "0"], ["--seeds", "1", "1"], ["--seeds", "-1"]])
def test_command_line_refuses_bad_arguments(command, argv, capsys):
    """The copy-task commands share their command line (after_common.copy_arguments)."""
    assert command.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{command.PROG}: error:")
