"""Command-line tools: ``aiayn-train`` (train, average, evaluate) and ``aiayn-translate``.

    aiayn-train --config multi30k-cpu --out runs/cpu
    torchrun --nproc_per_node=2 -m aiayn.train --config multi30k-gpu --out runs/gpu
    echo "A dog runs on the beach." | aiayn-translate --checkpoint runs/cpu/averaged.pt

A mistake of the user's (a missing or damaged checkpoint or input file, data that is missing
and cannot be downloaded, a configuration the model refuses) is one line on stderr saying what
is wrong and what to do, and exit status 2; anything else is a bug and keeps its traceback.
"""

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

from ..data.batching import encode_pairs, token_batches
from ..data.multi30k import DataUnavailable, load_split
from ..data.specials import SPECIAL_TOKENS
from ..data.tokenizer import SubwordTokenizer
from ..pt.model import Transformer
from . import distributed
from .checkpoint import average_checkpoints, checkpoint_paths, load_checkpoint, save_checkpoint
from .cli_inputs import check_device, fail, load_translator, read_sentences
from .configs import CONFIGS, get_config
from .trainer import Trainer
from .translate import bleu_report, translate


def _default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _parse_set(parser, run, pairs: list[str]) -> dict:
    """--set FIELD=VALUE ... -> {field: value}, each value of its field's type."""
    fields = sorted(f.name for f in dataclasses.fields(run) if f.name != "name")
    changes = {}
    for pair in pairs:
        field, sep, text = pair.partition("=")
        if not sep or field not in fields:
            parser.error(f"--set {pair!r}: expected FIELD=VALUE with FIELD one of {', '.join(fields)}")
        current = getattr(run, field)
        kind = type(current) if current is not None else (int if text.lstrip("-").isdigit() else float)
        try:
            changes[field] = None if text.lower() == "none" else kind(text)
        except ValueError:
            parser.error(f"--set {pair!r}: {field} takes a {kind.__name__}, got {text!r}")
    return changes


def train_main(argv=None) -> None:
    """The ``aiayn-train`` console script (its return value would become the exit status)."""
    train(argv)


