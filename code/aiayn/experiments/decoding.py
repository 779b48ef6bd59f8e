"""Beam size and length penalty, chosen on the validation set; the test set decoded once.

    python -m aiayn.experiments.recipes decoding --model runs/budget/multi30k-laptop_seed1/averaged_step3950.pt \
        --name multi30k-laptop_seed1

The paper chose beam 4 and alpha 0.6 "after experimentation on the development set" (§6.1),
for WMT's long sentences. Multi30k's captions are short, and Wu et al. decoded with beam 5; so
every (beam size, alpha) of a grid decodes the validation set and the best by cased BLEU is the
candidate. The gate then asks whether the candidate's lead over the paper's setting is more than
the validation sentences' sampling noise: sacreBLEU's paired approximate randomisation test
(10,000 shuffles of which setting produced each sentence) gives every other setting of the grid a
p-value against the paper's, and Holm's correction runs over all of them, since the candidate was
picked as the best of them all (without it the best of many equal settings would pass far more
often than 5 %). Settings that decode the very same translations (beam 1 whatever alpha: one
hypothesis has no rival to be ranked against) are one setting: each counts once in that family
(``distinct``; ``holm_over_distinct`` does the same for a stored file, which keeps each setting's
BLEU and p-value but not its translations). The candidate is adopted only if its corrected p < 0.05, else the paper's
setting stays; tests/test_experiments_recipes.py simulates the rule's false-positive rate under
the null. (sacreBLEU's paired bootstrap is not used: it centres the absolute differences, so read
as a two-sided test it passes equal systems too often; the same simulation shows the rule it
served, the bootstrap on the best alone, adopting an equal setting in about 14 % of draws.)
Only then is test_2016_flickr decoded, once, with the adopted setting. Writes
``results/recipes/decoding/<name>.json``, the validation hypotheses of the paper's and the
candidate's settings included, and for every setting sacreBLEU's brevity penalty and the length
of its translations over the references' (``length_ratio``), which say whether a setting writes
shorter translations.
"""

from pathlib import Path

from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from .. import stats
from ..data.multi30k import load_split
from ..data.tokenizer import SubwordTokenizer
from ..inference.bleu import corpus_bleu
from ..train.checkpoint import build_model, load_checkpoint
from ..train.translate import bleu_report, translate
from .record import REPOSITORY, Recorder

RESULTS = REPOSITORY / "results" / "recipes" / "decoding"
PAPER = (4, 0.6)  # §6.1
BEAMS = (1, 2, 4, 5, 8)
ALPHAS = (0.0, 0.6, 1.0)
TEST_SPLIT = "test_2016_flickr"
ALPHA_LEVEL = 0.05
TRIALS = 10_000  # sacreBLEU's default for approximate randomisation


def setting_name(beam_size: int, alpha: float) -> str:
    return f"beam {beam_size}, alpha {alpha}"


def randomisation_p_values(hypotheses: dict, references: list[str], trials: int = TRIALS) -> dict[str, float]:
    """sacreBLEU's paired approximate randomisation test: for every system of ``hypotheses``
    (name -> sentences, the baseline first) after the first, the p-value of its BLEU difference
    to the baseline on the same sentences (two-sided; shuffles of which system produced each
    sentence). A system whose sentences are the baseline's gets 1 (sacreBLEU would give
    1 / (trials + 1): it counts only shuffles that differ by more than the observed zero)."""
    if len(hypotheses) < 2:
        raise ValueError(f"hypotheses: a baseline and at least one other system, got {len(hypotheses)}")
    names, baseline = list(hypotheses), list(next(iter(hypotheses.values())))
    _, scores = PairedTest([(name, list(h)) for name, h in hypotheses.items()], {"BLEU": BLEU()}, [references],
                           test_type="ar", n_samples=trials)()
    return {name: 1.0 if list(hypotheses[name]) == baseline else float(result.p_value)
            for name, result in zip(names[1:], scores["BLEU"][1:])}


