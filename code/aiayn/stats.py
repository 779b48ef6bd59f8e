"""Verdicts over a few seeds: small-sample tests at 5 %, Holm's correction, equivalence with a
stated margin, and one vocabulary of verdicts (English and Chinese) that the chapters share.

Which function for which comparison:

* two configurations whose seed k shares something random (the initial weights, the batch
  order): value k of ``a`` pairs with value k of ``b``; exact, the first choice  -> ``paired(a, b)``
* two configurations, independent seeds (2 or more each)                 -> ``welch(a, b)``;
  ``welch(a, b, conservative=True)`` in a Holm family of many rows, with unequal numbers of
  seeds, or where the spreads differ threefold (see ``welch``)
* either, without assuming normal noise: ``permutation(a, b[, paired=True])``. It needs 4 seeds
  a side (3 against 3 has 20 splits, the smallest two-sided p is 0.1: it can never pass at 5 %),
  paired 6 pairs (5 pairs have 32 sign patterns, the smallest p is 1/16)
* one new run against the n >= 2 seeds of a configuration, at the same budget on the same
  hardware ("is it outside the range of three?")                         -> ``one_against_seeds(x, seeds)``
* "no difference": ``equivalence(comparison, margin)``, the TOST p-value, with a margin chosen
  before looking at the results; a difference that passes no test is "inconclusive"
* how large a difference n seeds can tell: ``detectable_difference(sd, n[, paired=True])``
* several comparisons in one table: ``holm(p_values)`` (adjusted p-values); the verdicts:
  ``judge(comparisons, ...)`` (better / worse / equivalent within ±m / inconclusive),
  ``judge_against_paper(...)`` (agrees / opposite / differs / no difference within ±m /
  inconclusive), ``verdict(comparison, ...)`` for a family of one.

In a chapter: ``v.label(lang)`` in a table ("better", "更好"), ``v.clause(lang)`` as a whole clause
in prose (never glue Chinese words into a sentence). One run against one run has no spread: no
test exists, the verdict is ``Verdict("inconclusive")``; so are seeds that all moved by exactly
the same amount (a standard error of 0: p = 1, never "significant"). Noise comes from seeds at the same budget
on the same hardware: these functions cannot see budgets, the caller (e.g. recipe_table) checks.

Every function takes values over the last axis, so a whole simulation is one call; its
false-positive rate under the null is checked in tests/test_stats.py. A null result never
"reproduces" anything: it is "inconclusive" unless an equivalence test passes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student

ALPHA = 0.05


@dataclass(frozen=True)
class Comparison:
    """``difference`` (mean of a minus mean of b; for one run, the run minus the seeds' mean),
    its standard error ``se`` and degrees of freedom ``df`` (NaN for a permutation test), the
    two-sided ``p`` and the test's name. Fields are arrays when the inputs were batched."""

    difference: float
    se: float
    df: float
    p: float
    method: str

    def interval(self, confidence: float = 0.95):
        """(low, high): the t interval of the difference (a prediction interval for one run)."""
        half = student.ppf(0.5 + confidence / 2, self.df) * self.se
        return self.difference - half, self.difference + half


def _samples(x, name: str, minimum: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] < minimum:
        raise ValueError(f"{name}: needs at least {minimum} values (seeds) along its last axis, got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name}: holds a NaN or an infinite value")
    return x


def _t_test(difference, se, df, method: str) -> Comparison:
    """Two-sided p of difference / se against t with ``df``. Where se is 0 (three seeds that moved
    by exactly the same amount) the seeds give no estimate of the noise, and no test exists: p is
    1, so the verdict is "inconclusive" however large the difference (dividing by 0 would make
    any shift "significant")."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(difference) / se
        p = np.where(se > 0, 2 * student.sf(t, df), 1.0)
    return Comparison(difference, se, df, p[()], method)


def welch(a, b, conservative: bool = False) -> Comparison:
    """Welch's t-test of mean(a) = mean(b), unequal variances, Welch–Satterthwaite df. With 2-3
    seeds that df is itself a noisy estimate: where the spreads differ threefold or more, or n
    differs, the rate creeps to 6-8 % (and far more at Holm's small thresholds). ``conservative``:
    df = min(n_a, n_b) - 1 (Hsu), at most 5 % whatever the spreads (tests/test_stats.py)."""
    a, b = _samples(a, "a", 2), _samples(b, "b", 2)
    na, nb = a.shape[-1], b.shape[-1]
    va, vb = a.var(-1, ddof=1) / na, b.var(-1, ddof=1) / nb
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    df = np.where(np.isfinite(df), df, na + nb - 2)  # both spreads 0
    if conservative:
        df = np.full(np.shape(df), min(na, nb) - 1.0)
    return _t_test(a.mean(-1) - b.mean(-1), np.sqrt(va + vb), df[()], "Welch" + " (Hsu df)" * conservative)


def paired(a, b) -> Comparison:
    """Paired t-test: value k of ``a`` and of ``b`` share seed k (weights, batch order)."""
    a, b = _samples(a, "a", 2), _samples(b, "b", 2)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"b: a paired test needs as many values as a ({a.shape[-1]}), got {b.shape[-1]}")
    d, n = a - b, a.shape[-1]
    return _t_test(d.mean(-1), d.std(-1, ddof=1) / math.sqrt(n), np.full(d.shape[:-1], n - 1.0)[()], "paired t")


def one_against_seeds(value, seeds) -> Comparison:
    """One new run against n >= 2 seeds of a configuration: under the null it is one more draw,
    so (value - mean) / (s * sqrt(1 + 1/n)) follows t with n - 1 df (a prediction interval).
    It leans on normal noise more than a difference of means does (the one run is not averaged):
    under heavy-tailed noise (t with 3 df, Laplace) it passes about 6 % of null runs at 5 %
    (tests/test_stats.py), so a p just under 5 % from it is weak evidence."""
    seeds = _samples(seeds, "seeds", 2)
    value = np.asarray(value, dtype=float)
    n = seeds.shape[-1]
    se = seeds.std(-1, ddof=1) * math.sqrt(1 + 1 / n)
    return _t_test(value - seeds.mean(-1), se, np.full(np.shape(se), n - 1.0)[()], "one run against seeds")


def permutation(a, b, paired: bool = False, rounds: int = 20_000, seed: int = 0) -> Comparison:
    """Permutation test of the difference of means: every split of the pooled values (sign flip
    of every pair when ``paired``) when there are at most ``rounds`` of them, else ``rounds``
    random ones (p = (1 + hits) / (1 + rounds)). No interval: se and df are NaN."""
    a, b = _samples(a, "a", 2), _samples(b, "b", 2)
    if rounds < 1:
        raise ValueError(f"rounds: must be at least 1, got {rounds}")
    na, nb = a.shape[-1], b.shape[-1]
    rng = np.random.default_rng(seed)
    if paired:
        if na != nb:
            raise ValueError(f"b: a paired test needs as many values as a ({na}), got {nb}")
        d = a - b
        exact = 2 ** na <= rounds
        signs = (np.array(list(itertools.product((1.0, -1.0), repeat=na))) if exact
                 else rng.choice((1.0, -1.0), size=(rounds, na)))
        observed, shuffled = d.mean(-1), d @ signs.T / na
    else:
        pooled = np.concatenate([a, b], axis=-1)
        exact = math.comb(na + nb, na) <= rounds
        if exact:
            picks = np.zeros((math.comb(na + nb, na), na + nb))
            for i, chosen in enumerate(itertools.combinations(range(na + nb), na)):
                picks[i, list(chosen)] = 1.0
        else:
            picks = (rng.random((rounds, na + nb)).argsort(-1) < na).astype(float)
        observed = a.mean(-1) - b.mean(-1)
        shuffled = pooled @ picks.T / na - pooled @ (1 - picks).T / nb
    tolerance = 1e-9 * np.maximum(1.0, np.abs(observed))[..., None]  # ties within rounding count
    hits = (np.abs(shuffled) >= np.abs(observed)[..., None] - tolerance).sum(-1)
    p = hits / shuffled.shape[-1] if exact else (1 + hits) / (1 + rounds)
    nan = np.full(np.shape(observed), np.nan)[()]
    return Comparison(observed, nan, nan, np.asarray(p)[()], "permutation" + (" (paired)" if paired else ""))


def equivalence(comparison: Comparison, margin) -> float:
    """TOST: the p-value of "the true difference lies within ±margin" (the larger of the two
    one-sided p-values); below 5 % exactly when the 90 % interval lies inside ±margin."""
    if not np.all(np.asarray(margin) > 0):
        raise ValueError(f"margin: must be positive, got {margin}")
    if np.any(np.isnan(comparison.se)):
        raise ValueError("comparison: a permutation test has no standard error; use welch or paired")
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = student.sf((comparison.difference + margin) / comparison.se, comparison.df)
        upper = student.cdf((comparison.difference - margin) / comparison.se, comparison.df)
    # No spread (se = 0): no estimate of the noise, so no test either way (as in _t_test).
    return np.where(np.asarray(comparison.se) > 0, np.maximum(lower, upper), 1.0)[()]


def detectable_difference(sd, n: int, paired: bool = False, alpha: float = ALPHA):
    """The smallest difference of two means of ``n`` seeds each that a t-test at ``alpha``
    (two-sided) calls significant, if the spread comes out as ``sd``:

    * unpaired (independent seeds, equal spreads): t(1 - alpha/2, 2n - 2) * sd * sqrt(2 / n), with
      ``sd`` the standard deviation over one arm's seeds;
    * ``paired`` (seed k shared by both arms, what ``paired`` tests): t(1 - alpha/2, n - 1) *
      sd / sqrt(n), with ``sd`` the standard deviation of the n seed-by-seed differences.

    Pairing pays when the arms share much of their noise: the differences then spread less than
    sqrt(2) times one arm's sd, which more than makes up for the fewer degrees of freedom.
    Holm's strictest threshold over m rows is ``alpha / m``."""
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n: needs at least 2 seeds a side, got {n!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: must lie in (0, 1), got {alpha!r}")
    sd = np.asarray(sd, dtype=float)
    if np.any(sd < 0) or not np.isfinite(sd).all():
        raise ValueError(f"sd: must be finite and non-negative, got {sd}")
    if paired:
        return (student.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n))[()]
    return (student.ppf(1 - alpha / 2, 2 * n - 2) * sd * math.sqrt(2 / n))[()]


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values over the last axis (a family of tests): reject where
    the adjusted value is below 5 %; the family-wise false-positive rate stays at most 5 %."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim == 0 or p.shape[-1] == 0 or np.any((p < 0) | (p > 1)) or np.isnan(p).any():
        raise ValueError(f"p_values: need one or more p-values in [0, 1], got {p_values!r}")
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, -1) * np.arange(m, 0, -1)
    adjusted = np.minimum(np.maximum.accumulate(ranked, axis=-1), 1.0)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, -1)
    return out



