"""What the "After the paper" experiments share: a copy-task run, a Multi30k run, greedy
translation with the key-value cache a model needs, and verdicts paired by seed.

Copy task (``copy_run``): the copy-task chapter's small model (d_model 64, 4 heads, 2 + 2 layers,
d_ff 256, no dropout, one embedding matrix), the paper's Adam and schedule at a quarter of its
rate (warm-up 200), label smoothing 0.1, batches of 64 random sequences of 1-10 symbols. Scored
on 500 held-out sequences never trained on: the validation loss (cross-entropy per target token,
no smoothing, teacher forcing) and the share copied exactly by greedy decoding.

Multi30k (``multi30k_run``): ``aiayn-train --config multi30k-cpu --seed k`` (d_model 128, 4
heads, 2 + 2 layers, d_ff 512, 600 updates of 1,000 tokens, about three minutes on one thread)
with the model's configuration changed; scored like Table 3, on the last model (no averaging):
the validation loss every 150 updates, and cased sacreBLEU of greedy decoding on the 1,014
validation sentences. The test set stays sealed.

Verdicts (``verdicts``): each arm against the base, seed k against seed k (same batches; the same
initial weights only where both models draw the same shapes in the same order: Pre-LN, RMSNorm
and RoPE, not SwiGLU, whose extra matrix moves every later layer's draw, nor grouped-query
attention or the decoder-only model), a paired t-test per metric, Holm's correction
over the experiment's family, in the course's words: "beyond seed noise" (better or worse) or
"inconclusive".
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
from torch.optim.lr_scheduler import LambdaLR

from ..config import TransformerConfig
from ..data.batching import encode_pairs, pad, source_ids, token_batches
from ..data.copy_task import CopyTask, greedy_exact_match
from ..data.multi30k import load_split
from ..data.specials import BOS_ID, EOS_ID, PAD_ID
from ..data.tokenizer import SubwordTokenizer
from ..pt.decoding import greedy_decode
from ..pt.model import Transformer
from ..pt.variant_cache import incremental_decoder
from ..stats import ALPHA, holm, paired
from ..train.configs import get_config
from ..train.loss import token_loss_sum
from ..train.translate import MAX_EXTRA_LEN, bleu_report
from ..train.trainer import TrainConfig, Trainer

COPY_TASK = {"vocab_size": 14, "min_len": 1, "max_len": 10}
COPY_HELD_OUT = {"num": 1000, "seed": 1, "max_share": 0.05}  # the first 500: validation
COPY_MODEL = {"src_vocab_size": 14, "tgt_vocab_size": 14, "d_model": 64, "num_heads": 4, "num_layers": 2,
              "d_ff": 256, "dropout": 0.0, "max_len": 64, "share_embeddings": True}
COPY_RECIPE = {"warmup_steps": 200, "lr_factor": 0.25, "label_smoothing": 0.1}
COPY_BATCH = 64
MULTI30K = "multi30k-cpu"
WORDS = {"better": "beyond seed noise, better", "worse": "beyond seed noise, worse", "inconclusive": "inconclusive"}


def copy_validation() -> tuple[list, list]:
    """(held-out sequences kept out of training, the first 500 of them: validation)."""
    held = CopyTask(**COPY_TASK).held_out(**COPY_HELD_OUT)
    return held, held[:COPY_HELD_OUT["num"] // 2]


@torch.no_grad()
def copy_loss(model, task: CopyTask, sequences, batch_size: int = 250) -> float:
    """Cross-entropy per target token (no smoothing, teacher forcing, eval mode) on ``sequences``,
    as ``Trainer.evaluate`` computes it."""
    was_training, total, tokens = model.training, 0.0, 0
    model.eval()
    try:
        for i in range(0, len(sequences), batch_size):
            batch = task.batch(sequences[i:i + batch_size])
            total += float(token_loss_sum(model(batch.src, batch.decoder_input), batch.labels))
            tokens += batch.num_target_tokens
    finally:
        model.train(was_training)
    return total / tokens


def copy_run(config: TransformerConfig, seed: int, steps: int, recipe: dict | None = None,
             model_class=Transformer, reverse: bool = False, batch_size: int = COPY_BATCH, keep=None,
             rate=None, score: bool = True) -> dict:
    """Trains ``model_class(config)`` on the copy task (or the reverse task) for ``steps`` updates
    from seed ``seed`` (initial weights and batches); returns its scores on the validation set.
    ``rate``: a function of the update number (from 1) that replaces the §5.3 schedule of
    ``recipe``; ``keep``: a list the trained model is appended to, for further scoring;
    ``score=False``: the training record only (the tests re-run the first updates)."""
    task = CopyTask(**COPY_TASK, reverse=reverse)
    held, validation = copy_validation()
    torch.manual_seed(seed)
    model = model_class(config)
    trainer = Trainer(model, TrainConfig(max_steps=steps, **(recipe or COPY_RECIPE), seed=seed,
                                         log_every=25, progress=False))
    if rate is not None:
        trainer.scheduler = LambdaLR(trainer.optimizer, lambda done: rate(done + 1))
    trainer.fit(task.batches(batch_size=batch_size, num_batches=100, seed=seed, exclude=held))
    losses = [h["loss"] for h in trainer.history]
    if keep is not None:
        keep.append(model)
    trained = {"seed": seed, "steps": trainer.step, "parameters": sum(p.numel() for p in model.parameters()),
               "loss_curve": [[h["step"], round(h["loss"], 5)] for h in trainer.history],
               "diverged": not all(math.isfinite(x) for x in losses)}
    if not score:
        return trained
    return trained | {"val_loss": copy_loss(model, task, validation),
                      "exact_match": greedy_exact_match(model, task, validation)}


@dataclasses.dataclass
class Multi30k:
    """The data of every Multi30k run: the tokenizer (trained once, as aiayn-train trains it on
    the training split) and the encoded pairs."""

    tokenizer: SubwordTokenizer
    train_en: list
    train_de: list
    val_en: list
    val_de: list


def multi30k_data(data_dir=None) -> Multi30k:
    run = get_config(MULTI30K)
    en, de = load_split("train", data_dir)
    en, de = en[: run.max_train_pairs], de[: run.max_train_pairs]
    val_en, val_de = load_split("val", data_dir)
    return Multi30k(SubwordTokenizer.train(en + de, run.vocab_size), en, de, val_en, val_de)


def multi30k_run(changes: dict, seed: int, data: Multi30k, steps: int | None = None, decode: bool = True) -> dict:
    """``aiayn-train --config multi30k-cpu --seed <seed>`` with the model configuration's fields
    ``changes`` (``TransformerConfig`` fields) changed; scored on the validation set."""
    run = dataclasses.replace(get_config(MULTI30K), seed=seed)
    batches = run.training_batches(data.tokenizer, data.train_en, data.train_de)
    val_batches = token_batches(encode_pairs(data.tokenizer, data.val_en, data.val_de), run.max_tokens, shuffle=False)
    torch.manual_seed(seed)
    config = dataclasses.replace(run.model_config(data.tokenizer.vocab_size), **changes)
    model = Transformer(config)
    # Every update's loss logged (log_every=1), so a test can re-run the first few and compare.
    trainer = Trainer(model, run.train_config("cpu", max_steps=steps or run.max_steps, progress=False, log_every=1))
    history = trainer.fit(batches, val_batches)
    values = {"changes": changes, "seed": seed, "steps": trainer.step,
              "parameters": sum(p.numel() for p in model.parameters()),
              "loss_curve": [round(h["loss"], 5) for h in history],
              "val_loss_curve": [[h["step"], h["val_loss"]] for h in history if "val_loss" in h],
              "val_loss": history[-1]["val_loss"], "train_loss": float(np.mean([h["loss"] for h in history[-20:]]))}
    if decode:
        hypotheses, cache = greedy_translate(model, data.tokenizer, data.val_en)
        report = bleu_report(hypotheses, data.val_de)
        values |= {"bleu": report["bleu"], "signature": report["signature"], "decoding": "greedy, key-value cache",
                   "cache_bytes_per_token_and_layer": cache, "examples": hypotheses[:3]}
    return values


@torch.no_grad()
def greedy_translate(model, tokenizer, sentences: list[str], batch_size: int = 100) -> tuple[list[str], dict]:
    """Greedy decoding of ``sentences`` (at most source length + 50 tokens, §6.1), longest first in
    batches, by ``greedy_decode`` with the cache ``model`` needs (``variant_cache``). Returns the
    translations and the bytes that cache holds per target token and layer ("self") and per source
    token and layer ("cross") (``cache_bytes``)."""
    encoded = [source_ids(ids) for ids in tokenizer.encode_batch(list(sentences))]
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
    outputs = [None] * len(encoded)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        src = pad([encoded[i] for i in chunk])
        ys = greedy_decode(model, src, src.shape[1] + MAX_EXTRA_LEN, BOS_ID, EOS_ID)
        for i, row in zip(chunk, ys[:, 1:].tolist()):
            outputs[i] = tokenizer.decode(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return outputs, cache_bytes(model, src)


@torch.no_grad()
def cache_bytes(model, src: torch.Tensor) -> dict:
    """Bytes the key-value cache of ``model`` (``variant_cache.incremental_decoder``) holds per
    target token and layer ("self") and per source token and layer ("cross"), counted from the
    cache's own tensors after one decoding step on ``src`` (B, S): the same for every step and batch."""
    src_mask = (src != PAD_ID)[:, None, None, :]
    decoder = incremental_decoder(model.eval(), model.encode(src, src_mask), src_mask)
    decoder(torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long))
    layers = model.config.num_layers
    self_bytes = sum(c["self_k"].nbytes + c["self_v"].nbytes for c in decoder.cache)
    cross_bytes = sum(c["cross_k"].nbytes + c["cross_v"].nbytes for c in decoder.cache)
    return {"self": self_bytes / (decoder.length * src.shape[0] * layers), "cross": cross_bytes / (src.numel() * layers)}


