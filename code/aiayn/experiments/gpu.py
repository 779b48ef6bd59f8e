"""The GPU part of the Multi30k recipe in one command, for a bare CUDA machine with PyTorch.

    bash tools/gpu_run.sh                       # installs what is missing, then runs this
    python -m aiayn.experiments.gpu --out OUT   # every stage; or --stages small base ...
    python -m aiayn.experiments.gpu --out OUT --stages small --set max_tokens=8192   # a changed recipe
    python -m aiayn.experiments.gpu --device cpu --tiny --out /tmp/dry   # a dry run, seconds

Stages (each under ten minutes on one H100; ``--stages`` picks some):
  machine     the GPU, its precision (bf16 or fp16 + scaler) and a bf16 8192^3 matmul rate
  compile     eager against compiled training (torch.compile) of the recommended GPU
              configuration on real batches, compilation included: does it pay for itself?
  bench       our training step against torch.nn.Transformer of the same shape (tokens/s,
              MFU), for the recommended GPU configuration and for multi30k-gpu; and a profile
              of each: operators and kernels per step, GPU-busy time against the step's time
  small base  train the recommended GPU configuration, then multi30k-gpu (the base model):
              validation and test BLEU, training + evaluation time, tokens/s, MFU
              (compiled with --compile: results file <configuration>_compiled_seed<k>.json).
              With --set the run is a candidate, not the chosen configuration: it is scored
              on validation only (the test set is decoded once, for what validation chose)
  notebook-en notebook-zh
              execute chapters/{en,zh}/training_multi30k.ipynb in place (needs nbclient,
              ipykernel, myst-nb: tools/gpu_run.sh brings them as wheels)

Results go to results/gpu/*.json (``record.Recorder``: command, commit, machine, seconds) and
are copied, with the executed notebooks and each trained configuration's averaged model, to
--out. ``--tiny`` swaps every configuration for a few updates of a small model on a 400-pair
slice: it checks the wiring, and writes its results under --out, never into results/gpu.
"""

import argparse
import dataclasses
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from ..train.checkpoint import load_checkpoint
from ..data.tokenizer import SubwordTokenizer
from .budget import budget_name, set_changes
from .mfu import epoch_flops, measured_matmul_tflops, peak_bf16_tflops
from .record import REPOSITORY, Recorder
from .recipe_runs import decode_split, run_config, train_with_cli, training_pairs
from ..train.trainer import choose_precision, native_bf16

RESULTS = REPOSITORY / "results" / "gpu"
RECIPES = {"small": "multi30k-small", "base": "multi30k-gpu"}  # stage -> configuration
TINY = {"vocab_size": 300, "d_model": 32, "num_heads": 2, "num_layers": 1, "d_ff": 64, "max_tokens": 400,
        "max_steps": 4, "warmup_steps": 2, "eval_every": 2, "checkpoint_every": 2, "average_last": 2,
        "max_train_pairs": 400, "max_test_pairs": 8}
STAGES = ("machine", "compile", "bench", "small", "base", "notebook-en", "notebook-zh")


def machine_stage(device: str, tiny: bool) -> dict:
    dev = torch.device(device)
    values = {"device": device, "precision": choose_precision(device, None, native_bf16(dev)),
              "torch": torch.__version__}
    if device == "cuda":
        values |= {"gpu": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
                   "peak_bf16_tflops": peak_bf16_tflops(),
                   "matmul_bf16_tflops": measured_matmul_tflops(1024 if tiny else 8192)}
    return values


def bench_stage(device: str, tiny: bool, results: Path) -> list[Path]:
    """The results files and the profiler's tables (results/gpu/profile/<config>_<variant>.txt)."""
    written, profiles = [], results / "profile"
    for config in (["multi30k-tiny"] if tiny else list(RECIPES.values())):
        path = results / f"bench_{config}.json"
        steps = ["--steps", "1", "--warmup", "1"] if tiny else ["--steps", "20", "--warmup", "5"]
        subprocess.run([sys.executable, str(REPOSITORY / "benchmarks" / "bench_training.py"), "--config", config,
                        "--device", device, "--json", str(path), "--profile", str(profiles), *steps], check=True)
        written += [path, *sorted(profiles.glob(f"{config}_*.txt"))]
    return written