# The verdicts. Short labels for tables, whole clauses for prose (the Chinese pages never build a
# sentence out of glued words). "{m}" is the margin as the page states it, e.g. "±1.0 BLEU".
LABELS = {
    "better": ("better", "更好"),
    "worse": ("worse", "更差"),
    "equivalent": ("equivalent within {m}", "在 {m} 内等价"),
    "agrees": ("agrees", "与论文一致"),
    "opposite": ("opposite", "与论文相反"),
    "differs": ("differs", "有差异（论文无）"),
    "no difference": ("no difference within {m}", "在 {m} 内无差异"),
    "inconclusive": ("inconclusive", "无定论"),
}
CLAUSES = {
    "better": ("the difference passes the test at 5 % after Holm's correction, in its favour",
               "差异经 Holm 校正后在 5% 水平上显著，且对它有利"),
    "worse": ("the difference passes the test at 5 % after Holm's correction, against it",
              "差异经 Holm 校正后在 5% 水平上显著，且对它不利"),
    "equivalent": ("the 90 % interval of the difference lies inside {m} (equivalence test at 5 %)",
                   "差值的 90% 置信区间落在 {m} 之内（等价检验，5% 水平）"),
    "agrees": ("the difference passes the test at 5 % after Holm's correction, in the paper's direction",
               "差异经 Holm 校正后在 5% 水平上显著，方向与论文相同"),
    "opposite": ("the difference passes the test at 5 % after Holm's correction, against the paper's direction",
                 "差异经 Holm 校正后在 5% 水平上显著，方向与论文相反"),
    "differs": ("the difference passes the test at 5 % after Holm's correction where the paper saw none",
                "论文未见差异，而这里的差异经 Holm 校正后在 5% 水平上显著"),
    "no difference": ("the 90 % interval of the difference lies inside {m} (equivalence test at 5 %)",
                      "差值的 90% 置信区间落在 {m} 之内（等价检验，5% 水平），可以说没有差异"),
    "inconclusive": ("the difference passes no test at 5 %: these seeds cannot tell",
                     "差异在 5% 水平上未通过任何检验：这几个种子还分辨不出"),
}


