"""The figure of the page "Reading a result": seeds as noise, pairs, and three verdicts.

    plot_paired_seeds(summaries)     from the miniature Table 3 (aiayn.lab.model_variations):
                                     left, each variant's three seeds beside the base's, seed k
                                     joined to seed k; right, the three seed-by-seed differences,
                                     their mean with its 95 % interval (thin) and 90 % interval
                                     (thick), zero, the equivalence margin shaded, and the verdict

Three rows by default, one per verdict a reader meets: d_model = 64 (beyond seed noise), eight
heads (inconclusive) and label smoothing 0.2 (no difference within ±1 BLEU). The verdicts are the
chapter's own (``model_variations.family``: paired t-test, Holm over the 17 rows, equivalence
with the margin ``MARGINS``), never recomputed here. Labels go through ``tr``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..lab.model_variations import MARGINS, family
from ..plotting import tr

ROWS = ("C_d64", "A_h8", "D_ls0.2")
SEED_COLORS = ("C0", "C1", "C2")


def verdict_words(kind: str, margin: str) -> str:
    """What the figure writes beside a row: the words the lessons use."""
    if kind == "inconclusive":
        return tr("inconclusive", "无定论")
    if kind in ("no difference", "equivalent"):
        return tr(f"no difference within {margin}", f"在 {margin} 内无差异")
    return tr("beyond seed noise", "超出种子噪声")


def plot_paired_seeds(summaries, rows=ROWS, metric: str = "bleu"):
    """Two panels for ``rows`` (variant names with verdicts in ``family(summaries, metric)``).
    Returns the figure."""
    by_name = {s.name: s for s in summaries}
    found = family(summaries, metric)
    missing = [r for r in rows if r not in found]
    if missing or "base" not in by_name:
        raise ValueError(f"rows: no verdict for {', '.join(missing) or 'the base'} in these summaries")
    base = getattr(by_name["base"], metric).values
    margin, margin_label = MARGINS[metric]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained",
                                      gridspec_kw={"width_ratios": (1, 1.15)})
    for i, name in enumerate(rows):
        values = getattr(by_name[name], metric).values
        x = 2.5 * i + np.array([0.0, 1.0])
        for k, (b, v) in enumerate(zip(base, values)):
            left.plot(x, [b, v], "o-", color=SEED_COLORS[k % len(SEED_COLORS)], ms=5, lw=1.2,
                      label=tr(f"seed {k}", f"种子 {k}") if i == 0 else None)
    left.set_xticks([2.5 * i + j for i in range(len(rows)) for j in (0, 1)],
                    labels=[label for name in rows for label in ("base", name)], fontsize=8)
    left.set_ylabel(tr("BLEU, validation", "BLEU，验证集") if metric == "bleu" else metric)
    left.set_title(tr("three seeds each, seed k joined to seed k", "各三个种子，种子 k 与种子 k 相连"), fontsize=10)
    left.legend(fontsize=8, loc="lower right")

    y = np.arange(len(rows))[::-1]
    right.axvspan(-margin, margin, color="0.9", label=tr(f"margin {margin_label}", f"界限 {margin_label}"))
    right.axvline(0, color="0.4", lw=1)
    for yi, name in zip(y, rows):
        judged = found[name]
        differences = np.array(getattr(by_name[name], metric).values) - np.array(base)
        for k, d in enumerate(differences):
            right.plot(d, yi + 0.18, "o", ms=5, color=SEED_COLORS[k % len(SEED_COLORS)])
        c = judged.comparison
        (low95, high95), (low90, high90) = c.interval(0.95), c.interval(0.90)
        right.plot([low95, high95], [yi - 0.12] * 2, color="k", lw=1)
        right.plot([low90, high90], [yi - 0.12] * 2, color="k", lw=4, solid_capstyle="butt")
        right.plot(c.difference, yi - 0.12, "s", color="white", mec="k", ms=6)
        right.annotate(verdict_words(judged.verdict.kind, margin_label), (1.01, yi), xycoords=("axes fraction", "data"),
                       va="center", fontsize=9)
    right.plot([], [], color="k", lw=1, label=tr("mean, 95% interval", "均值，95% 区间"))
    right.plot([], [], color="k", lw=4, label=tr("90% interval", "90% 区间"))
    right.set_yticks(y, labels=rows)
    right.set_ylim(-0.7, len(rows) - 0.3)
    right.set_xlabel(tr("variant minus base, seed by seed (BLEU)", "变体减去基础模型，逐种子（BLEU）")
                     if metric == "bleu" else metric)
    right.set_title(tr("the differences and what they say", "差值，以及它们说明了什么"), fontsize=10)
    right.legend(fontsize=8, loc="lower left")
    return fig


__all__ = ["ROWS", "plot_paired_seeds", "verdict_words"]
