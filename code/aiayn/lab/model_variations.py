"""The miniature Table 3 (chapter model_variations): results files in, table, verdicts and plot out.

    summaries = summarize(load_results())            # one Summary per variant that has runs
    print(table(summaries))                          # every variant, ours beside the paper's
    print(verdict_table(summaries))                  # differences from the base and verdicts

Every number comes from the committed files that ``python -m aiayn.experiments.table3`` wrote
(results/table3/<variant>_seed<k>.json); nothing here trains. A variant without files is
listed as pending, with 0 seeds.

The yardstick for "did this change matter" is the seed spread. With n seeds per variant and
sample standard deviations s, the standard error of a difference of two means is
sqrt(s_variant^2 / n_variant + s_base^2 / n_base); a difference larger than ``NOISE_SE``
standard errors is called real, anything smaller "within noise". A spread needs seeds: no
verdict is given unless the variant and the base both have ``MIN_SEEDS`` of them.
"""

from __future__ import annotations

import math
import statistics
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..experiments.record import read_results
from ..experiments.table3 import BY_NAME, RESULTS_DIR, VARIANTS, Variant

MIN_SEEDS = 3           # fewer seeds on either side: "pending", never a verdict
NOISE_SE = 2.0          # a difference of more than 2 standard errors counts
# The paper's differences that it calls no difference ("nearly identical", §6.2): BLEU within
# 0.1 of the base's 25.8, perplexity within 1% of its 4.92.
PAPER_SAME = {"bleu": 0.1, "log_ppl": 0.01}
VERDICTS_ZH = {"reproduces": "复现", "within noise": "在噪声之内",
               "reverses at this scale": "在此规模下反转", "differs at this scale": "在此规模下出现差异"}


