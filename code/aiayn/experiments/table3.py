"""Table 3 of the paper (§6.2, "Model Variations") in miniature: Multi30k, one CPU thread.

    python -m aiayn.experiments.table3 --row A --seeds 0 1 2     # rows: base A B C D E
    python -m aiayn.experiments.table3 --variant C_N1 --seeds 0  # one variant (--list names them)

Each run trains the ``multi30k-cpu`` configuration with the variant's fields changed (through
``aiayn-train``'s own ``train()``, so a row is exactly ``aiayn-train --config multi30k-cpu
--set ...``), then scores it on the validation set, as the paper scored Table 3 on a
development set (newstest2013): perplexity per subword and cased sacreBLEU with beam 4.
Like the paper's Table 3 (and unlike its §6.1 test-set results) the scored model is the last
checkpoint, not an average. One results file per (variant, seed), results/table3/
<variant>_seed<k>.json, with its provenance (``record.Recorder``); the model is kept under
runs/table3/<variant>/seed<k>/averaged.pt (an "average" of one checkpoint, i.e. the last one).
"""

import argparse
import contextlib
import functools
import io
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..data.multi30k import load_split
from ..data.tokenizer import SubwordTokenizer
from ..train.checkpoint import build_model, load_checkpoint
from ..train.cli import train
from ..train.configs import get_config
from ..train.translate import bleu_report, translate
from .record import REPOSITORY, Job, run_recorded

BASE = "multi30k-cpu"
# Score the last checkpoint (no averaging, as for the paper's Table 3): keep one checkpoint,
# write it at the end only.
SCORING = {"average_last": 1, "checkpoint_every": 0}
ROWS = ("base", "A", "B", "C", "D", "E")
RESULTS_DIR = REPOSITORY / "results" / "table3"
RUNS_DIR = REPOSITORY / "runs" / "table3"


@dataclass(frozen=True)
class Variant:
    """One line of the miniature table and the line of the paper's Table 3 it mirrors.
    ``paper`` is (perplexity, BLEU, parameters in millions or None where the paper leaves
    the cell empty, i.e. as the base model's 65)."""

    name: str
    row: str
    changes: dict = field(default_factory=dict)  # RunConfig fields, as ``aiayn-train --set``
    paper_label: str = ""
    paper: tuple = ()


# Ours: d_model 128, h 4, d_k = d_v 32, N 2, d_ff 512; the paper's base: 512, 8, 64, 6, 2048.
# Each variant scales a field by the paper's factor where it can (d_k / 4 and / 2, d_model
# and d_ff x 1/2 and x 2, h x 1/4 .. x 4), and is paired with the paper's line in that direction.
VARIANTS = [
    Variant("base", "base", {}, "base", (4.92, 25.8, 65)),
    # (A) heads at constant computation: d_k = d_v = d_model / h (the RunConfig default).
    Variant("A_h1", "A", {"num_heads": 1}, "h=1, d_k=d_v=512", (5.29, 24.9, None)),
    Variant("A_h2", "A", {"num_heads": 2}, "h=4, d_k=d_v=128", (5.00, 25.5, None)),
    Variant("A_h8", "A", {"num_heads": 8}, "h=16, d_k=d_v=32", (4.91, 25.8, None)),
    Variant("A_h16", "A", {"num_heads": 16}, "h=32, d_k=d_v=16", (5.01, 25.4, None)),
    # (B) smaller keys only: d_v stays d_model / h = 32.
    Variant("B_dk8", "B", {"d_k": 8}, "d_k=16", (5.16, 25.1, 58)),
    Variant("B_dk16", "B", {"d_k": 16}, "d_k=32", (5.01, 25.4, 60)),
    # (C) size. As in the paper, d_model changes alone: h and d_ff stay, d_k = d_model / h.
    Variant("C_N1", "C", {"num_layers": 1}, "N=2", (6.11, 23.7, 36)),
    Variant("C_N3", "C", {"num_layers": 3}, "N=8", (4.88, 25.5, 80)),
    Variant("C_d64", "C", {"d_model": 64}, "d_model=256, d_k=d_v=32", (5.75, 24.5, 28)),
    Variant("C_d256", "C", {"d_model": 256}, "d_model=1024, d_k=d_v=128", (4.66, 26.0, 168)),
    Variant("C_dff256", "C", {"d_ff": 256}, "d_ff=1024", (5.12, 25.4, 53)),
    Variant("C_dff1024", "C", {"d_ff": 1024}, "d_ff=4096", (4.75, 26.2, 90)),
    # (D) regularisation.
    Variant("D_dropout0", "D", {"dropout": 0.0}, "P_drop=0.0", (5.77, 24.6, None)),
    Variant("D_dropout0.2", "D", {"dropout": 0.2}, "P_drop=0.2", (4.95, 25.5, None)),
    Variant("D_ls0", "D", {"label_smoothing": 0.0}, "ε_ls=0.0", (4.67, 25.3, None)),
    Variant("D_ls0.2", "D", {"label_smoothing": 0.2}, "ε_ls=0.2", (5.47, 25.7, None)),
    # (E) learned positional embeddings instead of sinusoids.
    Variant("E_learned", "E", {"positional": "learned"}, "positional embedding", (4.92, 25.7, None)),
]
BY_NAME = {v.name: v for v in VARIANTS}


