"""Post-LN against Pre-LN on the copy task: with and without the warm-up, at the recipe's rate and
at four times it, 2 and 6 layers per stack ("After the paper": Xiong et al., 2020).

    python -m aiayn.experiments.after_pre_ln                 # results/after_the_paper/pre_ln.json
    python -m aiayn.experiments.after_pre_ln --steps 20 --seeds 0 --out /tmp/pre_ln.json

The paper normalises after each residual addition (Post-LN, ``norm_first=False``); most models
since normalise the sub-layer's input (Pre-LN, ``norm_first=True``). Xiong et al. argue that
Post-LN needs the learning-rate warm-up, and more of it the deeper the model, while Pre-LN
trains without. Each run trains the copy-task model of ``after_common`` for ``--steps`` updates
with 2 or 6 layers per stack under one of four schedules: the recipe (§5.3's, warm-up over 200
updates to a peak of 2.2e-3, a quarter of the paper's factor, then the inverse square root), the
same without warm-up (the peak from the first update, the same decay after update 200), and both
at four times the rate. Seed k of Post-LN and of Pre-LN share the initial weights and the
batches. Verdict per (schedule, depth): Pre-LN against Post-LN on the validation loss, paired by
seed, Holm over the eight comparisons; exact match is reported beside it.
"""

import math
import sys

import torch

from ..config import TransformerConfig
from .after_common import COPY_BATCH, COPY_MODEL, COPY_RECIPE, COPY_TASK, copy_arguments, copy_run, verdicts
from .record import REPOSITORY, Recorder

PROG = "python -m aiayn.experiments.after_pre_ln"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "pre_ln.json"
WARMUP = COPY_RECIPE["warmup_steps"]
PEAK = COPY_RECIPE["lr_factor"] * COPY_MODEL["d_model"] ** -0.5 * WARMUP ** -0.5  # 2.2e-3
SCHEDULES = {  # name -> (warm-up, multiple of the recipe's peak)
    "warmup": (True, 1), "no_warmup": (False, 1), "warmup_x4": (True, 4), "no_warmup_x4": (False, 4),
}
DEPTHS = (2, 6)
STEPS = 300
SEEDS = (0, 1, 2)


def rate(schedule: str):
    """The rate of update ``step`` (from 1): with warm-up, §5.3's schedule exactly (linear to the
    peak at update 200, then the inverse square root); without, the peak from the first update."""
    warmup, multiple = SCHEDULES[schedule]
    peak = multiple * PEAK
    if warmup:
        return lambda step: peak * min(step / WARMUP, math.sqrt(WARMUP / step))
    return lambda step: peak * min(1.0, math.sqrt(WARMUP / step))


def run_one(schedule: str, depth: int, norm_first: bool, seed: int, steps: int, score: bool = True) -> dict:
    config = TransformerConfig(**{**COPY_MODEL, "num_layers": depth, "norm_first": norm_first})
    return copy_run(config, seed, steps, rate=rate(schedule), score=score)


def main(argv=None) -> int:
    args = copy_arguments(PROG, __doc__, STEPS, SEEDS, RESULTS, argv)
    if args is None:
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        runs = {f"{schedule}_{depth}layers": {norm: [run_one(schedule, depth, norm == "pre_ln", seed, args.steps)
                                                     for seed in args.seeds] for norm in ("post_ln", "pre_ln")}
                for schedule in SCHEDULES for depth in DEPTHS}
    judged = verdicts_of(runs) if len(args.seeds) >= 2 else {}
    values = {"task": COPY_TASK, "model": COPY_MODEL, "peak_rate": PEAK, "warmup_steps": WARMUP,
              "schedules": {name: {"warmup": w, "peak": m * PEAK} for name, (w, m) in SCHEDULES.items()},
              "depths": list(DEPTHS), "recipe": COPY_RECIPE,
              "batch_size": COPY_BATCH, "steps": args.steps, "seeds": args.seeds, "runs": runs, "verdicts": judged}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s)")
    for name, v in judged.items():
        print(f"{name:<18} Pre-LN - Post-LN validation loss {v['val_loss']['difference']:+.3f}: "
              f"{v['val_loss']['words']}")
    return 0


def verdicts_of(runs: dict) -> dict:
    """{setting: {"val_loss": Pre-LN (the arm) against Post-LN (its base)}}, Holm over the settings."""
    return verdicts({name: (arms["pre_ln"], arms["post_ln"]) for name, arms in runs.items()}, {"val_loss": True})


if __name__ == "__main__":
    sys.exit(main())
