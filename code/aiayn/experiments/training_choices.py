"""The training chapter's choices, measured: batch size at equal tokens, warm-up length, and
how far apart the averaged checkpoints are (chapter training_multi30k, §5.1, §5.3, §6.1).

    python -m aiayn.experiments.training_choices --list
    python -m aiayn.experiments.training_choices --run batch_4000 batch_2000
    python -m aiayn.experiments.training_choices --all

Each run is ``aiayn-train --config multi30k-cpu --seed 0 --set ...`` (its ``train()``, so a
line of the chapter is exactly that command) and is scored as the chapter scores its own run:
the average of the last ``average_last`` checkpoints, its validation loss (cross-entropy per
target subword), and cased sacreBLEU of beam 4 on test_2016_flickr. One results file per run,
results/training_choices/<name>.json, with its provenance (``record.Recorder``); the models
stay under runs/training_choices/<name>/.
"""

import argparse
import contextlib
import functools
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from ..train.checkpoint import load_checkpoint
from ..train.cli import train
from .record import REPOSITORY, Job, read_results, run_recorded

BASE = "multi30k-cpu"
RESULTS_DIR = REPOSITORY / "results" / "training_choices"
RUNS_DIR = REPOSITORY / "runs" / "training_choices"


@dataclass(frozen=True)
class Choice:
    """One run: its name, what it changes in ``multi30k-cpu`` (``--set`` fields) and why."""

    name: str
    changes: dict
    question: str


# Every batch budget sees the same 600,000 padded tokens and averages the last 13% of its
# updates (5 checkpoints); warm-up is half of the run, as in multi30k-cpu.
CHOICES = [
    Choice("batch_4000", {"max_tokens": 4000, "max_steps": 150, "warmup_steps": 75, "checkpoint_every": 5},
           "batch budget: 150 updates of 4,000 tokens"),
    Choice("batch_2000", {"max_tokens": 2000, "max_steps": 300, "warmup_steps": 150, "checkpoint_every": 10},
           "batch budget: 300 updates of 2,000 tokens"),
    Choice("batch_1000", {}, "batch budget: 600 updates of 1,000 tokens (multi30k-cpu as is: the chapter's run)"),
    # Peak rate 0.24 * 128^-0.5 * 50^-0.5 = 3.0e-3 after 50 updates, instead of 2.0e-3 after 300.
    Choice("warmup_50", {"warmup_steps": 50, "lr_factor": 0.24}, "fast warm-up: 50 updates"),
    # The last 3 checkpoints 100 updates apart (400, 500, 600) instead of 5 at 20 (520 ... 600).
    Choice("checkpoints_100", {"checkpoint_every": 100, "average_last": 3},
           "averaged checkpoints 100 updates apart"),
]
BY_NAME = {c.name: c for c in CHOICES}


def results_path(name: str, results_dir=RESULTS_DIR) -> Path:
    return Path(results_dir) / f"{name}.json"


def command(name: str) -> str:
    """The command that writes exactly this run's results file."""
    return f"python -m aiayn.experiments.training_choices --run {name}"


def train_argv(choice: Choice, out, data_dir=None, quiet=True) -> list[str]:
    """``aiayn-train``'s arguments for this run (the chapter prints them)."""
    sets = [f"{k}={v}" for k, v in choice.changes.items()]
    return ["--config", BASE, "--seed", "0", "--out", str(out), "--device", "cpu",
            *(["--data-dir", str(data_dir)] if data_dir else []), *(["--quiet"] if quiet else []),
            *(["--set", *sets] if sets else [])]


def run_choice(choice: Choice, runs_dir=RUNS_DIR, data_dir=None, quiet=True) -> dict:
    """Trains, averages and scores one run (``aiayn-train``'s ``train()``); returns the values
    its results file stores."""
    out = Path(runs_dir) / choice.name
    with contextlib.redirect_stdout(io.StringIO()):  # train() prints its summary; we store it
        result = train(train_argv(choice, out, data_dir, quiet))
    history = json.loads((out / "history.json").read_text())
    return {"name": choice.name, "changes": choice.changes, "question": choice.question, "seed": 0,
            "steps": result["steps"], "scored": "average of the last checkpoints",
            "averaged": load_checkpoint(out / "averaged.pt")["averaged"],
            "val_loss": result["averaged_val_loss"], "last_val_loss": result["final_val_loss"],
            "train_loss": result["final_loss"], "bleu": result["bleu"],
            "bleu_lowercase": result["bleu_lowercase"], "signature": result["signature"],
            "beam_size": result["beam_size"], "test_set": "test_2016_flickr",
            "val_loss_curve": [[h["step"], h["val_loss"]] for h in history if "val_loss" in h],
            "train_seconds": result["train_seconds"], "decode_seconds": result["decode_seconds"],
            "tokens_per_s": result["tokens_per_s"]}


def load_results(results_dir=RESULTS_DIR) -> dict:
    """{name: values} of every run's committed results file (a missing file raises, naming the
    command that writes it)."""
    values = {}
    for choice in CHOICES:
        path = results_path(choice.name, results_dir)
        if not path.is_file():
            raise FileNotFoundError(f"no results file {path}: run `{command(choice.name)}`")
        values[choice.name] = read_results(path)["values"]
    return values


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m aiayn.experiments.training_choices",
                                description=__doc__.split("\n")[0], epilog="Runs: " + ", ".join(BY_NAME))
    p.add_argument("--run", nargs="+", metavar="NAME", help="the runs to do (see --list)")
    p.add_argument("--all", action="store_true", help="do every run")
    p.add_argument("--list", action="store_true", help="print the runs and exit")
    p.add_argument("--skip-existing", action="store_true", help="skip runs whose results file exists")
    p.add_argument("--results-dir", default=str(RESULTS_DIR), help="where results files go (default: %(default)s)")
    p.add_argument("--runs-dir", default=str(RUNS_DIR), help="where models go (default: %(default)s)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default 1, as the committed results)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    if args.list:
        for c in CHOICES:
            change = " ".join(f"{k}={v}" for k, v in c.changes.items()) or "(multi30k-cpu as is)"
            print(f"{c.name:<16} {change:<70} {c.question}")
        return 0
    unknown = [n for n in args.run or () if n not in BY_NAME]
    if unknown:
        p.error(f"unknown run {', '.join(unknown)}; choose from {', '.join(BY_NAME)} (or --all)")
    if not (args.run or args.all):
        p.error("say what to run: --run NAME ... or --all (--list shows the runs)")
    if args.threads < 1:
        p.error(f"--threads must be >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    names = list(BY_NAME) if args.all else args.run
    todo = [n for n in names if not (args.skip_existing and results_path(n, args.results_dir).exists())]
    jobs = [Job(name, command(name), results_path(name, args.results_dir),
                functools.partial(run_choice, BY_NAME[name], args.runs_dir, args.data_dir, quiet=args.quiet),
                lambda v: f"validation loss {v['val_loss']:.3f}, BLEU {v['bleu']:.2f}") for name in todo]
    return run_recorded("training_choices", jobs, quiet=args.quiet)


if __name__ == "__main__":
    sys.exit(main())