def compile_stage(device: str, tiny: bool, results: Path, data_dir) -> Path:
    config = "multi30k-tiny" if tiny else RECIPES["small"]
    path = results / f"compile_{config}.json"
    # --tiny checks the wiring only: compiling takes half a minute even there (tests/test_train_trainer.py
    # checks the compiled step itself).
    options = ["--steps", "3", "--variants", "eager"] if tiny else ["--steps", "1000"]
    options += ["--data-dir", str(data_dir)] if data_dir else []
    subprocess.run([sys.executable, str(REPOSITORY / "benchmarks" / "bench_compile.py"), "--config", config,
                    "--device", device, "--json", str(path), *options], check=True)
    return path


def recipe_stage(stage: str, device: str, tiny: bool, results: Path, runs: Path, data_dir,
                 compile: bool = False, seed: int | None = None, changes: dict | None = None) -> tuple[Path, Path]:
    """Trains one configuration with aiayn-train (``changes``: its ``--set`` FIELD=VALUE changes),
    scores its averaged model on val, and on test only when nothing is changed (a changed recipe
    is a candidate: validation chooses, test is decoded once for the configuration adopted).
    Returns the results file and the averaged model."""
    config, asked = RECIPES[stage], changes or {}
    changes = TINY | asked if tiny else asked
    run = run_config(config, changes)
    run = run if seed is None else dataclasses.replace(run, seed=seed)
    name = budget_name(config, asked)  # multi30k-small, or multi30k-small_max_tokens8192 when changed
    # A compiled run is another measurement of the same recipe: its own file, never the eager one's.
    name += "_compiled" if compile else ""
    out = runs / name
    shutil.rmtree(out, ignore_errors=True)  # a fresh run, never a resumed one
    with Recorder() as rec:
        start = time.perf_counter()
        trained = train_with_cli(config, changes, run.seed, out, data_dir, quiet=tiny, device=device,
                                 compile=compile)
        scores = {}
        for split in ("val",) if asked else ("val", "test_2016_flickr"):
            scores |= decode_split(out / "averaged.pt", split, data_dir, run, device=device)
        total = time.perf_counter() - start
    values = {"configuration": config, **trained["values"], **scores, "train_and_eval_seconds": total}
    values |= mfu_values(run, out, trained["values"], device, data_dir)
    path = results / f"{name}_seed{run.seed}.json"
    rec.write(path, values)
    test = (f"test_2016_flickr BLEU {scores['test_2016_flickr_bleu']:.2f}" if "test_2016_flickr_bleu" in scores
            else "test_2016_flickr sealed (a candidate)")
    print(f"{name}: val BLEU {scores['val_bleu']:.2f}, {test}, training + evaluation {total / 60:.1f} min")
    return path, out / "averaged.pt"


def mfu_values(run, out: Path, trained: dict, device: str, data_dir) -> dict:
    """Model FLOPs per second of the whole training (epoch-mean FLOPs per update), and MFU."""
    en, de = training_pairs(run, data_dir)
    # The tokenizer the run trained (saved in its checkpoint), not a new one: the same batches.
    tokenizer = SubwordTokenizer.from_str(load_checkpoint(out / "averaged.pt")["metadata"]["tokenizer"])
    batches = run.training_batches(tokenizer, en, de)
    config = run.model_config(tokenizer.vocab_size)
    tflops = epoch_flops(config, batches) * trained["steps"] / trained["train_seconds"] / 1e12
    peak = peak_bf16_tflops() if device == "cuda" else None
    return {"model_tflops_per_s": tflops, "peak_bf16_tflops": peak, "mfu": tflops / peak if peak else None}


