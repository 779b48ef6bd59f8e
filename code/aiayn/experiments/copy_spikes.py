"""Loss spikes on the reverse task (the copy-task chapter), with and without gradient clipping.

    python -m aiayn.experiments.copy_spikes                     # results/copy_task/spikes.json
    python -m aiayn.experiments.copy_spikes --steps 100 --seeds 0 --out /tmp/spikes.json

Trains the copy-task chapter's reverse model (2 + 2 layers, d_model 64, the paper's Adam,
schedule at a quarter of its rate, label smoothing 0.1) for ``--steps`` updates, once without
clipping and once with the gradient's norm clipped at 1, for each seed: seed k of both shares
the initial weights and the batches, so the two are compared as pairs. Every update's loss
(one batch) and gradient norm are kept, and the validation exact match every 100 updates.

Per run, two summaries the chapter compares (chosen on a first run of six seeds, then measured
on twelve): ``largest_rise``, the most the loss stood above the lowest loss of the ``WINDOW``
updates before it, after the warm-up (``SETTLED`` updates; until then the loss falls by more
than that anyway), and ``first_exact``, the first check at which every validation sequence came
out right (None if none did). A *spike* is an update whose rise is over ``RISE`` nats;
neighbouring spike updates count as one spike.
"""

import argparse
import sys

import torch

from ..config import TransformerConfig
from ..data.copy_task import CopyTask, greedy_exact_match
from ..lab.copy_training import GradientNorms
from ..pt.model import Transformer
from ..train.trainer import TrainConfig, Trainer
from .record import REPOSITORY, Recorder

PROG = "python -m aiayn.experiments.copy_spikes"
RESULTS = REPOSITORY / "results" / "copy_task" / "spikes.json"
TASK = {"vocab_size": 14, "min_len": 1, "max_len": 10}
HELD_OUT = {"num": 1000, "seed": 1, "max_share": 0.05}  # the first 500: validation
MODEL = {"src_vocab_size": 14, "tgt_vocab_size": 14, "d_model": 64, "num_heads": 4, "num_layers": 2,
         "d_ff": 256, "dropout": 0.0, "max_len": 64}
RECIPE = {"warmup_steps": 200, "lr_factor": 0.25, "label_smoothing": 0.1}
BATCH_SIZE, CHECK_EVERY = 128, 100
CLIPPING = {"none": None, "1.0": 1.0}
RISE, WINDOW, SETTLED = 0.5, 20, 200  # settled: after the warm-up, the rate at its peak


def rises(losses, window: int = WINDOW, settled: int = SETTLED) -> list[float]:
    """For each update after ``settled``: its loss minus the lowest loss of the ``window`` before."""
    return [losses[i] - min(losses[max(0, i - window):i]) for i in range(max(settled, 1), len(losses))]


def count_spikes(losses, rise: float = RISE, window: int = WINDOW, settled: int = SETTLED) -> list[int]:
    """The first update (1-based) of every spike in a list of per-update losses."""
    starts, last = [], None
    for i in range(max(settled, 1), len(losses)):
        if losses[i] - min(losses[max(0, i - window):i]) > rise:
            if last is None or i - last > window:
                starts.append(i + 1)
            last = i
    return starts


def run_one(seed: int, clip: float | None, steps: int) -> dict:
    """One reverse-task run of ``steps`` updates: per-update loss and gradient norm, and the
    validation exact match after every ``CHECK_EVERY`` updates."""
    task = CopyTask(**TASK, reverse=True)
    held = CopyTask(**TASK).held_out(**HELD_OUT)
    validation = held[:HELD_OUT["num"] // 2]
    torch.manual_seed(seed)
    trainer = Trainer(Transformer(TransformerConfig(**MODEL)),
                      TrainConfig(max_steps=1, **RECIPE, clip_grad_norm=clip, seed=seed, log_every=1, progress=False))
    norms = GradientNorms(trainer.optimizer)
    batches = task.batches(batch_size=BATCH_SIZE, num_batches=100, seed=seed, exclude=held)
    exact = {}
    while trainer.step < steps:
        trainer.config.max_steps = min(trainer.step + CHECK_EVERY, steps)
        trainer.fit(batches)
        exact[trainer.step] = greedy_exact_match(trainer.model, task, validation)
    norms.remove()
    losses = [h["loss"] for h in trainer.history]
    return {"seed": seed, "clip": clip, "loss": [round(x, 5) for x in losses],
            "grad_norm": [float(f"{x:.5g}") for x in norms.norms], "exact_match": exact,
            "spikes": count_spikes(losses), "largest_rise": max(rises(losses), default=0.0),
            "first_exact": next((step for step, share in exact.items() if share == 1.0), None)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=600, help="updates per run (default %(default)s)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(range(12)), help="seeds (default 0-11)")
    p.add_argument("--out", default=str(RESULTS), help="results file (default: %(default)s)")
    args = p.parse_args(argv)
    if args.steps < 1 or min(args.seeds) < 0 or len(set(args.seeds)) != len(args.seeds):
        print(f"{PROG}: error: need --steps >= 1 and distinct seeds >= 0, got --steps {args.steps} "
              f"--seeds {' '.join(map(str, args.seeds))}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        runs = {name: [run_one(seed, clip, args.steps) for seed in args.seeds] for name, clip in CLIPPING.items()}
    values = {"task": TASK, "held_out": HELD_OUT, "model": MODEL, "recipe": RECIPE, "batch_size": BATCH_SIZE,
              "steps": args.steps, "spike": {"rise": RISE, "window": WINDOW, "settled": SETTLED}, "runs": runs}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s): spikes per seed "
          + "; ".join(f"clip {name}: {[len(r['spikes']) for r in rs]}" for name, rs in runs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
