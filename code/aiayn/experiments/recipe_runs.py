"""One recipe run: ``aiayn-train`` with ``--set`` changes, then its averaged model scored on a split.

Training goes through the command line's own function (``aiayn.train.cli.train``), so a
number in a results file is what the stored ``aiayn-train`` command gives, and nothing else.
"""

import dataclasses
import json
import shlex
import time
from pathlib import Path

import torch

from ..data.multi30k import load_split
from ..data.tokenizer import SubwordTokenizer
from ..train.checkpoint import build_model, load_checkpoint
from ..train.cli import train
from ..train.configs import RunConfig, get_config
from ..train.translate import bleu_report, translate


def typed_changes(base: RunConfig, changes: dict) -> dict:
    """``changes`` with each value of its RunConfig field's type ("0.1" -> 0.1 for dropout)."""
    fields = {f.name for f in dataclasses.fields(base)}
    typed = {}
    for key, value in changes.items():
        if key not in fields or key == "name":
            raise ValueError(f"{key!r} is not a RunConfig field; choose from {', '.join(sorted(fields - {'name'}))}")
        current = getattr(base, key)
        if isinstance(value, str):
            kind = type(current) if current is not None else (int if value.lstrip("-").isdigit() else float)
            value = None if value.lower() == "none" else kind(value)
        typed[key] = value
    return typed


def run_config(base: str, changes: dict) -> RunConfig:
    config = get_config(base)
    return dataclasses.replace(config, **typed_changes(config, changes))


def training_pairs(run: RunConfig, data_dir=None) -> tuple[list[str], list[str]]:
    """The training split's sentences (en, de) that ``run`` trains on (``max_train_pairs``)."""
    en, de = load_split("train", data_dir)
    return en[: run.max_train_pairs], de[: run.max_train_pairs]


def training_batches(run: RunConfig, data_dir=None):
    """(tokenizer, shuffled training batches) of ``run``, built as ``aiayn-train`` builds them."""
    en, de = training_pairs(run, data_dir)
    tokenizer = SubwordTokenizer.train(en + de, run.vocab_size)
    return tokenizer, run.training_batches(tokenizer, en, de)


def train_command(base: str, changes: dict, seed: int, out, extra=()) -> list[str]:
    """The ``aiayn-train`` arguments of a run (without the program name)."""
    sets = [f"{k}={v}" for k, v in changes.items()]
    return ["--config", base, *(["--set", *sets] if sets else []), "--seed", str(seed), "--out", str(out), *extra]


def train_with_cli(base: str, changes: dict, seed: int, out: Path, data_dir=None, steps=None,
                   resume=False, quiet=True, device=None, compile=False) -> dict:
    """Runs ``aiayn-train`` (no test decoding) in this process; returns the RunConfig and the
    values for a results file: the command, the configuration, the training measurements."""
    extra = ["--no-eval"] + (["--quiet"] if quiet else []) + (["--resume"] if resume else [])
    extra += ["--steps", str(steps)] if steps else []
    extra += ["--data-dir", str(data_dir)] if data_dir else []
    extra += ["--device", device] if device else []
    extra += ["--compile"] if compile else []
    argv = train_command(base, changes, seed, out, extra)
    result = train(argv)
    run = dataclasses.replace(run_config(base, changes), seed=seed)
    parameters = sum(p.numel() for p in build_model(Path(out) / "averaged.pt").parameters())
    history = json.loads((Path(out) / "history.json").read_text())
    values = {"aiayn_train": shlex.join(["aiayn-train", *argv]), "config": dataclasses.asdict(run),
              "parameters": parameters,
              "val_loss_curve": [[h["step"], h["val_loss"]] for h in history if "val_loss" in h]} | {k: result[k] for k in (
                  "device", "steps", "train_seconds", "compiled", "tokens_per_s", "final_loss", "final_val_loss",
                  "averaged_val_loss")}
    return {"run": run, "values": values}


def decode_split(checkpoint, split: str, data_dir=None, run: RunConfig | None = None,
                 device: str | None = None, max_sentences: int | None = None) -> dict:
    """sacreBLEU (cased and lowercased, 13a) of an averaged model on ``split``, with beam search
    as ``run`` says (default: beam 4, alpha 0.6, as in §6.1)."""
    beam_size, alpha = (run.beam_size, run.alpha) if run else (4, 0.6)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    ckpt = load_checkpoint(checkpoint)
    model = build_model(ckpt, device)
    tokenizer = SubwordTokenizer.from_str(ckpt["metadata"]["tokenizer"])
    sources, references = load_split(split, data_dir)
    limit = max_sentences or (run.max_test_pairs if run else None)
    sources, references = sources[:limit], references[:limit]
    start = time.perf_counter()
    hypotheses = translate(model, tokenizer, sources, beam_size, alpha)
    seconds = time.perf_counter() - start
    report = bleu_report(hypotheses, references)
    return {f"{split}_{k}": v for k, v in report.items()} | {
        f"{split}_decode_seconds": seconds, "beam_size": beam_size, "alpha": alpha,
        f"{split}_sentences": len(sources), f"{split}_examples": hypotheses[:5]}
