"""The training chapter's measured choices (aiayn.experiments.training_choices): the command line
fails clearly, every committed results file is complete, carries its provenance and matches its
run's definition, and the numbers its lab notebook (lab_training_runs) shows are those of the files. No training here:
the chapter's own run (multi30k-cpu, seed 0) is checked against batch_1000 by the notebook."""

import json
from pathlib import Path

import pytest

from aiayn.experiments.record import read_results
from aiayn.experiments.training_choices import (BY_NAME, CHOICES, command, load_results, main,
                                                results_path, train_argv)
from aiayn.train.configs import get_config
from command_line import exit_status  # tests/command_line.py

ROOT = Path(__file__).resolve().parents[1]
CPU = get_config("multi30k-cpu")


def run_main(*args) -> int:
    return exit_status(main, *args)


def test_command_line_lists_and_refuses_clearly(tmp_path, capsys):
    assert run_main("--list") == 0
    listed = capsys.readouterr().out
    assert all(c.name in listed for c in CHOICES) and "warmup_steps=50 lr_factor=0.24" in listed
    for args, message in ((["--run", "batch_9"], "unknown run batch_9"), ([], "say what to run"),
                          (["--all", "--threads", "0"], "--threads must be >= 1")):
        assert run_main(*args) == 2
        assert message in capsys.readouterr().err
    corrupt = tmp_path / "data" / "multi30k"
    corrupt.mkdir(parents=True)
    for name in ("train.en.gz", "train.de.gz"):
        (corrupt / name).write_bytes(b"not gzip")
    status = run_main("--run", "warmup_50", "--quiet", "--data-dir", str(tmp_path / "data"),
                      "--results-dir", str(tmp_path / "results"), "--runs-dir", str(tmp_path / "runs"))
    err = capsys.readouterr().err
    assert status == 2 and "error: " in err and "corrupt" in err and err.count("\n") == 1, err
    assert not (tmp_path / "results").exists()


def test_each_run_is_aiayn_train_with_its_set_fields():
    argv = train_argv(BY_NAME["warmup_50"], "runs/x")
    assert argv[:4] == ["--config", "multi30k-cpu", "--seed", "0"]
    assert argv[argv.index("--set") + 1:] == ["warmup_steps=50", "lr_factor=0.24"]
    assert "--set" not in train_argv(BY_NAME["batch_1000"], "runs/x")  # the configuration as is


def test_batch_budgets_see_the_same_tokens_and_average_the_same_share():
    budgets = [BY_NAME[n].changes for n in ("batch_4000", "batch_2000", "batch_1000")]
    tokens = {c.get("max_tokens", CPU.max_tokens) * c.get("max_steps", CPU.max_steps) for c in budgets}
    shares = {c.get("checkpoint_every", CPU.checkpoint_every) / c.get("max_steps", CPU.max_steps) for c in budgets}
    assert len(tokens) == 1 and len(shares) == 1


def test_every_run_has_a_complete_results_file_with_provenance():
    values = load_results()
    assert set(values) == set(BY_NAME)
    for choice in CHOICES:
        record = read_results(results_path(choice.name))
        v = record["values"]
        assert record["command"] == command(choice.name)
        assert record["threads"] == 1 and record["code_changes"] == [], choice.name
        assert v["name"] == choice.name and v["changes"] == choice.changes and v["seed"] == 0
        run = get_config("multi30k-cpu")
        assert v["steps"] == choice.changes.get("max_steps", run.max_steps)
        last = choice.changes.get("average_last", run.average_last)
        every = choice.changes.get("checkpoint_every", run.checkpoint_every)
        assert [int(p[5:-3]) for p in v["averaged"]] == [v["steps"] - every * k for k in reversed(range(last))]
        assert v["beam_size"] == 4 and v["test_set"] == "test_2016_flickr"
        assert "case:mixed" in v["signature"] and "tok:13a" in v["signature"]
        assert v["val_loss_curve"][-1][0] == v["steps"] and v["last_val_loss"] == v["val_loss_curve"][-1][1]
        assert 0 < v["bleu"] < 100 and 0 < v["val_loss"] < 10


def glued(notebook: Path) -> dict:
    """{key: text} of every glue(..., display=False) output of a committed notebook."""
    found = {}
    for cell in json.loads(notebook.read_text(encoding="utf8"))["cells"]:
        for output in cell.get("outputs", []):
            key = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if key:
                found[key] = output["data"]["application/papermill.record/text/plain"].strip("'\"")
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lab_notebook_shows_the_committed_numbers(lang):
    """The runs' tables live in the appendix page of the training chapter (lab_training_runs);
    the chapter itself states the findings and asserts them in hidden cells."""
    shown, values = glued(ROOT / "chapters" / lang / "lab_training_runs.ipynb"), load_results()
    for name in ("batch_4000", "batch_2000", "batch_1000", "warmup_50", "checkpoints_100"):
        assert shown[f"{name}_val_loss"] == f"{values[name]['val_loss']:.2f}", name
        assert shown[f"{name}_bleu"] == f"{values[name]['bleu']:.1f}", name
    assert shown["fast_warmup_early"] == f"{values['warmup_50']['val_loss_curve'][0][1]:.2f}"
    assert shown["usual_warmup_early"] == f"{values['batch_1000']['val_loss_curve'][0][1]:.2f}"
    for name in ("batch_4000", "batch_2000", "warmup_50"):
        assert shown[f"{name}_last_val_loss"] == f"{values[name]['last_val_loss']:.2f}", name
