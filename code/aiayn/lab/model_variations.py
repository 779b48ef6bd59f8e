"""The miniature Table 3 (chapter model_variations): results files in, table, verdicts and plot out.

    summaries = summarize(load_results())            # one Summary per variant that has runs
    show.table(*table_rows(summaries))               # every variant, ours beside the paper's
    show.table(*verdict_rows(summaries))             # differences from the base, intervals, verdicts
    show.table(*provenance_rows(summaries))          # processor, commits, CPU time per variant
    plot_variations(summaries, axes)                 # the figure of the lesson

Every number comes from the committed files that ``python -m aiayn.experiments.table3`` wrote
(results/table3/<variant>_seed<k>.json); nothing here trains. A variant without files is
listed as pending, with 0 seeds.

The verdicts (``aiayn.stats``): seed k of every variant sees the base's batches in the base's order
(the order depends on the seed alone), and rows A and D also start from the base's weights, so
each variant is compared with the base seed by seed, a paired t-test (Welch's, with Hsu's df,
if the seeds ever differ). Holm's correction runs over each metric's family: every judged row's
BLEU, and every judged row's perplexity. Where the paper saw no difference, an equivalence test
(TOST) with the margins of ``MARGINS`` may say "no difference"; otherwise a difference that
passes no test is "inconclusive". A spread needs seeds: no verdict with fewer than
``MIN_SEEDS`` on either side. Noise is measured on one processor: a variant whose runs ran on
another processor than the base's is refused (``compare``).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from .. import stats
from ..experiments.record import processor_name, read_results
from ..show import markdown_table
from ..experiments.table3 import BY_NAME, RESULTS_DIR, VARIANTS, Variant

MIN_SEEDS = 3           # fewer seeds on either side: "pending", never a verdict
# The paper's differences that it calls no difference ("nearly identical", §6.2): BLEU within
# 0.1 of the base's 25.8, perplexity within 1% of its 4.92.
PAPER_SAME = {"bleu": 0.1, "log_ppl": 0.01}
# Equivalence margins, fixed by the paper's scale rather than by our results: Table 3 discusses
# effects from about 1 BLEU (one head: -0.9) and perplexity changes from a few per cent up, so
# "no difference" here means less than 1 BLEU, and a perplexity ratio within 1/1.05 .. 1.05.
MARGINS = {"bleu": (1.0, "±1.0 BLEU"), "log_ppl": (math.log(1.05), "±5%")}


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

    @property
    def half_interval(self) -> float:
        """Half the width of the mean's 95 % t interval (t with n - 1 df); 0 for one seed."""
        return float(stats.student.ppf(0.975, self.n - 1)) * self.sd / math.sqrt(self.n) if self.n > 1 else 0.0


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


def compare(summary: Summary, base: Summary, metric: str) -> stats.Comparison:
    """Variant minus base for "bleu" or "log_ppl": paired over seeds when both ran the same
    seeds (seed k shares the batch order), else Welch's t with Hsu's conservative df. Noise is
    measured on one processor: runs of another (its float32 kernels sum in another order, and
    the machine would be confounded with the variant) raise ValueError."""
    if processors(summary) != processors(base):
        raise ValueError(f"summary: {summary.name} ran on {', '.join(processors(summary))}, the base on "
                         f"{', '.join(processors(base))}; compare runs of one processor")
    a, b = getattr(summary, metric).values, getattr(base, metric).values
    if summary.seeds == base.seeds:
        return stats.paired(a, b)
    return stats.welch(a, b, conservative=True)


def paper_difference(variant: Variant, metric: str) -> float:
    """The paper's variant minus its base, in BLEU points or in ln(perplexity)."""
    base = BY_NAME["base"].paper
    if metric == "bleu":
        return variant.paper[1] - base[1]
    return math.log(variant.paper[0]) - math.log(base[0])


def judged(summaries: list[Summary]) -> list[Summary]:
    """The variants with a verdict: ``MIN_SEEDS`` seeds or more, and so has the base."""
    base = _by_name(summaries).get("base")
    if base is None or base.bleu.n < MIN_SEEDS:
        return []
    return [s for s in summaries if s is not base and s.bleu.n >= MIN_SEEDS]


