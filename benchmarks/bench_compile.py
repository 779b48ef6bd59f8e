"""Does ``torch.compile`` pay for itself over a training run? Eager and compiled training steps
of a named configuration on its real Multi30k batches, timed from the first step.

    python benchmarks/bench_compile.py --config multi30k-small --steps 1000
    python benchmarks/bench_compile.py --config multi30k-small --json results/gpu/compile_multi30k-small.json

``bench_training.py`` times one batch shape after a warm-up. A run is different: batch lengths
vary, so a compiled model must cover many shapes (``dynamic=True``), and the compilation itself,
minutes on a GPU machine's host, is part of the run's time. So this benchmark starts the clock at
the first update and records the elapsed time after 1, 10, 100 and ``--steps`` updates, the
steady time per update over the last 100, and the number of graphs compiled. From them it
projects the configuration's whole run (elapsed after ``--steps`` plus the remaining updates at
the steady rate; evaluation and checkpoints excluded) and reports eager / compiled: above 1, the
compiled run finishes first.
"""

import argparse
import itertools
import time

import torch
from torch._dynamo.utils import counters

from machine import describe
from aiayn.experiments.recipe_runs import training_batches
from aiayn.experiments.record import Recorder
from aiayn.pt.model import Transformer
from aiayn.train import trainer as trainer_module
from aiayn.train.configs import CONFIGS

VARIANTS = ("eager", "compiled")


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_run(run, vocab_size: int, batches, device: str, compiled: bool, steps: int) -> dict:
    """Elapsed seconds after 1, 10, 100 and ``steps`` updates, steady seconds per update over the
    last 100 (or over all but the first, for fewer steps), and the graphs compiled."""
    torch.manual_seed(run.seed)
    trainer = trainer_module.Trainer(Transformer(run.model_config(vocab_size)), run.train_config(
        device, max_steps=10**9, progress=False, checkpoint_every=None, compile=compiled))
    counters.clear()
    marks = sorted({m for m in (1, 10, 100, max(1, steps - 100), steps) if m <= steps})
    elapsed, start = {}, time.perf_counter()
    for step, batch in enumerate(itertools.islice(itertools.cycle(batches), steps), 1):
        trainer.train_step(batch)
        if step in marks:
            synchronize(device)
            elapsed[step] = time.perf_counter() - start
    first, last = marks[-2] if len(marks) > 1 else 0, marks[-1]
    steady = (elapsed[last] - elapsed.get(first, 0.0)) / (last - first)
    return {"elapsed_after": elapsed, "steady_seconds_per_update": steady,
            "graphs": int(counters["stats"].get("unique_graphs", 0)),
            "projected_run_seconds": elapsed[last] + (run.max_steps - last) * steady}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="multi30k-small", choices=sorted(CONFIGS))
    p.add_argument("--steps", type=int, default=1000, help="updates timed per variant (default 1000)")
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when there is one")
    p.add_argument("--backend", default=trainer_module.COMPILE_BACKEND,
                   help="torch.compile back end (default inductor; aot_eager traces without code generation)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--json", help="also write the measurements to this results file")
    args = p.parse_args(argv)
    if args.steps < 2:
        p.error(f"--steps must be at least 2, got {args.steps}")
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device is visible to PyTorch")
    trainer_module.COMPILE_BACKEND = args.backend
    rec = Recorder()
    run = CONFIGS[args.config]
    tokenizer, batches = training_batches(run, args.data_dir)
    batches = list(batches)
    print(f"machine: {describe()}")
    print(f"config {run.name}: {len(batches)} batches per epoch, {args.steps} updates timed per variant, "
          f"whole run {run.max_steps} updates; compile back end {args.backend}")
    rows = {}
    for variant in args.variants:
        row = rows[variant] = time_run(run, tokenizer.vocab_size, batches, device, variant == "compiled", args.steps)
        print(f"{variant:>9}: " + ", ".join(f"{s} updates {t:.1f} s" for s, t in row["elapsed_after"].items())
              + f"; steady {1000 * row['steady_seconds_per_update']:.1f} ms/update; {row['graphs']} graph(s); "
              f"projected run {row['projected_run_seconds']:.0f} s")
    if len(rows) == 2:
        ratio = rows["eager"]["projected_run_seconds"] / rows["compiled"]["projected_run_seconds"]
        print(f"eager / compiled, whole run: x{ratio:.2f} ({'compiled' if ratio > 1 else 'eager'} finishes first)")
    values = {"config": run.name, "device": device, "backend": args.backend, "steps": args.steps,
              "max_steps": run.max_steps, "rows": rows}
    if args.json:
        rec.write(args.json, values)
        print(f"written: {args.json}")
    return values


if __name__ == "__main__":
    main()