def gate_p_value(hypotheses: dict, references: list[str], candidate: str, trials: int = TRIALS) -> float:
    """Holm-corrected p-value of ``candidate`` against the baseline (the first of ``hypotheses``)
    in the family of every other system of ``hypotheses``: the candidate was picked as the best of
    them all, so its lead alone would pass by chance more often than 5 %."""
    return holm_corrected(randomisation_p_values(hypotheses, references, trials), candidate)


def holm_corrected(p_values: dict[str, float], candidate: str) -> float:
    """``candidate``'s p-value after Holm's correction over the family ``p_values`` (name -> p)."""
    if candidate not in p_values:
        raise ValueError(f"candidate: {candidate!r} is not one of the systems after the baseline {list(p_values)}")
    return float(stats.holm(list(p_values.values()))[list(p_values).index(candidate)])


def lengths(hypotheses: list[str], references: list[str]) -> dict:
    """sacreBLEU's brevity penalty (in [0, 1]) and the translations' length over the references'
    (13a tokens), cased BLEU's own counts."""
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"hypotheses: one per reference, got {len(hypotheses)} for {len(references)}")
    result = BLEU().corpus_score(list(hypotheses), [list(references)])
    return {"brevity_penalty": float(result.bp), "length_ratio": result.sys_len / result.ref_len}


def distinct(hypotheses: dict) -> dict:
    """``hypotheses`` (setting -> translations) without the settings whose translations equal an
    earlier setting's: a setting that duplicates another is not one more hypothesis to correct for."""
    kept = {}
    for setting, sentences in hypotheses.items():
        if not any(list(sentences) == list(seen) for seen in kept.values()):
            kept[setting] = sentences
    return kept


def duplicates(grid: list[dict], p_values: dict[str, float]) -> dict[str, list[str]]:
    """Settings of a stored grid that decoded the same translations, as far as the file tells:
    the same validation BLEU to the last bit and the same p-value against the paper's (the test
    shuffles the same way for every setting, so equal translations give equal p). Kept name ->
    the later names it stands for; only settings with a p-value (the paper's has none)."""
    bleu = {setting_name(r["beam_size"], r["alpha"]): r["val_bleu"] for r in grid}
    unknown = sorted(set(p_values) - set(bleu))
    if unknown:
        raise ValueError(f"p_values: settings not in the grid: {unknown}")
    found: dict[str, list[str]] = {}
    for name, p in p_values.items():
        twin = next((k for k in found if bleu[k] == bleu[name] and p_values[k] == p), None)
        if twin is None:
            found[name] = []
        else:
            found[twin].append(name)
    return found


def holm_over_distinct(grid: list[dict], p_values: dict[str, float]) -> dict[str, float]:
    """Holm-corrected p-values over the distinct settings of a stored grid (``duplicates``):
    setting name -> corrected p, a duplicate getting its twin's."""
    kept = duplicates(grid, p_values)
    corrected = dict(zip(kept, stats.holm([p_values[k] for k in kept])))
    return {name: float(corrected[k]) for k, twins in kept.items() for name in (k, *twins)}