def notebook_stage(notebook: Path, out: Path, deadline: float | None = None) -> Path:
    """Executes ``notebook`` in place (tools/execute_notebooks.py: a fresh kernel, its folder as
    working directory) and copies it to ``out`` as <name>.<language folder>.ipynb, also when a
    cell failed or ``deadline`` (seconds) passed: then with the outputs until then, and the stage
    fails after the copy. (A command stopped from outside, by ``timeout``, would hand back nothing.)"""
    limit = ["--deadline", str(deadline)] if deadline else []
    done = subprocess.run([sys.executable, str(REPOSITORY / "tools" / "execute_notebooks.py"), "--save-failed",
                           *limit, str(notebook)])
    copy = out / f"{notebook.stem}.{notebook.parent.name}.ipynb"  # flat: out/ holds no folders
    shutil.copyfile(notebook, copy)
    done.check_returncode()
    return copy


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m aiayn.experiments.gpu", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[2:3]))
    p.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES), metavar="STAGE",
                   help=f"some of {', '.join(STAGES)} (default: all, in this order)")
    p.add_argument("--out", type=Path, required=True, help="folder for copies of the results and notebooks")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--tiny", action="store_true", help="a few updates of a small model: checks the wiring")
    p.add_argument("--compile", action="store_true", help="stages small and base: compile the training model")
    p.add_argument("--seed", type=int, help="stages small and base: this seed instead of the configuration's")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE",
                   help="stages small and base: change the configuration as aiayn-train --set does, e.g. "
                        "max_tokens=8192; the results file is named after the changes")
    p.add_argument("--notebook-deadline", type=float, metavar="SECONDS",
                   help="stages notebook-*: stop each notebook after this many seconds and hand back what ran "
                        "(set it below the machine's limit on a command)")
    p.add_argument("--results", type=Path, help=f"results folder (default {RESULTS}; under --tiny, OUT/results)")
    p.add_argument("--runs", type=Path, help="checkpoints (default runs/gpu; under --tiny, OUT/runs)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    args = p.parse_args(argv)
    # A dry run must never overwrite the committed GPU results (or the GPU run's checkpoints).
    args.results = args.results or (args.out / "results" if args.tiny else RESULTS)
    args.runs = args.runs or (args.out / "runs" if args.tiny else Path("runs") / "gpu")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("no CUDA device is visible to PyTorch; --device cpu --tiny runs the dry run")
    if args.device == "cpu" and not args.tiny:
        p.error("--device cpu trains the GPU configurations for hours: add --tiny for the dry run")
    try:  # a misspelt field fails here, before any stage has spent GPU time
        changes = set_changes(args.set)
        for stage in set(RECIPES) & set(args.stages):
            run_config(RECIPES[stage], changes)
    except ValueError as e:
        p.error(f"--set: {e}")
    args.out.mkdir(parents=True, exist_ok=True)

    def keep(path: Path) -> None:  # copied at once: a run cut short still hands back what it finished
        shutil.copyfile(path, args.out / path.name)

    if "machine" in args.stages:
        with Recorder() as rec:
            values = machine_stage(args.device, args.tiny)
        rec.write(args.results / "machine.json", values)
        keep(args.results / "machine.json")
        print("machine:", values)
    if "compile" in args.stages:
        keep(compile_stage(args.device, args.tiny, args.results, args.data_dir))
    if "bench" in args.stages:
        for path in bench_stage(args.device, args.tiny, args.results):
            keep(path)
    for stage in ("small", "base"):
        if stage in args.stages:
            path, model = recipe_stage(stage, args.device, args.tiny, args.results, args.runs, args.data_dir,
                                       args.compile, args.seed, changes)
            keep(path)
            # The averaged model too (8 MB for multi30k-small; never committed): a CPU machine can
            # then try decoding settings on the validation set without another GPU run.
            shutil.copyfile(model, args.out / f"{path.stem}.averaged.pt")
    for lang in ("en", "zh"):
        if f"notebook-{lang}" in args.stages:
            if args.tiny:
                print(f"notebook-{lang}: skipped under --tiny (a CPU run of the chapter takes minutes)")
            else:
                notebook_stage(REPOSITORY / "chapters" / lang / "training_multi30k.ipynb", args.out,
                               args.notebook_deadline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