def verdicts(pairs: dict[str, tuple[list, list]], metrics: dict[str, bool]) -> dict:
    """``pairs``: name -> (the arm's runs, its base's runs), one run per seed, paired by seed;
    ``metrics``: name -> whether lower is better. A paired t-test per pair and metric, Holm's
    correction over the whole family. Returns {name: {metric: {"arm", "base" (values by seed),
    "difference" (mean of arm - base), "p", "holm_p", "verdict" (better / worse / inconclusive),
    "words" (the course's: "beyond seed noise, better" ... or "inconclusive")}}}."""
    comparisons = {}
    for name, (arm, base) in pairs.items():
        if [r["seed"] for r in arm] != [r["seed"] for r in base]:
            raise ValueError(f"{name}: seeds {[r['seed'] for r in arm]} do not pair with the base's "
                             f"{[r['seed'] for r in base]}")
        for metric in metrics:
            comparisons[(name, metric)] = paired([r[metric] for r in arm], [r[metric] for r in base])
    adjusted = dict(zip(comparisons, holm([c.p for c in comparisons.values()])))
    out = {}
    for (name, metric), c in comparisons.items():
        kind = "inconclusive"
        if adjusted[(name, metric)] < ALPHA:
            kind = "better" if (c.difference > 0) != metrics[metric] else "worse"
        arm, base = pairs[name]
        out.setdefault(name, {})[metric] = {
            "arm": [r[metric] for r in arm], "base": [r[metric] for r in base],
            "difference": float(c.difference), "p": float(c.p), "holm_p": float(adjusted[(name, metric)]),
            "verdict": kind, "words": WORDS[kind]}
    return out