def choose(checkpoint, beams=BEAMS, alphas=ALPHAS, data_dir=None, device="cpu", max_sentences=None) -> dict:
    """Decodes the validation set with every (beam, alpha) of the grid plus the paper's, picks
    the best (ties: the earlier in the grid, i.e. the smaller beam), adopts it over the paper's
    only if the gate on validation passes at 5 % (``gate_p_value``), then decodes the test set
    once with the adopted setting. Returns the values of the results file."""
    ckpt = load_checkpoint(checkpoint)
    model = build_model(ckpt, device)
    tokenizer = SubwordTokenizer.from_str(ckpt["metadata"]["tokenizer"])
    val_src, val_ref = (s[:max_sentences] for s in load_split("val", data_dir))
    grid = [(b, a) for b in beams for a in alphas]
    grid += [PAPER] if PAPER not in grid else []
    rows, hypotheses = [], {}
    for beam, alpha in grid:
        hypotheses[beam, alpha] = translate(model, tokenizer, val_src, beam, alpha)
        rows.append({"beam_size": beam, "alpha": alpha, "val_bleu": corpus_bleu(hypotheses[beam, alpha], val_ref).score,
                     **lengths(hypotheses[beam, alpha], val_ref)})
        print(f"beam {beam}, alpha {alpha}: validation BLEU {rows[-1]['val_bleu']:.2f}", flush=True)
    best = max(rows, key=lambda r: r["val_bleu"])  # max keeps the first of equal scores
    chosen = (best["beam_size"], best["alpha"])
    values = {"checkpoint": Path(checkpoint).as_posix(), "model_config": ckpt["model_config"],
              "val_sentences": len(val_src), "grid": rows,
              "paper": {"beam_size": PAPER[0], "alpha": PAPER[1]}, "chosen": {"beam_size": chosen[0], "alpha": chosen[1]},
              "val_hypotheses": {setting_name(*s): hypotheses[s] for s in dict.fromkeys([PAPER, chosen])}}
    adopted = PAPER
    if chosen != PAPER:  # is the candidate's lead on validation beyond the validation sentences' noise?
        family = distinct({setting_name(*s): hypotheses[s] for s in [PAPER, *(s for s in grid if s != PAPER)]})
        family.setdefault(setting_name(*chosen), hypotheses[chosen])  # the best keeps its own name
        values["val_p_values"] = randomisation_p_values(family, val_ref)  # each against the paper's, uncorrected
        values["val_p_value"] = holm_corrected(values["val_p_values"], setting_name(*chosen))
        values["val_test"] = (f"sacreBLEU paired approximate randomisation, {TRIALS:,} shuffles, Holm over the "
                              f"{len(family) - 1} distinct settings the best was picked from")
        adopted = chosen if values["val_p_value"] < ALPHA_LEVEL else PAPER
    values["adopted"] = {"beam_size": adopted[0], "alpha": adopted[1]}
    # The test set, once: the adopted setting only.
    test_src, test_ref = (s[:max_sentences] for s in load_split(TEST_SPLIT, data_dir))
    report = bleu_report(translate(model, tokenizer, test_src, *adopted), test_ref)
    values |= {"test_sentences": len(test_src), "test_setting": setting_name(*adopted),
               "test_bleu": report["bleu"], "test_bleu_lowercase": report["bleu_lowercase"],
               "signature": report["signature"], "signature_lowercase": report["signature_lowercase"]}
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
    chosen, adopted = (setting_name(**values[k]) for k in ("chosen", "adopted"))
    gate = f"; gate on validation (randomisation, Holm) p = {values['val_p_value']:.3f}" if "val_p_value" in values else ""
    print(f"best on validation: {chosen}{gate}; adopted: {adopted}; test_2016_flickr, decoded once with it: "
          f"BLEU {values['test_bleu']:.2f} -> {path}")


def add_command(sub) -> None:
    """The ``decoding`` subcommand of ``python -m aiayn.experiments.recipes``."""
    text = ("choose beam size and alpha for a trained model on the validation set (a paired randomisation test there), "
            "then decode the test set once with the adopted setting")
    s = sub.add_parser("decoding", help=text, description=text)
    s.add_argument("--model", type=Path, required=True, help="an averaged model (averaged.pt, averaged_step*.pt)")
    s.add_argument("--name", required=True, help="the results file's name, e.g. multi30k-laptop_seed1")
    s.add_argument("--beams", nargs="+", type=int, default=list(BEAMS))
    s.add_argument("--alphas", nargs="+", type=float, default=list(ALPHAS))
    s.add_argument("--results", type=Path, default=RESULTS, help=f"results folder (default {RESULTS})")
    s.add_argument("--data-dir", help="folder holding multi30k/ (default: $AIAYN_DATA)")
    s.add_argument("--max-sentences", type=int, help="decode only the first N sentences of each split (tests)")