@dataclass(frozen=True)
class Judged:
    """One variant's comparison with the base for one metric, its Holm-adjusted p over the
    metric's family, and its verdict."""

    comparison: stats.Comparison
    holm_p: float
    verdict: stats.Verdict


def family(summaries: list[Summary], metric: str) -> dict[str, Judged]:
    """The judged variants of one metric, one Holm family (``stats.judge_against_paper``)."""
    rows = judged(summaries)
    if not rows:
        return {}
    base = _by_name(summaries)["base"]
    margin, label = MARGINS[metric]
    comparisons = {s.name: compare(s, base, metric) for s in rows}
    paper = {s.name: paper_difference(s.variant, metric) for s in rows}
    found = stats.judge_against_paper(comparisons, paper, PAPER_SAME[metric], margin, label)
    adjusted = stats.holm([c.p for c in comparisons.values()])
    return {name: Judged(c, float(p), found[name]) for (name, c), p in zip(comparisons.items(), adjusted)}


def verdicts(summaries: list[Summary], metric: str) -> dict[str, stats.Verdict]:
    """The judged variants' verdicts for one metric."""
    return {name: j.verdict for name, j in family(summaries, metric).items()}


def pending(n: int, n_base: int, lang: str = "en") -> str:
    """The verdict column of a variant that lacks seeds (its own, or the base's)."""
    if lang == "zh":
        return f"待定（{n} 个种子" + (f"，基础模型 {n_base} 个）" if n >= MIN_SEEDS else "）")
    return f"pending ({n} seed{'s' * (n != 1)}" + (f", base {n_base})" if n >= MIN_SEEDS else ")")


def change_label(variant: Variant) -> str:
    return " ".join(f"{k}={v}" for k, v in variant.changes.items()) or "(multi30k-cpu)"


def _by_name(summaries: list[Summary]) -> dict[str, Summary]:
    return {s.name: s for s in summaries}


def processors(summary: Summary) -> tuple:
    """The processors a variant's runs ran on, as prose names them ("AMD EPYC")."""
    return tuple(sorted({processor_name({"machine": m}) for m in summary.machines}))


def _mean_sd(stat: Stat, digits: int = 2) -> str:
    """"mean ± sd", the sd left out for one seed (no spread to show)."""
    sd = f" ± {stat.sd:.{digits}f}" if stat.n > 1 else ""
    return f"{stat.mean:.{digits}f}{sd}"


HEADERS_ZH = {"row": "行", "variant": "变体", "change": "改动", "params": "参数", "seeds": "种子数",
              "PPL (val)": "困惑度（验证集）", "BLEU (val)": "BLEU（验证集）", "paper: change": "论文：改动",
              "paper: PPL": "论文：困惑度", "paper: BLEU": "论文：BLEU", "paper: params": "论文：参数",
              "ΔBLEU [95% CI]": "ΔBLEU [95% 区间]", "p (Holm)": "p（Holm）", "paper: ΔBLEU": "论文：ΔBLEU",
              "verdict (BLEU)": "结论（BLEU）", "PPL ratio [95% CI]": "困惑度之比 [95% 区间]",
              "paper: ratio": "论文：比值", "verdict (PPL)": "结论（困惑度）", "processor": "处理器",
              "commits": "提交", "CPU s per run": "每次运行的 CPU 秒数", "CPU / wall": "CPU / 墙钟"}


def headers(names, lang: str = "en") -> list[str]:
    """Column titles in the page's language."""
    return [HEADERS_ZH.get(n, n) if lang == "zh" else n for n in names]


def table_rows(summaries: list[Summary], lang: str = "en") -> tuple[list, list]:
    """(headers, rows): every variant of ``table3.VARIANTS``, ours (mean ± sd over the seeds)
    beside the paper's line; perplexity per subword and BLEU on the validation set; "—" where no
    run exists yet."""
    have = _by_name(summaries)
    rows = []
    for v in VARIANTS:
        s, paper = have.get(v.name), v.paper
        ours = (["—", "0", "—", "—"] if s is None else
                [f"{s.parameters / 1e6:.2f}M", str(s.bleu.n), _mean_sd(s.ppl), _mean_sd(s.bleu)])
        rows.append([v.row, v.name, change_label(v), *ours, v.paper_label, f"{paper[0]:.2f}", f"{paper[1]:.1f}",
                     f"{paper[2]}M" if paper[2] else "—"])
    names = ["row", "variant", "change", "params", "seeds", "PPL (val)", "BLEU (val)", "paper: change",
             "paper: PPL", "paper: BLEU", "paper: params"]
    return headers(names, lang), rows