def train(argv=None) -> dict | None:
    """Parses ``argv`` like ``aiayn-train``, runs; returns the results (process 0) or None."""
    p = argparse.ArgumentParser(prog="aiayn-train", description="Train a Transformer on Multi30k "
                                "English->German, average the last checkpoints, report BLEU.")
    p.add_argument("--config", required=True, choices=sorted(CONFIGS))
    p.add_argument("--steps", type=int, help="number of updates (default: the configuration's)")
    p.add_argument("--label-smoothing", type=float, help="epsilon_ls of §5.4 (default: the configuration's, "
                   "0.1); 0 trains on plain cross-entropy")
    p.add_argument("--seed", type=int, help="seed of initialisation, batch order and dropout (default 0)")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE",
                   help="change other fields of the configuration (aiayn.train.configs.RunConfig), "
                   "e.g. --set max_tokens=4000 max_steps=150 warmup_steps=75")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--out", help="output folder (default: runs/<config>)")
    p.add_argument("--device", default=_default_device())
    p.add_argument("--resume", action="store_true",
                   help="continue from the newest checkpoint in --out (up to --steps or the configuration's)")
    p.add_argument("--no-eval", action="store_true", help="skip decoding the test set")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--compile", action="store_true", help="compile the training model (torch.compile): "
                   "minutes of compilation, then a faster step on a GPU (benchmarks/bench_compile.py)")
    args = p.parse_args(argv)
    run = get_config(args.config)
    # Ablations change the configuration, not the code path. On --resume the trainer's settings
    # come from the checkpoint; pass the same --seed again to keep the batch order.
    changes = {"label_smoothing": args.label_smoothing, "seed": args.seed}
    changes = {k: v for k, v in changes.items() if v is not None} | _parse_set(p, run, args.set)
    run = dataclasses.replace(run, **changes)
    check_device(p.prog, args.device)
    try:  # now, not after the data is read and the tokenizer trained
        run.model_config(run.vocab_size)
        run.train_config(args.device, max_steps=args.steps or run.max_steps)
        if run.vocab_size <= len(SPECIAL_TOKENS):
            raise ValueError(f"vocab_size={run.vocab_size} leaves no room beside {SPECIAL_TOKENS}")
    except ValueError as err:
        fail(p.prog, f"configuration {run.name} is not valid with these changes: {err}; change "
                     "the --set, --steps or --label-smoothing values")
    out = Path(args.out or f"runs/{run.name}")
    rank, world_size = distributed.init_from_env(args.device)
    say = print if rank == 0 else (lambda *a, **k: None)

    try:
        en, de = load_split("train", args.data_dir)
        val_en, val_de = load_split("val", args.data_dir)
        # The test set too, now: a missing file should stop the run before training, not after.
        test_en, test_de = (None, None) if args.no_eval else load_split("test_2016_flickr", args.data_dir)
    except DataUnavailable as err:
        fail(p.prog, str(err))
    en, de = en[: run.max_train_pairs], de[: run.max_train_pairs]
    tokenizer_path = out / "tokenizer.json"
    if rank == 0 and not (args.resume and tokenizer_path.exists()):
        out.mkdir(parents=True, exist_ok=True)
        SubwordTokenizer.train(en + de, run.vocab_size).save(tokenizer_path)
    distributed.barrier()  # the other processes read the tokenizer process 0 wrote
    tokenizer = SubwordTokenizer.load(tokenizer_path)
    batches = run.training_batches(tokenizer, en, de)
    val_batches = token_batches(encode_pairs(tokenizer, val_en, val_de), run.max_tokens, shuffle=False)

    torch.manual_seed(run.seed)
    model = Transformer(run.model_config(tokenizer.vocab_size))
    # On --resume too, the run goes to --steps, else to the configuration's max_steps.
    overrides = {"checkpoint_dir": str(out / "checkpoints"), "progress": not args.quiet,
                 "max_steps": args.steps or run.max_steps, "compile": args.compile}
    saved = checkpoint_paths(out / "checkpoints") if args.resume else []
    if saved:
        say(f"resuming from {saved[-1]}")
        trainer = Trainer.load(saved[-1], model, device=args.device, **overrides)
    else:
        trainer = Trainer(model, run.train_config(args.device, **overrides),
                          metadata={"tokenizer": tokenizer.to_str(), "run": run.name})
    say(f"{run.name}: {sum(p.numel() for p in model.parameters()):,} parameters, "
        f"{len(batches)} batches per epoch, {world_size} process(es) on {trainer.device}")
    start = time.perf_counter()
    history = trainer.fit(batches, val_batches)
    train_seconds = time.perf_counter() - start
    if world_size > 1:
        distributed.barrier()
        torch.distributed.destroy_process_group()
    if rank != 0:
        return None
    (out / "history.json").write_text(json.dumps(history, indent=1))
    result = {"config": run.name, "device": str(trainer.device), "processes": world_size,
              "label_smoothing": trainer.config.label_smoothing, "seed": trainer.config.seed,
              "steps": trainer.step, "train_seconds": train_seconds, "compiled": trainer.compiled,
              "tokens_per_s": sum(h["tokens_per_s"] for h in history) / len(history),
              "final_loss": history[-1]["loss"], "final_val_loss": history[-1].get("val_loss"),
              "changed": " ".join(f"{k}={v}" for k, v in sorted(changes.items()))}
    averaged = checkpoint_paths(out / "checkpoints")[-run.average_last:]
    model.load_state_dict(average_checkpoints(averaged))
    result["averaged_val_loss"] = trainer.evaluate(val_batches)  # the model that is scored and saved
    save_checkpoint({"model": model.state_dict(), "model_config": load_checkpoint(averaged[-1])["model_config"],
                     "metadata": trainer.metadata, "averaged": [p.name for p in averaged]},
                    out / "averaged.pt")
    if not args.no_eval:
        test_en, test_de = test_en[: run.max_test_pairs], test_de[: run.max_test_pairs]
        start = time.perf_counter()
        hypotheses = translate(model.eval(), tokenizer, test_en, run.beam_size, run.alpha,
                               progress=not args.quiet)
        result |= bleu_report(hypotheses, test_de) | {"decode_seconds": time.perf_counter() - start,
                                                       "beam_size": run.beam_size}
        (out / "test_2016_flickr.hyp.de").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(result, indent=1))
    for key, value in result.items():
        say(f"{key:>20}: {value:.4g}" if isinstance(value, float) else f"{key:>20}: {value}")
    return result


def translate_main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="aiayn-translate", description="Translate English sentences "
                                "(one per line, from FILE or stdin) to German with a trained model.")
    p.add_argument("--checkpoint", required=True, help="a checkpoint from aiayn-train, e.g. averaged.pt")
    p.add_argument("--beam", type=int, default=4, help="beam size; 1 = greedy decoding (default 4)")
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty (default 0.6)")
    p.add_argument("--device", default=_default_device())
    p.add_argument("file", nargs="?", help="input file (default: stdin)")
    args = p.parse_args(argv)
    if args.beam < 1:
        fail(p.prog, f"--beam must be 1 (greedy) or more, got {args.beam}")
    check_device(p.prog, args.device)
    model, tokenizer = load_translator(p.prog, args.checkpoint, args.device)
    lines = read_sentences(p.prog, args.file)
    todo = [i for i, line in enumerate(lines) if line.strip()]  # empty lines stay empty
    outputs = [""] * len(lines)
    for i, text in zip(todo, translate(model, tokenizer, [lines[i] for i in todo], args.beam, args.alpha)):
        outputs[i] = text
    sys.stdout.write("".join(line + "\n" for line in outputs))
