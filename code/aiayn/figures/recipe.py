"""The two figures of the recipe chapter (What matters on a small data set), drawn from the runs
that ``aiayn.lab.small_data`` reads. Labels go through ``tr``; nothing here is random.

    plot_along_the_hour(axes, small, dropout, wide, passed)   # validation loss and BLEU along the updates
    plot_beam_alpha(ax, grid, paper=(4, 0.6), chosen=(2, 1.0))
"""

from __future__ import annotations

from ..lab.small_data import MINUTES, Run, spread
from ..plotting import tr


def _band(ax, runs: list[Run], metric: str, minutes) -> None:
    steps = [runs[0].updates(m) for m in minutes]
    low = [spread(runs, m, metric)[1] for m in minutes]
    high = [spread(runs, m, metric)[2] for m in minutes]
    ax.fill_between(steps, low, high, color="C0", alpha=0.25, lw=0)
    ax.plot(steps, [spread(runs, m, metric)[0] for m in minutes], "-", color="C0", lw=1.5,
            label=tr(f"dropout 0.3: mean and range of {len(runs)} seeds", f"Dropout 0.3：{len(runs)} 个种子的均值与范围"))


def plot_along_the_hour(axes, small: list[Run], dropout: list[Run], wide: list[Run], passed: dict, minutes=MINUTES) -> None:
    """Validation loss (``axes[0]``) and BLEU (``axes[1]``) along the updates: the literature's
    shape as the band of its seeds (and any seed carried on, dashed), dropout 0.1 and twice the
    width. ``passed[(name, metric)]``: the budgets (minutes) where that candidate's difference
    was beyond the seeds' noise; a filled marker there, a hollow one where it was inconclusive."""
    styles = {"dropout": ("s", "C1", tr("dropout 0.1", "Dropout 0.1")),
              "wide": ("^", "C2", tr("twice the width", "宽度加倍"))}
    for ax, metric, label in ((axes[0], "averaged_val_loss", tr("validation loss (nats per subword)", "验证集损失（每子词，奈特）")),
                              (axes[1], "val_bleu", tr("validation BLEU", "验证集 BLEU"))):
        _band(ax, small, metric, minutes)
        for run in small:
            later = sorted(m for m in run.points if m > minutes[-1])
            if later:
                chain = [minutes[-1], *later]
                ax.plot([run.updates(m) for m in chain], [run.value(m, metric) for m in chain], "--", color="C0",
                        lw=1, label=tr(f"dropout 0.3, seed {run.seed} carried on", f"Dropout 0.3，种子 {run.seed} 继续训练"))
        for name, runs in (("dropout", dropout), ("wide", wide)):
            marker, color, text = styles[name]
            hits = passed.get((name, metric), ())
            for i, run in enumerate(runs):
                shown = sorted(run.points)
                steps = [run.updates(m) for m in shown]
                ax.plot(steps, [run.value(m, metric) for m in shown], "-", color=color, lw=1, alpha=0.8,
                        label=text if i == 0 else None)
                for m, step in zip(shown, steps):
                    ax.plot(step, run.value(m, metric), marker, color=color, ms=6,
                            mfc=color if m in hits else "white")
        shown = sorted({m: r.updates(m) for r in [*small, *dropout, *wide] for m in r.points}.items())
        ax.set_xticks([step for _, step in shown], [f"{step:,}\n" + tr(f"{m} min", f"{m} 分钟") for m, step in shown],
                      fontsize=8)
        ax.set_xlabel(tr("updates (minutes of 2 CPU threads)", "更新次数（2 个 CPU 线程的分钟数）"))
        ax.set_title(label, loc="left", fontsize=10)
    # Proxy entries for the markers' fill: beyond the seeds' noise or not.
    axes[1].plot([], [], "o", color="gray", label=tr("filled: beyond seed noise", "实心：超出种子噪声"))
    axes[1].plot([], [], "o", color="gray", mfc="white", label=tr("hollow: inconclusive", "空心：无定论"))
    axes[1].legend(loc="lower right", fontsize=7)


def plot_beam_alpha(ax, grid: list[dict], paper=(4, 0.6), chosen=None) -> None:
    """Validation BLEU by beam size, one line per length penalty alpha."""
    table = {(r["beam_size"], r["alpha"]): r["val_bleu"] for r in grid}
    beams = sorted({b for b, _ in table})
    for alpha, marker in zip(sorted({a for _, a in table}), "os^v"):
        shown = [b for b in beams if (b, alpha) in table]
        ax.plot(shown, [table[b, alpha] for b in shown], marker + "-", label=f"α = {alpha}")
    ax.plot(paper[0], table[paper], "k*", ms=13, label=tr("the paper's (§6.1)", "论文的设置（§6.1）"))
    if chosen is not None and tuple(chosen) != tuple(paper):
        ax.plot(chosen[0], table[tuple(chosen)], "r*", ms=13, label=tr("best on validation", "验证集上最好"))
    ax.set_xticks(beams)
    ax.set_xlabel(tr("beam size (1: a single hypothesis)", "束宽（1：只保留一个假设）"))
    ax.set_ylabel(tr("validation BLEU", "验证集 BLEU"))
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)  # outside: no grid can put a point under it
