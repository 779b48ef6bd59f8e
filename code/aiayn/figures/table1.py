"""Table 1 of the paper, drawn from measurements (the chapter "Why self-attention").

    plot_time_and_memory(values)     per layer type against n, log-log: CPU time per forward pass
                                     (median over rounds, a band from the first to the third
                                     quartile, Table 1's term dashed) and peak memory
    draw_dependency_grid(n)          which input positions each output position depends on, after
                                     1, 2, 3 steps of each type (the Jacobian's pattern): a step is
                                     a layer of a stack, or for the recurrence one update of its
                                     one layer, run on all positions at once

``values`` is the "values" of results/table1/cpu.json (aiayn.experiments.table1). Labels go
through ``tr``, so the Chinese page gets Chinese labels.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..experiments.table1 import lengths, series
from ..lab.complexity import KINDS, table1_term
from ..lab.path_length import dependency_pattern
from ..plotting import tr

COLORS = dict(zip(KINDS, ("C3", "C1", "C0", "C9", "C2", "C4", "C5")))


def layer_labels(k: int, r: int, heads: int) -> dict:
    return {"self_attention": tr(f"self-attention, {heads} heads", f"自注意力，{heads} 头"),
            "attention_alone": tr("attention alone (no projections)", "仅注意力（无投影）"),
            "recurrent": tr("recurrent, Python loop (Elman)", "循环，Python 循环（Elman）"),
            "torch_rnn": tr("recurrent, torch.nn.RNN", "循环，torch.nn.RNN"),
            "convolution": tr(f"convolution, k = {k}", f"卷积，k = {k}"),
            "separable": tr(f"separable convolution, k = {k}", f"可分离卷积，k = {k}"),
            "restricted": tr(f"restricted self-attention, r = {r}", f"受限自注意力，r = {r}")}


def _series(values: dict, kind: str, field: str) -> np.ndarray:
    return np.array(series(values, kind, field), dtype=float)


def plot_time_and_memory(values: dict, kinds=KINDS, bands: bool = True):
    """Two panels against n: CPU time (ms) and peak bytes of live tensors (MiB), for ``kinds``
    (the lesson draws Table 1's four rows, the lab notebook all seven); ``bands``: the middle
    half of the rounds around each median. Returns the figure."""
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"kinds: one or more of {', '.join(KINDS)}, got {list(kinds)!r}")
    d, k, r, heads = values["d"], values["k"], values["r"], values["heads"]
    ns = lengths(values)
    labels = layer_labels(k, r, heads)
    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    for kind in kinds:
        median = _series(values, kind, "cpu_median_s") * 1e3
        if bands:
            time_ax.fill_between(ns, _series(values, kind, "cpu_q1_s") * 1e3, _series(values, kind, "cpu_q3_s") * 1e3,
                                 color=COLORS[kind], alpha=0.25, lw=0)
        time_ax.plot(ns, median, "o-", color=COLORS[kind], markersize=3, label=labels[kind])
        # Table 1's term, scaled to pass through the measurement at the largest n
        law = np.array([table1_term(kind, n, d, k, r) for n in ns], dtype=float)
        time_ax.plot(ns, law * median[-1] / law[-1], "--", color=COLORS[kind], lw=1, alpha=0.6)
        memory_ax.plot(ns, _series(values, kind, "peak_bytes") / 2**20, "o-", color=COLORS[kind], markersize=3)
    time_ax.axvline(d, color="gray", lw=1, ls=":")
    time_ax.text(d * 1.08, 0.02, "n = d", color="gray", transform=time_ax.get_xaxis_transform())
    time_ax.set_ylabel(tr("CPU time per forward pass (ms)", "每次前向的 CPU 时间（毫秒）"))
    time_ax.set_title(tr("time; band: middle half of the rounds; dashed: Table 1",
                         "时间；色带：中间一半的轮次；虚线：表 1") if bands else
                      tr("time (median of the rounds); dashed: Table 1", "时间（各轮中位数）；虚线：表 1"))
    memory_ax.set_ylabel(tr("peak memory of live tensors (MiB)", "存活张量的峰值内存（MiB）"))
    memory_ax.set_title(tr("memory", "内存"))
    for ax in (time_ax, memory_ax):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(tr("sequence length n", "序列长度 n"))
    fig.legend(*time_ax.get_legend_handles_labels(), loc="outside lower center", ncol=min(4, len(kinds)), fontsize=9)
    return fig


# One kernel width throughout the chapter, k = 3 (its timings and path lengths use it too); the
# restricted window r = 5, not the timings' 33, so that 16 positions show its band.
GRID_STACKS = (("convolution", 3), ("dilated", 3), ("restricted", 5), ("recurrent", None),
               ("self_attention", None))


def draw_dependency_grid(n: int = 16, layers=(1, 2, 3)):
    """One panel per (number of layers, layer type): dark where output i depends on input j."""
    titles = {"convolution": tr("convolution, k = {w}", "卷积，k = {w}"),
              "dilated": tr("dilated, k = {w}", "空洞卷积，k = {w}"),
              "restricted": tr("restricted, r = {w}", "受限，r = {w}"),
              "recurrent": tr("recurrent (steps)", "循环（步数）"),
              "self_attention": tr("self-attention", "自注意力")}
    fig, axes = plt.subplots(len(layers), len(GRID_STACKS), figsize=(11, 2.2 * len(layers)),
                             layout="constrained", squeeze=False)
    for col, (kind, width) in enumerate(GRID_STACKS):
        for row, depth in enumerate(layers):
            ax = axes[row, col]
            ax.imshow(dependency_pattern(kind, n, depth, width).numpy(), cmap="Greys", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                ax.set_title(titles[kind].format(w=width), fontsize=10)
            if col == 0:
                ax.set_ylabel(tr(f"{depth} step{'s' * (depth > 1)}", f"{depth} 步"))
    fig.supxlabel(tr("input position j", "输入位置 j"))
    fig.supylabel(tr("output position i (dark: depends on j)", "输出位置 i（深色：依赖于 j）"))
    return fig


__all__ = ["COLORS", "GRID_STACKS", "draw_dependency_grid", "layer_labels", "plot_time_and_memory"]
