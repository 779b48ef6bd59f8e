"""What matters on a small data set: the recipe chapter's budget runs, read from results/budget and
compared over seeds with ``aiayn.stats``.

    from aiayn.lab.small_data import laptop_seeds, load_run, judge_along
    small = laptop_seeds()                               # multi30k-laptop, seeds 0, 1, 2
    dropout = [load_run(changes={"dropout": "0.1"})]     # one seed
    judge_along(dropout, small, "averaged_val_loss")     # 10, 30, 60 minutes: one Holm family

A budget run trains once and keeps the averaged model of 10, 30 and 60 minutes (counted in
updates), so every point of a run is a model of its own. Runs are compared at equal updates and
threads; seeds are the noise. The processor may differ (AMD EPYC, Intel Xeon): at a fixed number
of updates on two fp32 CPU threads it changes the minutes, not what the model learns, so quality
is compared across the two and time is not. One run against n seeds is a t prediction interval;
two seeds or more against n, Welch's t with Hsu's df (2 against 3 seeds: one degree of freedom);
the same seeds at two budgets, a paired t. Families are Holm-corrected (``stats.judge``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .. import stats
from ..experiments.budget import budget_path
from ..experiments.record import REPOSITORY, processor_name, read_results

BUDGET = REPOSITORY / "results" / "budget"
CONFIG = "multi30k-laptop"
SEEDS = (0, 1, 2)
MINUTES = (10, 30, 60)
LOWER_IS_BETTER = {"averaged_val_loss": True, "val_bleu": False, "test_2016_flickr_bleu": False,
                   "val_bleu_lowercase": False, "test_2016_flickr_bleu_lowercase": False}


@dataclass(frozen=True)
class Run:
    """One budget run: its points (minutes -> the point's values) and where it ran."""

    name: str
    seed: int
    changes: dict
    machine: str
    threads: int
    points: dict

    def value(self, minutes: int, metric: str) -> float:
        if minutes not in self.points:
            raise ValueError(f"minutes: {self.name} has no budget of {minutes} minutes; it has {sorted(self.points)}")
        if metric not in LOWER_IS_BETTER:
            raise ValueError(f"metric: one of {', '.join(LOWER_IS_BETTER)}, got {metric!r}")
        return self.points[minutes][metric]

    def updates(self, minutes: int) -> int:
        return self.points[minutes]["step"]


def load_run(config: str = CONFIG, changes: dict | None = None, seed: int = 0, results: Path = BUDGET) -> Run:
    record = read_results(budget_path(results, config, changes, seed))
    v = record["values"]
    return Run(Path(budget_path(results, config, changes, seed)).stem, v["seed"], dict(v.get("changes") or {}),
               processor_name(record), record["threads"], {p["minutes"]: p for p in v["points"]})


def laptop_seeds(results: Path = BUDGET, seeds=SEEDS) -> list[Run]:
    """The literature's shape for a laptop's hour (multi30k-laptop), one run per seed."""
    return [load_run(CONFIG, None, seed, results) for seed in seeds]


def values(runs: list[Run], minutes: int, metric: str) -> list[float]:
    return [run.value(minutes, metric) for run in runs]


def _check_same_setting(candidate: list[Run], reference: list[Run], minutes: int) -> None:
    """Noise is the seeds' at the same updates and threads: anything else is refused."""
    for field, get in (("updates", lambda r: r.updates(minutes)), ("threads", lambda r: r.threads)):
        found = {get(r) for r in [*candidate, *reference]}
        if len(found) > 1:
            raise ValueError(f"candidate: runs of different {field} at {minutes} minutes ({sorted(found)}); "
                             "compare runs of one budget")


def compare(candidate: list[Run], reference: list[Run], minutes: int, metric: str) -> stats.Comparison:
    """The candidate's mean minus the reference seeds' mean at one budget: one run against the
    seeds (a prediction interval), or Welch's t with Hsu's df for two runs or more."""
    if len(reference) < 2:
        raise ValueError(f"reference: needs 2 seeds or more to measure noise, got {len(reference)}")
    _check_same_setting(candidate, reference, minutes)
    ours, theirs = values(candidate, minutes, metric), values(reference, minutes, metric)
    if len(ours) == 1:
        return stats.one_against_seeds(ours[0], theirs)
    return stats.welch(ours, theirs, conservative=True)


@dataclass(frozen=True)
class Judged:
    minutes: int
    updates: int
    metric: str
    comparison: stats.Comparison
    adjusted_p: float
    verdict: stats.Verdict


def judge_along(candidate: list[Run], reference: list[Run], metric: str, minutes=MINUTES) -> list[Judged]:
    """The candidate against the reference at each budget of ``minutes``: one Holm family."""
    comparisons = {m: compare(candidate, reference, m, metric) for m in minutes}
    adjusted = dict(zip(comparisons, stats.holm([c.p for c in comparisons.values()])))
    verdicts = stats.judge(comparisons, lower_is_better=LOWER_IS_BETTER[metric])
    return [Judged(m, candidate[0].updates(m), metric, c, float(adjusted[m]), verdicts[m])
            for m, c in comparisons.items()]


def change_between(runs: list[Run], metric: str, start: int = 60, end: int = 120) -> tuple[stats.Comparison, stats.Verdict]:
    """What carrying the same seeds on from budget ``start`` to ``end`` changed: a paired t-test
    (each seed against itself), a family of one. "better" means the later model is better."""
    if len(runs) < 2:
        raise ValueError(f"runs: a change within runs needs 2 seeds or more, got {len(runs)}; with one run "
                         "no test applies (inconclusive)")
    comparison = stats.paired(values(runs, end, metric), values(runs, start, metric))
    return comparison, stats.verdict(comparison, lower_is_better=LOWER_IS_BETTER[metric])


def spread(runs: list[Run], minutes: int, metric: str) -> tuple[float, float, float]:
    """(mean, lowest, highest) over the runs' seeds."""
    found = values(runs, minutes, metric)
    return statistics.fmean(found), min(found), max(found)


def hour_table(runs: list[Run], metric: str = "val_bleu", minutes=MINUTES, digits: int = 1) -> str:
    """Per budget: updates, each seed's value, their mean and range (highest minus lowest)."""
    from ..plotting import tr
    seeds = [r.seed for r in runs]
    head = (f"{tr('budget', '预算'):>7}{tr('updates', '更新次数'):>9}"
            + "".join(f"{tr('seed', '种子')} {s}".rjust(9) for s in seeds)
            + f"{tr('mean', '均值'):>8}{tr('range', '极差'):>8}")
    lines = [head]
    for m in minutes:
        mean, low, high = spread(runs, m, metric)
        lines.append(f"{m:>4} min{runs[0].updates(m):>9,}" + "".join(f"{v:>9.{digits}f}" for v in values(runs, m, metric))
                     + f"{mean:>8.{digits}f}{high - low:>8.{digits}f}")
    return "\n".join(lines)


def verdict_header(reference: str) -> str:
    from ..plotting import tr
    return (f"{reference:<24}{tr('updates', '更新次数'):>8}{tr('difference', '差值'):>12}"
            f"{tr('p (Holm)', 'p（Holm）'):>10}  {tr('verdict', '结论')}")


def verdict_lines(name: str, judged: list[Judged], digits: int = 3) -> list[str]:
    """One line per budget: difference, adjusted p, the verdict in the notebook's language."""
    from ..plotting import current_language
    lang = current_language()
    return [f"{name:<24}{j.updates:>8,}{j.comparison.difference:>+12.{digits}f}{j.adjusted_p:>10.3f}  {j.verdict.label(lang)}"
            for j in judged]


def ranking(table, reference: str = "small", metric: str = "val_bleu") -> dict:
    """Every ranked candidate of a ``recipe_table`` against ``reference`` (one Holm family per
    metric, as ``Table.judge``): name -> (comparison, Holm-adjusted p, verdict)."""
    from ..experiments.recipe_table import MIN_SEEDS, compare_rows
    names = [r.candidate for r in table.rows if r.candidate != reference and len(r.seeds) >= MIN_SEEDS]
    comparisons = {n: compare_rows(table.row(n), table.row(reference), metric) for n in names}
    adjusted = stats.holm([comparisons[n].p for n in names])
    verdicts = table.judge(reference, metric)
    return {n: (comparisons[n], float(p), verdicts[n]) for n, p in zip(names, adjusted)}


# What each ranking candidate changes in the literature's shape, as the table prints it.
CHANGES = {"small": ("(the literature's)", "（文献中的形状）"), "small-lr0.5": ("half the peak rate", "峰值学习率减半"),
           "small-do0.1": ("dropout 0.1", "Dropout 0.1"), "wide": ("twice the width", "宽度加倍"),
           "deep": ("6 layers, not 4", "6 层而非 4 层"), "small-b2048": ("half-size batches", "批次减半")}


def ranking_text(table, reference: str = "small") -> str:
    """The ranking: mean ± half the range over seeds, and each candidate against ``reference``
    (Holm-adjusted p-values and verdicts, validation loss / BLEU)."""
    from ..plotting import current_language, tr
    lang = current_language()
    judged = {m: ranking(table, reference, m) for m in ("val_loss", "val_bleu")}
    lines = [f"{tr('candidate', '候选'):<13}{tr('change', '改动'):<20}{tr('params', '参数量'):>7}"
             f"{tr('val loss', '验证集损失'):>14}{tr('val BLEU', '验证集 BLEU'):>15}"
             f"{tr('p (Holm): loss, BLEU', 'p（Holm）：损失，BLEU'):>24}  {tr('verdict', '结论')}"]
    for r in table.rows:
        change = tr(*CHANGES[r.candidate]) if r.candidate in CHANGES else "?"
        p_values, verdict = "", tr("(the reference)", "（参照）") if r.candidate == reference else ""
        if r.candidate in judged["val_bleu"]:
            (_, p_loss, v_loss), (_, p_bleu, v_bleu) = (judged[m][r.candidate] for m in ("val_loss", "val_bleu"))
            p_values = f"{p_loss:.2f}, {p_bleu:.2f}"
            verdict = v_bleu.label(lang) if v_loss.kind == v_bleu.kind else f"{v_loss.label(lang)} / {v_bleu.label(lang)}"
        lines.append(f"{r.candidate:<13}{change:<20}{r.parameters / 1e6:>6.1f}M{str(r.val_loss):>14}"
                     f"{str(r.val_bleu):>15}{p_values:>24}  {verdict}")
    return "\n".join(lines)