MULTI30K_METRICS = {"val_loss": True, "bleu": False}


def copy_arguments(prog: str, doc: str, steps: int, seeds, results, argv=None):
    """The command line of a copy-task experiment (--steps, --seeds, --out), parsed; None after
    one line on stderr when the values cannot run (the command then exits with status 2)."""
    import argparse
    import sys

    # the module docstring's first paragraph, whole: its first line alone stops mid-sentence
    p = argparse.ArgumentParser(prog=prog, description=" ".join(doc.split("\n\n")[0].split()))
    p.add_argument("--steps", type=int, default=steps, help="updates per run (default %(default)s)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(seeds),
                   help=f"seeds (default {' '.join(map(str, seeds))})")
    p.add_argument("--out", default=str(results), help="results file (default: %(default)s)")
    args = p.parse_args(argv)
    if args.steps < 1 or min(args.seeds) < 0 or len(set(args.seeds)) != len(args.seeds):
        print(f"{prog}: error: need --steps >= 1 and distinct seeds >= 0", file=sys.stderr)
        return None
    return args


def multi30k_experiment(prog: str, results, arms: dict[str, dict], argv=None, extra=None) -> int:
    """The command line of a Multi30k experiment: trains each arm (name -> ``TransformerConfig``
    changes) with the seeds of the base file (``after_base``), pairs them with the base's runs,
    judges validation loss and BLEU (Holm over arms and both metrics) and writes the results file.
    ``extra()``: more values for the file (measured before training)."""
    import argparse
    import sys
    from pathlib import Path

    from .after_base import RESULTS as BASE_RESULTS, load_base
    from .record import Recorder

    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--steps", type=int, help="updates per run (default: the base file's)")
    p.add_argument("--seeds", type=int, nargs="+", help="seeds (default: the base file's)")
    p.add_argument("--base", default=str(BASE_RESULTS), help="the base's results file (default: %(default)s)")
    p.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    p.add_argument("--out", default=str(results), help="results file (default: %(default)s)")
    args = p.parse_args(argv)
    try:
        base = load_base(args.base, args.seeds, args.steps)
    except (OSError, ValueError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    seeds, steps = base["values"]["seeds"], base["values"]["steps"]
    torch.set_num_threads(1)
    with Recorder() as rec:
        more = extra() if extra else {}
        data = multi30k_data(args.data_dir)
        runs = {arm: [multi30k_run(changes, seed, data, steps) for seed in seeds] for arm, changes in arms.items()}
    if rec.provenance["commit"] != base["commit"] or rec.provenance["code_changes"] or base["code_changes"]:
        print(f"{prog}: warning: the base file {args.base} was written at commit {base['commit']} "
              f"({len(base['code_changes'])} files under code/ changed), these arms at "
              f"{rec.provenance['commit']} ({len(rec.provenance['code_changes'])} changed): the pairs may not "
              "be of one code", file=sys.stderr)
    base_runs = base["values"]["runs"]
    judged = verdicts({arm: (r, base_runs) for arm, r in runs.items()}, MULTI30K_METRICS) if len(seeds) >= 2 else {}
    values = {**more, "config": MULTI30K, "steps": steps, "seeds": seeds, "arms": arms,
              "base_file": Path(args.base).name, "base_commit": base["commit"], "runs": runs, "verdicts": judged}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s)")
    for arm, by_metric in judged.items():
        for metric, v in by_metric.items():
            print(f"{arm:<10} {metric:<9} base {np.mean(v['base']):7.3f}  {arm} {np.mean(v['arm']):7.3f}  {v['words']}")
    return 0
