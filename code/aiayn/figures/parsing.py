"""The constituency-parsing chapter's plot: labelled F1 by sentence length, one line per parser,
from the ``scores`` of a results file of ``aiayn.experiments.parsing``."""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..plotting import tr

PARSERS = {"transformer_greedy": ("Transformer, greedy (chosen on dev)", "Transformer，贪心解码（在开发集上选定）"),
           "transformer": ("Transformer, beam 21 (the paper's, not chosen)", "Transformer，束宽 21（论文的设置，未选用）"),
           "grammar": ("the grammar's own parse (reference)", "文法自己的分析（参照）"),
           "right_branching": ("right-branching", "右分支")}


def plot_f1_by_length(scores: dict, ax=None):
    """F1 of each parser of ``PARSERS`` per length bin; the bins' sentence counts under the ticks."""
    if ax is None:
        ax = plt.subplots(figsize=(7, 3.6), layout="constrained")[1]
    bins = list(scores["transformer"]["by_length"])
    for i, (key, label) in enumerate(PARSERS.items()):
        ax.plot(range(len(bins)), [scores[key]["by_length"][b]["f1"] for b in bins], "o-",
                color=f"C{i}", lw=2.2 if i == 0 else 1.2, label=tr(*label))
    counts = [scores["transformer"]["by_length"][b]["sentences"] for b in bins]
    ax.set_xticks(range(len(bins)), [f"{b}\n({n})" for b, n in zip(bins, counts)])
    ax.set_xlabel(tr("sentence length in words (number of sentences)", "句子长度（词数；括号内为句子数）"))
    ax.set_ylabel(tr("labelled F1", "带标签 F1"))
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="lower left")
    return ax