@dataclass(frozen=True)
class Verdict:
    """One of ``LABELS``' kinds; ``margin`` is the equivalence margin as the page states it."""

    kind: str
    margin: str = ""

    def __post_init__(self):
        if self.kind not in LABELS:
            raise ValueError(f"kind: one of {', '.join(LABELS)}, got {self.kind!r}")

    def label(self, lang: str = "en") -> str:
        return LABELS[self.kind][lang == "zh"].format(m=self.margin)

    def clause(self, lang: str = "en") -> str:
        return CLAUSES[self.kind][lang == "zh"].format(m=self.margin)

    def __str__(self) -> str:
        return self.label()


def _adjusted(comparisons: dict, names) -> dict:
    names = list(names)
    return dict(zip(names, holm([comparisons[n].p for n in names]))) if names else {}


def _margin_label(margin, margin_label: str) -> str:
    return margin_label or (f"±{margin:g}" if margin is not None else "")


def judge(comparisons: dict, margin=None, margin_label: str = "", lower_is_better: bool = False,
          alpha: float = ALPHA) -> dict:
    """Verdicts over one family (a table's rows for one metric): Holm over the differences'
    p-values; where none passes and a ``margin`` is given, TOST (Holm again, over the family)
    may say "equivalent within ±margin"; else "inconclusive". ``lower_is_better`` for losses."""
    adjusted = _adjusted(comparisons, comparisons)
    tost = {}
    if margin is not None:
        tost = dict(zip(comparisons, holm([equivalence(c, margin) for c in comparisons.values()])))
    out = {}
    for name, c in comparisons.items():
        if adjusted[name] < alpha:
            kind = "better" if (c.difference > 0) != lower_is_better else "worse"
        else:
            kind = "equivalent" if tost.get(name, 1.0) < alpha else "inconclusive"
        out[name] = Verdict(kind, _margin_label(margin, margin_label))
    return out


