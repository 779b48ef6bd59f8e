"""The Multi30k recipe, measured: candidates trained with several seeds, ranked on the validation set.

    python -m aiayn.experiments.recipes rank --seeds 0 1             # every candidate, 2 seeds
    python -m aiayn.experiments.recipes rank --candidates small small-do0.1 --seeds 0
    python -m aiayn.experiments.recipes test --candidates small --seeds 0 1   # the chosen ones only
    python -m aiayn.experiments.recipes table                        # the ranking, from the files
    python -m aiayn.experiments.recipes throughput --config multi30k-laptop --threads 2
    python -m aiayn.experiments.recipes budget --config multi30k-laptop --threads 2
    python -m aiayn.experiments.recipes decoding --model runs/.../averaged.pt --name NAME   # beam, alpha

Every candidate is a change of ``multi30k-cpu`` made with ``aiayn-train --set``, so each run
is also one ``aiayn-train`` command (stored in its results file). A ranking run trains
``RANKING["max_steps"]`` updates, averages its last checkpoints, and scores the averaged model
on the validation set (loss, and sacreBLEU with beam search); ``results/recipes/rank/`` gets
one file per candidate and seed. The test set is decoded only by ``test``, for the
configurations chosen on validation. Checkpoints stay under ``runs/recipes/`` (not committed).
Budgets are counted in updates, not minutes: on a shared machine the minutes vary, the updates
do not; each file records wall and CPU seconds next to them.
"""

import argparse
import shlex
import shutil
import sys
from pathlib import Path

from ..train.configs import RunConfig
from .record import REPOSITORY, Recorder, read_results
from .recipe_runs import decode_split, train_with_cli
from .recipe_table import recipe_table
from . import budget, decoding

RESULTS = REPOSITORY / "results" / "recipes"
RUNS = Path("runs") / "recipes"

# The shape of Wu et al. (ACL 2021, "Good for Misconceived Reasons"), the best text-only
# Transformer on Multi30k En->De we know of: d_model 128, 4 heads, 4 + 4 layers, d_ff 256,
# dropout 0.3, 4,096-token batches, shared embeddings. Their peak rate, 5e-3, is ours with
# lr_factor 1.1 at 400 warm-up updates (128^-0.5 * 400^-0.5 = 4.4e-3 per unit of lr_factor).
LITERATURE = dict(d_model=128, num_heads=4, num_layers=4, d_ff=256, dropout=0.3, max_tokens=4096,
                  warmup_steps=400, lr_factor=1.0)
# What a ranking run costs: 600 updates of 4,096 tokens (about 4.7 epochs), 10-15 minutes of
# one CPU thread for the literature shape; checkpoints every 25 updates, the last 5 averaged.
RANKING = dict(max_steps=600, checkpoint_every=25, average_last=5, eval_every=100, log_every=50)

# Neighbours of the literature shape, one change each: learning rate, dropout, width, depth,
# and updates (twice as many of half the tokens: the same number of tokens seen).
CANDIDATES = {
    "small": {},
    "small-lr0.5": {"lr_factor": 0.5},
    "small-do0.1": {"dropout": 0.1},
    "wide": {"d_model": 256, "d_ff": 512},
    "deep": {"num_layers": 6},
    "small-b2048": {"max_tokens": 2048, "max_steps": 1200, "warmup_steps": 800,
                    "checkpoint_every": 50, "eval_every": 200, "log_every": 100},
}


def candidate_changes(name: str, steps: int | None = None) -> dict:
    """The ``aiayn-train --set`` fields of candidate ``name`` (over multi30k-cpu)."""
    if name not in CANDIDATES:
        raise ValueError(f"unknown candidate {name!r}; choose from {', '.join(CANDIDATES)}")
    changes = LITERATURE | RANKING | CANDIDATES[name]
    if steps is not None:  # a shorter run (tests): the same proportions of warm-up and averaging
        scale = steps / changes["max_steps"]
        changes |= {"max_steps": steps, "warmup_steps": max(1, round(changes["warmup_steps"] * scale)),
                    "checkpoint_every": max(1, round(changes["checkpoint_every"] * scale)),
                    "eval_every": steps, "log_every": max(1, round(changes["log_every"] * scale))}
    return changes


