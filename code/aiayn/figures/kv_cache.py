"""The key-value cache (the fast decoding chapter), drawn, and its measured speed-up plotted.

``draw_kv_cache`` shows one decoder layer's cache over the first steps of decoding, in three
panels: the self-attention keys and values gain a column per step (the newest position's),
the encoder-decoder ones are computed once and read at every step, and beam search moves
whole rows when it re-ranks its beams (row r continues old row ``rows[r]``).

``plot_speedup`` draws uncached / cached CPU time against the output length from a results
file of benchmarks/bench_decoding.py: the ratio of the fastest rounds, and the range of the
per-round ratios as an error bar.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ..plotting import tr

NEW, KEPT = "#e6862e", "#cfcfcf"
BEAM_COLOURS = ("#8fb8de", "#f2b880", "#a8d5a2", "#d7a6d8")


def _cell(ax, x, y, fill, text=None):
    ax.add_patch(Rectangle((x, y), 0.9, 0.9, facecolor=fill, edgecolor="#555555", lw=0.8))
    if text:
        ax.text(x + 0.45, y + 0.45, text, ha="center", va="center", fontsize=8)


def _steps_panel(ax, steps: int, source_len: int) -> None:
    """Self-attention (left block) and encoder-decoder (right block) keys and values per step."""
    right = steps + 1.5  # where the encoder-decoder block starts
    for t in range(1, steps + 1):
        y = steps - t
        ax.text(-0.3, y + 0.45, tr(f"step {t}", f"第 {t} 步"), ha="right", va="center", fontsize=9)
        for j in range(t):  # positions 0 .. t-1: the newest one computed now
            _cell(ax, j, y, NEW if j == t - 1 else KEPT, str(j))
        for j in range(source_len):  # computed at step 1, read at every step after
            _cell(ax, right + j, y, NEW if t == 1 else KEPT)
    ax.text(steps / 2, steps + 0.25, tr("self-attention K, V\n(one column per step)",
                                        "自注意力的 K、V\n（每步多一列）"),
            ha="center", va="bottom", fontsize=9)
    ax.text(right + source_len / 2, steps + 0.25,
            tr("encoder-decoder K, V\n(computed once, then read)", "交叉注意力的 K、V\n（只算一次，之后只读）"),
            ha="center", va="bottom", fontsize=9)
    ax.add_patch(Rectangle((0, -1.2), 0.9, 0.5, facecolor=NEW, edgecolor="#555555", lw=0.8))
    ax.text(1.1, -0.95, tr("computed this step", "本步新算"), va="center", fontsize=8)
    ax.add_patch(Rectangle((4.6, -1.2), 0.9, 0.5, facecolor=KEPT, edgecolor="#555555", lw=0.8))
    ax.text(5.7, -0.95, tr("read from the cache", "从缓存读取"), va="center", fontsize=8)
    ax.set_xlim(-1.6, right + source_len + 0.3)
    ax.set_ylim(-1.4, steps + 1.4)


def _beams_panel(ax, rows: list[int], length: int) -> None:
    """Old cache rows (one colour per beam) and the new rows after ``reorder(rows)``."""
    beams = len(rows)
    gap = length + 2.2
    for r in range(beams):
        y = beams - 1 - r
        for j in range(length):
            _cell(ax, j, y, BEAM_COLOURS[r])
            _cell(ax, gap + j, beams - 1 - r, BEAM_COLOURS[rows[r]])
        ax.text(-0.3, y + 0.45, tr(f"beam {r}", f"束 {r}"), ha="right", va="center", fontsize=9)
    for r, parent in enumerate(rows):
        ax.annotate("", xy=(gap - 0.1, beams - 1 - r + 0.45), xytext=(length + 0.0, beams - 1 - parent + 0.45),
                    arrowprops=dict(arrowstyle="-|>", color="#444444", lw=1))
    ax.text(length / 2, beams + 0.2, tr("cache before", "重排前的缓存"), ha="center", va="bottom", fontsize=9)
    ax.text(gap + length / 2, beams + 0.2, tr("after reorder(rows)", "reorder(rows) 之后"),
            ha="center", va="bottom", fontsize=9)
    ax.text(gap / 2 + length / 2, -0.95, f"rows = {rows}", ha="center", va="center", fontsize=9,
            family="monospace")
    ax.set_xlim(-1.6, gap + length + 0.3)
    ax.set_ylim(-1.4, beams + 1.4)


def draw_kv_cache(steps: int = 4, source_len: int = 5, rows=(0, 0, 2, 1)):
    """The figure: the cache over ``steps`` steps of one sentence of ``source_len`` source tokens,
    and beam search's ``reorder(rows)`` on four beams. Returns the figure."""
    if steps < 1 or source_len < 1:
        raise ValueError(f"steps and source_len must be at least 1, got {steps} and {source_len}")
    rows = list(rows)
    if any(not 0 <= r < len(rows) for r in rows):
        raise ValueError(f"rows must index the {len(rows)} beams, got {rows}")
    fig, (ax_steps, ax_beams) = plt.subplots(
        1, 2, figsize=(11, 3.9), layout="constrained", width_ratios=(steps + source_len + 3, 11))
    _steps_panel(ax_steps, steps, source_len)
    _beams_panel(ax_beams, rows, 4)
    ax_steps.set_title(tr("One decoder layer's cache, step by step", "一个解码器层的缓存，逐步增长"),
                       fontsize=10)
    ax_beams.set_title(tr("Beam search: the rows follow their beams", "束搜索：缓存的行跟着束走"),
                       fontsize=10)
    for ax in (ax_steps, ax_beams):
        ax.set_aspect("equal")
        ax.axis("off")
    return fig


def plot_speedup(record: dict, ax=None):
    """Uncached / cached CPU time against output tokens, one line per model shape, from a
    bench_decoding.py results file: markers at the ratio of the fastest rounds, bars over the
    range of the per-round ratios. Returns the axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    names = {"multi30k-cpu": tr("CPU model (d_model 128, 2 + 2 layers)", "CPU 模型（d_model 128，2 + 2 层）"),
             "base": tr("base size (d_model 512, 6 + 6 layers)", "基础模型大小（d_model 512，6 + 6 层）")}
    rows = record["values"]["rows"]
    for shape, marker in zip(dict.fromkeys(r["shape"] for r in rows), "os^v"):
        mine = [r for r in rows if r["shape"] == shape]
        tokens = [r["tokens"] for r in mine]
        ratio = [r["speedup_cpu"] for r in mine]
        below = [r["speedup_cpu"] - min(r["speedup_cpu_per_round"]) for r in mine]
        above = [max(r["speedup_cpu_per_round"]) - r["speedup_cpu"] for r in mine]
        ax.errorbar(tokens, ratio, yerr=[below, above], marker=marker, capsize=3,
                    label=names.get(shape, shape))
    ax.axhline(1, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["tokens"] for r in rows}), labels=[str(t) for t in sorted({r["tokens"] for r in rows})])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel(tr("output tokens (greedy decoding, one sentence)", "输出词元数（贪心解码，一个句子）"))
    ax.set_ylabel(tr("CPU time without cache / with", "CPU 时间：无缓存 / 有缓存"))
    ax.legend(fontsize=9)
    return ax