def verdict(comparison: Comparison, margin=None, margin_label: str = "", lower_is_better: bool = False) -> Verdict:
    """``judge`` for a family of one comparison."""
    return judge({"": comparison}, margin, margin_label, lower_is_better)[""]


def judge_against_paper(comparisons: dict, paper: dict, paper_same: float, margin, margin_label: str = "",
                        alpha: float = ALPHA) -> dict:
    """Our difference against the paper's (``paper``: name -> its difference, same sign
    convention): Holm over all the family's differences; significant -> "agrees" (the paper's
    sign), "opposite", or "differs" (where |paper's| <= ``paper_same``: it saw none). Where the
    paper saw none and ours passes no test, TOST with ``margin`` (Holm over those rows) may
    say "no difference within ±margin"; everything else is "inconclusive"."""
    same = [n for n in comparisons if abs(paper[n]) <= paper_same + 1e-12]
    adjusted = _adjusted(comparisons, comparisons)
    tost = dict(zip(same, holm([equivalence(comparisons[n], margin) for n in same]))) if same else {}
    label, out = _margin_label(margin, margin_label), {}
    for name, c in comparisons.items():
        if adjusted[name] < alpha:
            kind = "differs" if name in tost else "agrees" if (c.difference > 0) == (paper[name] > 0) else "opposite"
        else:
            kind = "no difference" if tost.get(name, 1.0) < alpha else "inconclusive"
        out[name] = Verdict(kind, label)
    return out