@dataclass(frozen=True)
class Stat:
    """Mean and sample standard deviation (n - 1) over seeds; sd is 0 for one seed."""

    values: tuple

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sd(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else 0.0


@dataclass(frozen=True)
class Summary:
    """One variant over its seeds."""

    variant: Variant
    seeds: tuple
    parameters: int
    bleu: Stat
    log_ppl: Stat        # validation loss per subword = ln(perplexity)
    seconds: Stat        # wall seconds per run (training + decoding), on a shared machine
    cpu_seconds: Stat
    machines: tuple
    threads: tuple
    commits: tuple

    @property
    def name(self) -> str:
        return self.variant.name

    @property
    def ppl(self) -> Stat:
        return Stat(tuple(math.exp(x) for x in self.log_ppl.values))


def load_results(results_dir=RESULTS_DIR) -> list[dict]:
    """Every results file of the folder, checked by ``read_results``."""
    paths = sorted(Path(results_dir).glob("*_seed*.json"))
    if not paths:
        raise FileNotFoundError(f"no results files in {results_dir}: run python -m aiayn.experiments.table3")
    return [read_results(p) for p in paths]


def summarize(records: list[dict]) -> list[Summary]:
    """Groups records by variant, in the order of ``table3.VARIANTS``; variants without
    records are left out."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        name = record["values"]["variant"]
        if name not in BY_NAME:
            raise ValueError(f"results file for unknown variant {name!r}")
        groups.setdefault(name, []).append(record)
    summaries = []
    for variant in VARIANTS:
        group = sorted(groups.get(variant.name, []), key=lambda r: r["values"]["seed"])
        if not group:
            continue
        values = [r["values"] for r in group]
        if len({v["seed"] for v in values}) != len(values):
            raise ValueError(f"{variant.name}: two results files for one seed")
        if len({v["parameters"] for v in values}) != 1:
            raise ValueError(f"{variant.name}: seeds disagree on the parameter count")
        summaries.append(Summary(
            variant, tuple(v["seed"] for v in values), values[0]["parameters"],
            Stat(tuple(v["bleu"] for v in values)), Stat(tuple(v["val_loss"] for v in values)),
            Stat(tuple(r["seconds"] for r in group)), Stat(tuple(r["cpu_seconds"] for r in group)),
            tuple(sorted({r["machine"] for r in group})), tuple(sorted({r["threads"] for r in group})),
            tuple(sorted({r["commit"] for r in group}))))
    return summaries


def difference(summary: Summary, base: Summary, metric: str) -> tuple[float, float]:
    """(variant mean - base mean, standard error of that difference) for "bleu" or "log_ppl"."""
    a, b = getattr(summary, metric), getattr(base, metric)
    return a.mean - b.mean, math.sqrt(a.sd ** 2 / a.n + b.sd ** 2 / b.n)


def paper_difference(variant: Variant, metric: str) -> float:
    """The paper's variant minus its base, in BLEU points or in ln(perplexity)."""
    base = BY_NAME["base"].paper
    if metric == "bleu":
        return variant.paper[1] - base[1]
    return math.log(variant.paper[0]) - math.log(base[0])


def pending(n: int, n_base: int, lang: str = "en") -> str:
    """The verdict column of a variant that lacks seeds (its own, or the base's)."""
    if lang == "zh":
        return f"待定（{n} 个种子" + (f"，基线 {n_base} 个）" if n >= MIN_SEEDS else "）")
    return f"pending ({n} seed{'s' * (n != 1)}" + (f", base {n_base})" if n >= MIN_SEEDS else ")")


def verdict(summary: Summary | None, base: Summary | None, metric: str, lang: str = "en") -> str:
    """Our difference from the base against the paper's, with the seed spread as yardstick:
    "reproduces" (same direction, beyond noise; or no difference where the paper saw none),
    "within noise" (the paper saw a difference, we cannot tell one from seed noise),
    "reverses at this scale" (beyond noise, the other way), or "differs at this scale"
    (a difference beyond noise where the paper saw none). With fewer than ``MIN_SEEDS`` seeds
    of the variant or of the base (``None``: no runs): "pending (n seeds)"."""
    n, n_base = (s.bleu.n if s else 0 for s in (summary, base))
    if min(n, n_base) < MIN_SEEDS:
        return pending(n, n_base, lang)
    ours, se = difference(summary, base, metric)
    paper = paper_difference(summary.variant, metric)
    real = abs(ours) > NOISE_SE * se
    if abs(paper) <= PAPER_SAME[metric] + 1e-9:
        found = "differs at this scale" if real else "reproduces"
    elif not real:
        found = "within noise"
    else:
        found = "reproduces" if (ours > 0) == (paper > 0) else "reverses at this scale"
    return VERDICTS_ZH[found] if lang == "zh" else found


def change_label(variant: Variant) -> str:
    return " ".join(f"{k}={v}" for k, v in variant.changes.items()) or "(multi30k-cpu)"


def _by_name(summaries: list[Summary]) -> dict[str, Summary]:
    return {s.name: s for s in summaries}


def _width(text: str) -> int:
    """Columns a monospaced terminal gives ``text``: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _cell(text: str, width: int, right: bool = False) -> str:
    fill = " " * max(0, width - _width(text))
    return fill + text if right else text + fill


def _mean_sd(stat: Stat, digits: int = 2) -> str:
    """"mean ± sd", the sd left out for one seed (no spread to show)."""
    sd = f" ± {stat.sd:.{digits}f}" if stat.n > 1 else ""
    return f"{stat.mean:.{digits}f}{sd}"


HEADERS_ZH = {"row": "行", "variant": "变体", "ours: change": "本书：改动", "params": "参数",
              "PPL (val)": "困惑度（验证）", "BLEU (val)": "BLEU（验证）", "paper: change": "论文：改动",
              "PPL": "困惑度", "ΔBLEU ours": "本书 ΔBLEU", "paper": "论文", "verdict (BLEU)": "结论（BLEU）",
              "PPL ratio ours": "本书困惑度之比", "verdict (PPL)": "结论（困惑度）"}


def _row(cells: list[tuple[str, int, bool]], lang: str, header: bool = False) -> str:
    return " ".join(_cell(HEADERS_ZH.get(t, t) if header and lang == "zh" else t, w, r)
                    for t, w, r in cells).rstrip()


def table(summaries: list[Summary], lang: str = "en") -> str:
    """Every variant of ``table3.VARIANTS``: ours (mean ± sd over n seeds) beside the paper's
    line. Perplexity per subword and BLEU on the validation set; "—" where no run exists yet."""
    have = _by_name(summaries)
    widths = [(4, False), (13, False), (20, False), (6, True), (2, True), (14, True), (14, True),
              (1, False), (26, False), (6, True), (5, True), (6, True)]
    names = ["row", "variant", "ours: change", "params", "n", "PPL (val)", "BLEU (val)", "|",
             "paper: change", "PPL", "BLEU", "params"]
    head = _row([(t, w, r) for t, (w, r) in zip(names, widths)], lang, header=True)
    lines = [head, "-" * _width(head)]
    for v in VARIANTS:
        s, paper = have.get(v.name), v.paper
        ours = (["—", "0", "—", "—"] if s is None else
                [f"{s.parameters / 1e6:.2f}M", str(s.bleu.n), _mean_sd(s.ppl), _mean_sd(s.bleu)])
        texts = [v.row, v.name, change_label(v), *ours, "|", v.paper_label, f"{paper[0]:.2f}",
                 f"{paper[1]:.1f}", f"{paper[2]}M" if paper[2] else "—"]
        lines.append(_row([(t, w, r) for t, (w, r) in zip(texts, widths)], lang))
    return "\n".join(lines)


def verdict_table(summaries: list[Summary], lang: str = "en") -> str:
    """Each variant's difference from the base, ours (± its standard error where both sides have
    two seeds or more; "—" without a run) and the paper's, and the verdicts: BLEU in points,
    perplexity as a ratio to the base's."""
    have = _by_name(summaries)
    base = have.get("base")
    widths = [(13, False), (2, True), (14, True), (5, True), (22, False), (14, True), (5, True), (0, False)]
    names = ["variant", "n", "ΔBLEU ours", "paper", "verdict (BLEU)", "PPL ratio ours", "paper", "verdict (PPL)"]
    head = _row([(t, w, r) for t, (w, r) in zip(names, widths)], lang, header=True)
    lines = [head, "-" * (_width(head) + 4)]
    for v in VARIANTS[1:]:
        s = have.get(v.name)
        paper_bleu, paper_ppl = (paper_difference(v, m) for m in ("bleu", "log_ppl"))
        if s is None or base is None:
            bleu = ppl = "—"
        else:
            (d_bleu, se_bleu), (d_ppl, se_ppl) = (difference(s, base, m) for m in ("bleu", "log_ppl"))
            spread = min(s.bleu.n, base.bleu.n) > 1
            bleu = f"{d_bleu:+.2f}" + (f" ± {se_bleu:.2f}" if spread else "")
            ppl = f"{math.exp(d_ppl):.3f}" + (f" ± {se_ppl:.3f}" if spread else "")
        texts = [v.name, str(s.bleu.n if s else 0), bleu, f"{paper_bleu:+.1f}", verdict(s, base, "bleu", lang),
                 ppl, f"{math.exp(paper_ppl):.3f}", verdict(s, base, "log_ppl", lang)]
        lines.append(_row([(t, w, r) for t, (w, r) in zip(texts, widths)], lang))
    return "\n".join(lines)


