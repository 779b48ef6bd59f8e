"""The copy-task chapter's two training plots.

``plot_plateaus`` draws the loss of a few runs, update by update, against the loss levels of
models that know less than a copying model (``aiayn.lab.copy_training.loss_levels``): a flat
stretch of a curve sits on one of those levels, and the level says what the model knows by then.

``plot_spikes`` draws one seed of the reverse task from ``aiayn.experiments.copy_spikes``'s
results, without clipping and with the gradient's norm clipped at 1: every update's loss above,
its gradient's norm below (log scale), the validation exact match printed at each check, the
spikes marked; the legend sits in the lower panel's lower left, clear of the spikes' labels.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..plotting import tr

LEVEL_LABELS = {"uniform": ("uniform guess", "均匀乱猜"),
                "frequencies": ("token frequencies", "只知道词元频率"),
                "frequencies_and_end": ("+ where </s> goes", "再加上 </s> 的位置"),
                "floor": ("floor: knows everything", "下限：全都知道")}


def plot_plateaus(runs: dict, levels: dict, ax=None):
    """``runs``: {label: the loss of every update (a list)}, drawn in order; ``levels``:
    ``loss_levels(...)``, drawn as grey lines labelled at the right."""
    if ax is None:
        ax = plt.subplots(figsize=(6.4, 3.8))[1]
    last = max(len(losses) for losses in runs.values())
    for i, (label, losses) in enumerate(runs.items()):
        ax.plot(range(1, len(losses) + 1), losses, ("-", "--", "-.", ":")[i % 4], lw=1.2, label=label)
    for key, value in levels.items():
        ax.axhline(value, color="grey", lw=0.8, ls="--")
        ax.text(last, value + 0.02, tr(*LEVEL_LABELS[key]), ha="right", va="bottom", fontsize=7, color="grey")
    ax.set_xlim(0, last)
    ax.set_ylim(0, max(levels.values()) + 0.4)
    ax.set_xlabel(tr("update", "更新次数"))
    ax.set_ylabel(tr("loss (label-smoothed)", "损失（标签平滑）"))
    ax.legend(fontsize=8, loc="lower left")
    return ax


def plot_spikes(values: dict, seed: int = 0):
    """Loss and gradient norm per update of seed ``seed``, each clipping setting of the results."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, layout="constrained")
    names = {"none": tr("no clipping", "不裁剪"), "1.0": tr("gradient norm clipped at 1", "梯度范数裁剪到 1")}
    for colour, (key, label) in zip(("C3", "C0"), names.items()):
        run = next(r for r in values["runs"][key] if r["seed"] == seed)
        steps = range(1, len(run["loss"]) + 1)
        top.plot(steps, run["loss"], color=colour, lw=0.8, label=label)
        bottom.plot(steps, run["grad_norm"], color=colour, lw=0.8)
        for s in run["spikes"]:
            left = s > 0.8 * len(run["loss"])  # near the end: the label goes to the left
            top.annotate(tr("spike", "尖峰"), (s, run["loss"][s - 1]), xytext=(s - 70 if left else s + 15,
                         run["loss"][s - 1] + 0.4), color=colour, fontsize=8,
                         arrowprops={"arrowstyle": "->", "color": colour})
        for i, (step, exact) in enumerate(sorted((int(k), v) for k, v in run["exact_match"].items())):
            top.text(step, 2.9 - 0.25 * (key != "none"), f"{100 * exact:.0f}%", color=colour, fontsize=7, ha="center")
    top.axvline(values["recipe"]["warmup_steps"], color="grey", lw=0.6, ls=":")
    top.set_ylim(0.4, 3.1)
    top.set_ylabel(tr("loss of the update's batch", "该步批次的损失"))
    top.set_title(tr("Reverse task: validation exact match after every 100 updates printed on top",
                     "反转任务：上方数字为每 100 次更新后的验证集完全匹配率"), fontsize=9)
    bottom.set_yscale("log")
    bottom.legend(*top.get_legend_handles_labels(), fontsize=8, loc="lower left")
    bottom.set_xlabel(tr("update", "更新次数"))
    bottom.set_ylabel(tr("gradient norm applied", "所用梯度的范数"))
    return fig