def run_folder(runs: Path, name: str, seed: int) -> Path:
    return Path(runs) / f"{name}_seed{seed}"


def rank(names, seeds, results: Path, runs: Path, data_dir=None, steps=None, extra=(), force=False):
    """Trains every (candidate, seed) whose results file is missing; scores it on validation."""
    todo = [(n, s) for s in seeds for n in names if force or not (results / "rank" / f"{n}_seed{s}.json").exists()]
    for i, (name, seed) in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {name}, seed {seed}", flush=True)
        out = run_folder(runs, name, seed)
        shutil.rmtree(out, ignore_errors=True)  # an interrupted run's checkpoints must not be averaged in
        changes = candidate_changes(name, steps) | dict(kv.split("=", 1) for kv in extra)
        with Recorder() as rec:
            trained = train_with_cli("multi30k-cpu", changes, seed, out, data_dir)
            scores = decode_split(out / "averaged.pt", "val", data_dir, trained["run"])
        rec.write(results / "rank" / f"{name}_seed{seed}.json",
                  {"candidate": name, "seed": seed, **trained["values"], **scores})


def test(names, seeds, results: Path, runs: Path, data_dir=None):
    """test_2016_flickr BLEU of the kept averaged models of already ranked runs."""
    for name in names:
        for seed in seeds:
            out = run_folder(runs, name, seed)
            if not (out / "averaged.pt").is_file():
                raise FileNotFoundError(f"{out}/averaged.pt is missing: run `rank --candidates {name} "
                                        f"--seeds {seed}` first (checkpoints are not committed)")
            ranked = results / "rank" / f"{name}_seed{seed}.json"
            run = RunConfig(**read_results(ranked)["values"]["config"])  # its beam, alpha, test slice
            with Recorder() as rec:
                scores = decode_split(out / "averaged.pt", "test_2016_flickr", data_dir, run)
            rec.write(results / "test" / f"{name}_seed{seed}.json", {"candidate": name, "seed": seed, **scores})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m aiayn.experiments.recipes",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="candidates:\n" + "\n".join(
                                    f"  {n:<12} {shlex.join(f'{k}={v}' for k, v in c.items()) or '(the literature shape)'}"
                                    for n, c in CANDIDATES.items()))
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("rank", "train candidates, score them on the validation set"),
                       ("test", "score chosen candidates' kept models on test_2016_flickr"),
                       ("table", "print the ranking from the results files")):
        s = sub.add_parser(name, help=text, description=text)
        s.add_argument("--candidates", nargs="+", default=list(CANDIDATES), metavar="NAME")
        s.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
        s.add_argument("--results", type=Path, default=RESULTS, help=f"results folder (default {RESULTS})")
        s.add_argument("--runs", type=Path, default=RUNS, help=f"checkpoints folder (default {RUNS})")
        s.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
        if name == "rank":
            s.add_argument("--steps", type=int, help="updates per run (default 600; tests use a few)")
            s.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="more aiayn-train --set fields")
            s.add_argument("--force", action="store_true", help="re-run candidates that have results")
    budget.add_commands(sub)
    decoding.add_command(sub)
    args = p.parse_args(argv)
    if getattr(args, "candidates", None):
        unknown = [n for n in args.candidates if n not in CANDIDATES]
        if unknown:
            p.error(f"unknown candidate(s) {', '.join(unknown)}; choose from {', '.join(CANDIDATES)}")
    if getattr(args, "steps", None) is not None and args.steps < 2:
        p.error(f"--steps must be at least 2, got {args.steps}")
    try:
        if args.command == "rank":
            rank(args.candidates, args.seeds, args.results, args.runs, args.data_dir, args.steps, args.set, args.force)
        elif args.command == "test":
            test(args.candidates, args.seeds, args.results, args.runs, args.data_dir)
        elif args.command == "table":
            print(recipe_table(args.results, args.candidates).to_text())
        elif args.command == "decoding":
            decoding.run_command(args)
        else:
            budget.run_command(args)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