def plot_variations(summaries: list[Summary], axes, tr=lambda en, zh: en) -> None:
    """Three panels (``axes``, not sharing y), the variants with runs top to bottom in the table's
    order, each labelled with its number of seeds. Left and middle:
    BLEU and perplexity, every seed a dot, the mean a square (± sd where there are two seeds or
    more), the base's mean a dashed line (its ± sd shaded). Right: difference from the base in
    BLEU, ours (± ``NOISE_SE`` standard errors; hollow while pending) and the paper's. One legend
    below the panels: the figure needs a constrained layout."""
    import numpy as np

    have = _by_name(summaries)
    base = have["base"]
    y = np.arange(len(summaries))[::-1]
    for ax, metric, label in ((axes[0], "bleu", tr("BLEU, validation (beam 4)", "BLEU，验证集（束宽 4）")),
                              (axes[1], "ppl", tr("perplexity per subword, validation", "每子词困惑度，验证集"))):
        b = getattr(base, metric)
        ax.axvline(b.mean, color="0.5", ls="--", lw=1)
        if b.n > 1:
            ax.axvspan(b.mean - b.sd, b.mean + b.sd, color="0.88", label=tr("base: mean ± sd", "基线：均值 ± 标准差"))
        for yi, s in zip(y, summaries):
            stat = getattr(s, metric)
            ax.plot(stat.values, [yi] * stat.n, "o", ms=3, color="0.35", alpha=0.7)
            ax.errorbar(stat.mean, yi, xerr=stat.sd if stat.n > 1 else None, fmt="s", ms=5, color="C0", capsize=3)
        ax.set_xlabel(label)
    axes[0].set_yticks(y, labels=[f"{s.name} ({s.bleu.n})" for s in summaries])
    axes[0].set_title(tr("ours: seeds (dots), mean (square)", "本书：各种子（点）与均值（方块）"), fontsize=10)
    rest = [(yi, s) for yi, s in zip(y, summaries) if s is not base]
    right = axes[2]
    right.axvline(0, color="0.5", lw=1)
    for yi, s in rest:
        d, se = difference(s, base, "bleu")
        judged = min(s.bleu.n, base.bleu.n) >= MIN_SEEDS
        right.errorbar(d, yi + 0.15, xerr=NOISE_SE * se if se > 0 else None, fmt="s", ms=5, capsize=3,
                       color="C0", mfc="C0" if judged else "white")
    right.plot([], [], "s", color="C0", label=tr(f"ours ± {NOISE_SE:g} SE", f"本书 ± {NOISE_SE:g} 倍标准误"))
    right.plot([], [], "s", color="C0", mfc="white", label=tr(f"ours, < {MIN_SEEDS} seeds", f"本书，种子不足 {MIN_SEEDS} 个"))
    right.plot([paper_difference(s.variant, "bleu") for _, s in rest], [yi - 0.15 for yi, _ in rest],
               "D", ms=4, color="C3", label=tr("paper (Table 3)", "论文（表 3）"))
    for ax in axes[1:]:
        ax.set_yticks(y)
        ax.tick_params(labelleft=False)
    right.set_xlabel(tr("BLEU minus the base's", "BLEU 减去基线"))
    right.set_title(tr("difference from the base", "与基线之差"), fontsize=10)
    handles = [h for ax in (axes[0], right) for h in ax.get_legend_handles_labels()[0]]
    right.figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    for ax in axes:
        ax.set_ylim(-0.7, len(summaries) - 0.3)
        for yi, (s, t) in zip(y, zip(summaries, summaries[1:])):
            if s.variant.row != t.variant.row:  # a line between rows A, B, C, ...
                ax.axhline(yi - 0.5, color="0.7", lw=0.8, ls=":")