def table(summaries: list[Summary], lang: str = "en") -> str:
    """``table_rows`` as a Markdown table (``aiayn.show.table`` renders it)."""
    return markdown_table(*table_rows(summaries, lang), align="llllrrrlrrr")


def _interval(c: stats.Comparison, form, digits: int, signed: bool) -> str:
    low, high = (form(x) for x in c.interval())
    sign = "+" if signed else ""
    return f"{form(c.difference):{sign}.{digits}f} [{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"


def verdict_rows(summaries: list[Summary], lang: str = "en") -> tuple[list, list]:
    """(headers, rows): each variant's difference from the base with its 95 % interval, the
    Holm-adjusted p over the metric's family, the paper's difference and the verdict; BLEU in
    points, perplexity as a ratio to the base's; "—" and "pending" without a verdict."""
    have = _by_name(summaries)
    base = have.get("base")
    found = {m: family(summaries, m) for m in ("bleu", "log_ppl")}
    rows = []
    for v in VARIANTS[1:]:
        s = have.get(v.name)
        n = s.bleu.n if s else 0
        paper_bleu, paper_ppl = (paper_difference(v, m) for m in ("bleu", "log_ppl"))
        if v.name in found["bleu"]:
            bleu, ppl = (found[m][v.name] for m in ("bleu", "log_ppl"))
            cells = [_interval(bleu.comparison, float, 2, True), f"{bleu.holm_p:.3f}", f"{paper_bleu:+.1f}",
                     bleu.verdict.label(lang), _interval(ppl.comparison, math.exp, 3, False), f"{ppl.holm_p:.3f}",
                     f"{math.exp(paper_ppl):.3f}", ppl.verdict.label(lang)]
        else:
            wait = pending(n, base.bleu.n if base else 0, lang)
            cells = ["—", "—", f"{paper_bleu:+.1f}", wait, "—", "—", f"{math.exp(paper_ppl):.3f}", wait]
        rows.append([v.name, str(n), *cells])
    names = ["variant", "seeds", "ΔBLEU [95% CI]", "p (Holm)", "paper: ΔBLEU", "verdict (BLEU)",
             "PPL ratio [95% CI]", "p (Holm)", "paper: ratio", "verdict (PPL)"]
    return headers(names, lang), rows


def verdict_table(summaries: list[Summary], lang: str = "en") -> str:
    """``verdict_rows`` as a Markdown table (``aiayn.show.table`` renders it)."""
    return markdown_table(*verdict_rows(summaries, lang), align="lrrrrlrrrl")


def provenance_rows(summaries: list[Summary], lang: str = "en") -> tuple[list, list]:
    """(headers, rows): per variant the processor its runs ran on (every verdict compares runs of
    one processor: ``compare`` refuses others), the commits, the CPU seconds per run and the
    range of CPU time / wall time over its seeds (below 1: the process waited for a core, on a
    shared machine, and contention slows the CPU time too)."""
    rows = []
    for s in summaries:
        ratios = [c / w for c, w in zip(s.cpu_seconds.values, s.seconds.values)]
        rows.append([s.name, ", ".join(processors(s)), ", ".join(s.commits), f"{s.cpu_seconds.mean:.0f}",
                     f"{min(ratios):.2f} – {max(ratios):.2f}"])
    return headers(["variant", "processor", "commits", "CPU s per run", "CPU / wall"], lang), rows


