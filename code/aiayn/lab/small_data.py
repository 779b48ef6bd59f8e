"""What matters on a small data set: the recipe chapter's budget runs, read from results/budget and
compared over seeds with ``aiayn.stats``.

    from aiayn.lab.small_data import laptop_seeds, load_run, judge_along
    small = laptop_seeds()                               # multi30k-laptop, seeds 0, 1, 2
    dropout = [load_run(changes={"dropout": "0.1"})]     # one seed
    judge_along(dropout, small, "averaged_val_loss")     # 10, 30, 60 minutes: one Holm family

A budget run trains once and keeps the averaged model of 10, 30 and 60 minutes (counted in
updates), so every point of a run is a model of its own. Runs are compared at equal updates and
threads; seeds are the noise. The processor may differ (AMD EPYC, Intel Xeon): it changes the
minutes and the rounding of every update, so the same seed trains along another path; whether
that moves a score more than a seed does, one run of the reference on the second CPU cannot tell.
So machine is a factor a comparison carries: ``machines`` names it, ``on_machine`` restricts a
comparison to one CPU type, and times are never compared across the two. One run against n seeds is a t prediction interval;
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


def hour_rows(runs: list[Run], metric: str = "val_bleu", minutes=MINUTES, digits: int = 1) -> tuple[list, list]:
    """(headers, rows) for ``aiayn.show.table``: per budget, the updates, each seed's value, their
    mean and range (highest minus lowest)."""
    from ..plotting import tr
    headers = [tr("budget", "预算"), tr("updates", "更新次数"), *(tr(f"seed {r.seed}", f"种子 {r.seed}") for r in runs),
               tr("mean", "均值"), tr("range", "极差")]
    rows = []
    for m in minutes:
        mean, low, high = spread(runs, m, metric)
        rows.append([tr(f"{m} min", f"{m} 分钟"), f"{runs[0].updates(m):,}",
                     *(f"{v:.{digits}f}" for v in values(runs, m, metric)), f"{mean:.{digits}f}", f"{high - low:.{digits}f}"])
    return headers, rows


# What a verdict says on a lesson page: whether a difference is beyond the seeds' noise, no test named.
SEED_NOISE = {"better": ("better, beyond seed noise", "更好，超出种子噪声"),
              "worse": ("worse, beyond seed noise", "更差，超出种子噪声"),
              "inconclusive": ("inconclusive", "无定论")}


def seed_noise(verdict: stats.Verdict) -> str:
    """The lesson's words for a verdict, in the notebook's language."""
    from ..plotting import tr
    if verdict.kind not in SEED_NOISE:
        raise ValueError(f"verdict: one of {', '.join(SEED_NOISE)} on a lesson page, got {verdict.kind!r}")
    return tr(*SEED_NOISE[verdict.kind])


def along_rows(judged: dict, digits: dict | None = None) -> tuple[list, list]:
    """(headers, rows) for ``aiayn.show.table``: one row per label of ``judged`` (label -> the
    ``judge_along`` of one candidate and metric), one column per budget holding the difference
    and the verdict in the lesson's words (``seed_noise``); ``digits``: label -> decimals (2)."""
    from ..plotting import tr
    first = next(iter(judged.values()))
    headers = [tr("against dropout 0.3 (3 seeds)", "对比 Dropout 0.3（3 个种子）"),
               *(tr(f"{j.updates:,} updates ({j.minutes} min)", f"{j.updates:,} 次更新（{j.minutes} 分钟）") for j in first)]
    rows = [[label, *(f"{j.comparison.difference:+.{(digits or {}).get(label, 2)}f}{tr(': ', '：')}{seed_noise(j.verdict)}"
                      for j in found)]
            for label, found in judged.items()]
    return headers, rows


# aiayn.stats names its tests in English; a Chinese table names them in Chinese.
METHODS = {"paired t": "配对 t 检验", "Welch (Hsu df)": "Welch t 检验（Hsu 自由度）",
           "one run against seeds": "单次运行对多个种子（预测区间）"}


def method_label(method: str) -> str:
    """A comparison's test in the notebook's language (unknown names stay as they are)."""
    from ..plotting import tr
    return tr(method, METHODS.get(method, method))


def verdict_rows(name: str, judged: list[Judged], digits: int = 3) -> list[list]:
    """Rows for ``aiayn.show.table`` under ``VERDICT_HEADERS``: one per budget, the difference,
    the test, the Holm-adjusted p and the verdict (the lab notebook's view)."""
    from ..plotting import current_language
    lang = current_language()
    return [[name, f"{j.updates:,}", f"{j.comparison.difference:+.{digits}f}", method_label(j.comparison.method),
             f"{j.adjusted_p:.3f}", j.verdict.label(lang)] for j in judged]


def verdict_headers(reference: str) -> list[str]:
    from ..plotting import tr
    return [reference, tr("updates", "更新次数"), tr("difference", "差值"), tr("test", "检验"),
            tr("p (Holm)", "p（Holm）"), tr("verdict", "结论")]


def machines(runs: list[Run]) -> dict[str, list[str]]:
    """Processor -> the runs that ran on it: the factor a comparison across machines carries."""
    found: dict[str, list[str]] = {}
    for run in runs:
        found.setdefault(run.machine, []).append(run.name)
    return found


def on_machine(runs: list[Run], machine: str) -> list[Run]:
    """The runs of ``runs`` that ran on ``machine`` (a comparison restricted to one CPU type)."""
    kept = [r for r in runs if r.machine == machine]
    if not kept:
        raise ValueError(f"machine: none of the runs ran on {machine!r}; they ran on {sorted(machines(runs))}")
    return kept


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


def ranking_rows(table, reference: str = "small") -> tuple[list, list]:
    """(headers, rows) for ``aiayn.show.table``: the ranking, mean ± half the range over seeds,
    and each candidate against ``reference`` (Holm-adjusted p-values and verdicts, validation
    loss / BLEU)."""
    from ..plotting import current_language, tr
    lang = current_language()
    judged = {m: ranking(table, reference, m) for m in ("val_loss", "val_bleu")}
    headers = [tr("candidate", "候选"), tr("change", "改动"), tr("parameters", "参数量"), tr("val loss", "验证集损失"),
               tr("val BLEU", "验证集 BLEU"), tr("p (Holm): loss, BLEU", "p（Holm）：损失，BLEU"), tr("verdict", "结论")]
    rows = []
    for r in table.rows:
        change = tr(*CHANGES[r.candidate]) if r.candidate in CHANGES else "?"
        p_values, verdict = "", tr("(the reference)", "（参照）") if r.candidate == reference else ""
        if r.candidate in judged["val_bleu"]:
            (_, p_loss, v_loss), (_, p_bleu, v_bleu) = (judged[m][r.candidate] for m in ("val_loss", "val_bleu"))
            p_values = f"{p_loss:.2f}, {p_bleu:.2f}"
            verdict = v_bleu.label(lang) if v_loss.kind == v_bleu.kind else f"{v_loss.label(lang)} / {v_bleu.label(lang)}"
        rows.append([r.candidate, change, f"{r.parameters / 1e6:.1f}M", str(r.val_loss), str(r.val_bleu), p_values, verdict])
    return headers, rows
