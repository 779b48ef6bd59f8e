"""Beam size and length penalty, chosen on the validation set for one trained model.

    python -m aiayn.experiments.recipes decoding --model runs/budget/multi30k-laptop_seed1/averaged_step3950.pt \
        --name multi30k-laptop_seed1

The paper chose beam 4 and alpha 0.6 "after experimentation on the development set" (§6.1),
for WMT's long sentences. Multi30k's captions are short, and Wu et al. decoded with beam 5; so
every (beam size, alpha) of a grid decodes the validation set, and the best by cased BLEU is
chosen there. Only then are the test sentences decoded, twice: with the paper's setting and
with the chosen one, and sacreBLEU's paired bootstrap resampling (1,000 resamples of the test
sentences) says whether the chosen one's difference on test is more than the test set's
sampling noise. Writes ``results/recipes/decoding/<name>.json``.
"""

from pathlib import Path

from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from ..data.multi30k import load_split
from ..data.tokenizer import SubwordTokenizer
from ..inference.bleu import corpus_bleu
from ..train.checkpoint import build_model, load_checkpoint
from ..train.translate import translate
from .record import REPOSITORY, Recorder

RESULTS = REPOSITORY / "results" / "recipes" / "decoding"
PAPER = (4, 0.6)  # §6.1
BEAMS = (1, 2, 4, 5, 8)
ALPHAS = (0.0, 0.6, 1.0)
TEST_SPLIT = "test_2016_flickr"


def choose(checkpoint, beams=BEAMS, alphas=ALPHAS, data_dir=None, device="cpu", max_sentences=None) -> dict:
    """Decodes the validation set with every (beam, alpha) of the grid plus the paper's, picks
    the best (ties: the earlier in the grid, i.e. the smaller beam), then scores the paper's
    and the chosen setting on the test set. Returns the values of the results file."""
    ckpt = load_checkpoint(checkpoint)
    model = build_model(ckpt, device)
    tokenizer = SubwordTokenizer.from_str(ckpt["metadata"]["tokenizer"])
    val_src, val_ref = (s[:max_sentences] for s in load_split("val", data_dir))
    grid = [(b, a) for b in beams for a in alphas]
    grid += [PAPER] if PAPER not in grid else []
    rows = []
    for beam, alpha in grid:
        hypotheses = translate(model, tokenizer, val_src, beam, alpha)
        rows.append({"beam_size": beam, "alpha": alpha, "val_bleu": corpus_bleu(hypotheses, val_ref).score})
        print(f"beam {beam}, alpha {alpha}: validation BLEU {rows[-1]['val_bleu']:.2f}", flush=True)
    best = max(rows, key=lambda r: r["val_bleu"])  # max keeps the first of equal scores
    chosen = (best["beam_size"], best["alpha"])
    test_src, test_ref = (s[:max_sentences] for s in load_split(TEST_SPLIT, data_dir))
    systems = {setting: translate(model, tokenizer, test_src, *setting) for setting in dict.fromkeys([PAPER, chosen])}
    test_scores = {setting: corpus_bleu(h, test_ref) for setting, h in systems.items()}
    values = {"checkpoint": Path(checkpoint).as_posix(), "model_config": ckpt["model_config"],
              "val_sentences": len(val_src), "test_sentences": len(test_src), "grid": rows,
              "paper": {"beam_size": PAPER[0], "alpha": PAPER[1]}, "chosen": {"beam_size": chosen[0], "alpha": chosen[1]},
              "signature": test_scores[PAPER].signature,  # cased, 13a: as everywhere
              "test_bleu": {f"beam {b}, alpha {a}": score.score for (b, a), score in test_scores.items()}}
    if chosen != PAPER:  # is the chosen setting's difference on test beyond the test set's noise?
        named = [(f"beam {b}, alpha {a}", h) for (b, a), h in systems.items()]
        _, scores = PairedTest(named, {"BLEU": BLEU()}, [test_ref], test_type="bs", n_samples=1000)()
        values["test_p_value"] = scores["BLEU"][1].p_value
    return values


def run_command(args) -> None:
    if min(args.beams) < 1 or min(args.alphas) < 0:
        raise ValueError(f"--beams must be at least 1 and --alphas at least 0, got {args.beams} and {args.alphas}")
    if not args.model.is_file():
        raise FileNotFoundError(f"--model {args.model}: no such file (an averaged model of a training run)")
    with Recorder() as rec:
        values = choose(args.model, args.beams, args.alphas, args.data_dir, max_sentences=args.max_sentences)
    path = Path(args.results) / f"{args.name}.json"
    rec.write(path, values)
    print(f"chosen on validation: beam {values['chosen']['beam_size']}, alpha {values['chosen']['alpha']}; test BLEU "
          + ", ".join(f"{k}: {v:.2f}" for k, v in values["test_bleu"].items())
          + (f"; paired bootstrap p = {values['test_p_value']:.3f}" if "test_p_value" in values else "") + f" -> {path}")


def add_command(sub) -> None:
    """The ``decoding`` subcommand of ``python -m aiayn.experiments.recipes``."""
    text = "choose beam size and alpha for a trained model on the validation set, then score it on test"
    s = sub.add_parser("decoding", help=text, description=text)
    s.add_argument("--model", type=Path, required=True, help="an averaged model (averaged.pt, averaged_step*.pt)")
    s.add_argument("--name", required=True, help="the results file's name, e.g. multi30k-laptop_seed1")
    s.add_argument("--beams", nargs="+", type=int, default=list(BEAMS))
    s.add_argument("--alphas", nargs="+", type=float, default=list(ALPHAS))
    s.add_argument("--results", type=Path, default=RESULTS, help=f"results folder (default {RESULTS})")
    s.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    s.add_argument("--max-sentences", type=int, help="decode only the first N sentences of each split (tests)")