def plot_variations(summaries: list[Summary], axes, tr=lambda en, zh: en) -> None:
    """Three panels (``axes``, not sharing x), the variants with runs top to bottom in the table's
    order, each labelled with its number of seeds. Left: BLEU, every seed a dot, the mean a square
    with its 95 % t interval, the base's mean a dashed line (its interval shaded). Middle and
    right: each variant minus the base, BLEU in points and perplexity as a ratio, with the 95 %
    interval of the comparison (``compare``) beside the paper's; a filled square where a verdict
    passed, hollow where it is inconclusive, grey while pending. One legend below the panels: the
    figure needs a constrained layout."""
    import numpy as np

    have = _by_name(summaries)
    base = have["base"]
    y = np.arange(len(summaries))[::-1]
    left = axes[0]
    left.axvline(base.bleu.mean, color="0.5", ls="--", lw=1)
    if base.bleu.n > 1:
        left.axvspan(base.bleu.mean - base.bleu.half_interval, base.bleu.mean + base.bleu.half_interval, color="0.88",
                     label=tr("base: mean, 95% interval", "基础模型：均值与 95% 区间"))
    for yi, s in zip(y, summaries):
        left.plot(s.bleu.values, [yi] * s.bleu.n, "o", ms=3, color="0.35", alpha=0.7)
        left.errorbar(s.bleu.mean, yi, xerr=s.bleu.half_interval if s.bleu.n > 1 else None, fmt="s", ms=5,
                      color="C0", capsize=3)
    left.set_xlabel(tr("BLEU, validation (beam 4)", "BLEU，验证集（束宽 4）"))
    left.set_yticks(y, labels=[f"{s.name} ({s.bleu.n})" for s in summaries])
    left.set_title(tr("ours: seeds (dots), mean", "本书：各种子（点）与均值"), fontsize=10)
    rest = [(yi, s) for yi, s in zip(y, summaries) if s is not base]
    panels = ((axes[1], "bleu", float, 0.0, tr("BLEU minus the base's", "BLEU 减去基础模型的 BLEU")),
              (axes[2], "log_ppl", math.exp, 1.0, tr("perplexity / the base's", "困惑度 / 基础模型的困惑度")))
    for ax, metric, form, none, label in panels:
        found = verdicts(summaries, metric)
        ax.axvline(none, color="0.5", lw=1)
        for yi, s in rest:
            if min(s.bleu.n, base.bleu.n) < 2:
                continue
            c = compare(s, base, metric)
            low, high = (form(x) for x in c.interval())
            centre = form(c.difference)
            passed = s.name in found and found[s.name].kind != "inconclusive"
            color = "C0" if s.name in found else "0.6"
            ax.errorbar(centre, yi + 0.15, xerr=[[centre - low], [high - centre]], fmt="s", ms=5, capsize=3,
                        color=color, mfc=color if passed else "white")
        ax.plot([form(paper_difference(s.variant, metric)) for _, s in rest], [yi - 0.15 for yi, _ in rest],
                "D", ms=4, color="C3")
        ax.set_xlabel(label)
        ax.set_yticks(y)
        ax.tick_params(labelleft=False)

    axes[1].set_title(tr("difference from the base", "与基础模型之差"), fontsize=10)
    axes[2].set_title(tr("ratio to the base", "与基础模型之比"), fontsize=10)
    right = axes[1]
    right.plot([], [], "s", color="C0", label=tr("ours, 95% interval: a verdict", "本书，95% 区间：有结论"))
    right.plot([], [], "s", color="C0", mfc="white", label=tr("ours: inconclusive", "本书：无定论"))
    if any(min(s.bleu.n, base.bleu.n) < MIN_SEEDS for _, s in rest):
        right.plot([], [], "s", color="0.6", mfc="white", label=tr(f"< {MIN_SEEDS} seeds", f"种子不足 {MIN_SEEDS} 个"))
    right.plot([], [], "D", ms=4, color="C3", label=tr("paper (Table 3)", "论文（表 3）"))
    handles = [h for ax in (left, right) for h in ax.get_legend_handles_labels()[0]]
    right.figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    for ax in axes:
        ax.set_ylim(-0.7, len(summaries) - 0.3)
        for yi, (s, t) in zip(y, zip(summaries, summaries[1:])):
            if s.variant.row != t.variant.row:  # a line between rows A, B, C, ...
                ax.axhline(yi - 0.5, color="0.7", lw=0.8, ls=":")
