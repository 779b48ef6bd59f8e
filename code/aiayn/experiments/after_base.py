"""The paper's model on Multi30k, the base that the "After the paper" Multi30k experiments
(after_rmsnorm, after_swiglu, after_gqa) compare their arms with, seed by seed.

    python -m aiayn.experiments.after_base            # results/after_the_paper/multi30k_base.json
    python -m aiayn.experiments.after_base --steps 5 --seeds 0 --out /tmp/base.json

Three seeds of ``aiayn-train --config multi30k-cpu --seed k`` as ``after_common.multi30k_run``
trains and scores them (the last model; validation loss; greedy BLEU on the validation set with
the key-value cache, whose bytes per token it counts). Written once, read by the three
experiments, which check that it was made by the same code (commit) and settings as their arms.
"""

import argparse
import sys

import torch

from .after_common import MULTI30K, multi30k_data, multi30k_run
from .record import REPOSITORY, Recorder, read_results

PROG = "python -m aiayn.experiments.after_base"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "multi30k_base.json"
SEEDS = (0, 1, 2)


def load_base(path=RESULTS, seeds=None, steps=None) -> dict:
    """The base's results file, checked against what an arm is about to pair with it."""
    record = read_results(path)
    values = record["values"]
    if seeds is not None and values["seeds"] != list(seeds):
        raise ValueError(f"{path} holds seeds {values['seeds']}, not {list(seeds)}: run `{PROG} --seeds "
                         f"{' '.join(map(str, seeds))}` first")
    if steps is not None and values["steps"] != steps:
        raise ValueError(f"{path} trained {values['steps']} updates, not {steps}")
    return record


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, help="updates per run (default: multi30k-cpu's 600)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="seeds (default 0 1 2)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--out", default=str(RESULTS), help="results file (default: %(default)s)")
    args = p.parse_args(argv)
    if (args.steps is not None and args.steps < 1) or min(args.seeds) < 0 or len(set(args.seeds)) != len(args.seeds):
        print(f"{PROG}: error: need --steps >= 1 and distinct seeds >= 0", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        data = multi30k_data(args.data_dir)
        runs = [multi30k_run({}, seed, data, args.steps) for seed in args.seeds]
    values = {"config": MULTI30K, "steps": runs[0]["steps"], "seeds": args.seeds, "runs": runs}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s): validation loss "
          f"{[round(r['val_loss'], 3) for r in runs]}, BLEU {[round(r['bleu'], 2) for r in runs]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