def results_path(variant: str, seed: int, results_dir=RESULTS_DIR) -> Path:
    return Path(results_dir) / f"{variant}_seed{seed}.json"


def command(variant: str, seed: int) -> str:
    """The command that writes exactly this (variant, seed)'s results file."""
    return f"python -m aiayn.experiments.table3 --variant {variant} --seeds {seed}"


def run_variant(variant: Variant, seed: int, runs_dir=RUNS_DIR, data_dir=None, progress=True) -> dict:
    """Trains one variant with one seed (``aiayn-train``'s ``train()``), scores the last
    checkpoint on the validation set; returns the values a results file stores."""
    out = Path(runs_dir) / variant.name / f"seed{seed}"
    sets = [f"{k}={v}" for k, v in {**SCORING, **variant.changes}.items()]
    argv = ["--config", BASE, "--seed", str(seed), "--out", str(out), "--device", "cpu",
            "--no-eval", *(["--data-dir", str(data_dir)] if data_dir else []),
            *([] if progress else ["--quiet"]), "--set", *sets]
    with contextlib.redirect_stdout(io.StringIO()):  # train() prints its summary; we store it
        result = train(argv)
    checkpoint = load_checkpoint(out / "averaged.pt")
    model = build_model(checkpoint)
    tokenizer = SubwordTokenizer.from_str(checkpoint["metadata"]["tokenizer"])
    run = get_config(BASE)
    val_en, val_de = load_split("val", data_dir)
    start = time.perf_counter()
    hypotheses = translate(model, tokenizer, val_en, run.beam_size, run.alpha, progress=progress)
    decode_seconds = time.perf_counter() - start
    (out / "val.hyp.de").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    history = json.loads((out / "history.json").read_text())
    bleu = bleu_report(hypotheses, val_de)
    return {"variant": variant.name, "row": variant.row, "changes": variant.changes, "seed": seed,
            "parameters": sum(p.numel() for p in model.parameters()), "steps": result["steps"],
            "scored": "last checkpoint (no averaging)", "val_loss": result["averaged_val_loss"],
            "val_perplexity": math.exp(result["averaged_val_loss"]), "train_loss": result["final_loss"],
            "bleu": bleu["bleu"], "bleu_lowercase": bleu["bleu_lowercase"], "signature": bleu["signature"],
            "beam_size": run.beam_size, "alpha": run.alpha,
            "val_loss_curve": [[h["step"], h["val_loss"]] for h in history if "val_loss" in h],
            "train_seconds": result["train_seconds"], "decode_seconds": decode_seconds,
            "tokens_per_s": result["tokens_per_s"]}


def selected(rows=(), names=()) -> list[Variant]:
    """The variants of ``rows`` and those named in ``names``, in the table's order."""
    return [v for v in VARIANTS if v.row in (rows or ()) or v.name in (names or ())]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m aiayn.experiments.table3", description=__doc__.split("\n")[0],
                                epilog="Variants: " + ", ".join(BY_NAME))
    p.add_argument("--row", nargs="+", choices=ROWS, help="run every variant of these rows")
    p.add_argument("--variant", nargs="+", metavar="NAME", help="run these variants (see --list)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="seeds (default: 0 1 2)")
    p.add_argument("--list", action="store_true", help="print the variants and exit")
    p.add_argument("--skip-existing", action="store_true", help="skip runs whose results file exists")
    p.add_argument("--results-dir", default=str(RESULTS_DIR), help="where results files go (default: %(default)s)")
    p.add_argument("--runs-dir", default=str(RUNS_DIR), help="where models go (default: %(default)s)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default 1: the committed results "
                   "and their CI check use one)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    if args.list:
        for v in VARIANTS:
            change = " ".join(f"{k}={x}" for k, x in v.changes.items()) or "(multi30k-cpu as is)"
            print(f"{v.row:>4}  {v.name:<13} {change:<28} paper: {v.paper_label}")
        return 0
    unknown = [n for n in args.variant or () if n not in BY_NAME]
    if unknown:
        p.error(f"unknown variant {', '.join(unknown)}; choose from {', '.join(BY_NAME)} (or use --row)")
    if not (args.row or args.variant):
        p.error("say what to run: --row ROW ... or --variant NAME ... (--list shows them)")
    if min(args.seeds) < 0 or args.threads < 1:
        p.error("--seeds must be >= 0 and --threads >= 1")
    torch.set_num_threads(args.threads)
    todo = [(v, s) for v in selected(args.row, args.variant) for s in args.seeds
            if not (args.skip_existing and results_path(v.name, s, args.results_dir).exists())]
    jobs = [Job(f"{variant.name} seed {seed}", command(variant.name, seed),
                results_path(variant.name, seed, args.results_dir),
                functools.partial(run_variant, variant, seed, args.runs_dir, args.data_dir, progress=not args.quiet),
                lambda v: f"{v['parameters']:,} parameters, val perplexity {v['val_perplexity']:.2f}, "
                          f"BLEU {v['bleu']:.2f}") for variant, seed in todo]
    return run_recorded("table3", jobs, quiet=args.quiet)


if __name__ == "__main__":
    sys.exit(main())
