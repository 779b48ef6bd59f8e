"""Drawing of the chapter feed_forward_and_embeddings: what "position-wise" means.

    from aiayn.figures.feed_forward import positionwise_diagram
    fig, edges = positionwise_diagram()

Two panels over the same five positions. Left, a self-attention layer: output 3 reads every
input position (its lines drawn dark, the other outputs' faint). Right, the feed-forward
network: every output reads its own position only, through a copy of one and the same box (the
same W1, b1, W2, b2 at every position). ``edges`` says what each panel connects, as
{panel: [(input position, output position), ...]}, so a test can check the picture's claim.
Labels go through ``tr``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from ..plotting import tr

T, FOCUS = 5, 2  # five positions; the attention panel highlights output 3 (index 2)
INPUT_Y, BOX_Y, OUTPUT_Y = 0.0, 1.25, 2.5
ATTENTION, FFN = "#dcd3f0", "#cde9c6"  # the colours of figure2.py: attention purple, FFN green


def _token(ax, x, y, text):
    ax.add_patch(plt.Circle((x, y), 0.28, facecolor="white", edgecolor="#444444", linewidth=1.1, zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=10, zorder=4)


def _box(ax, x, y, width, text, color):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - 0.3), width, 0.6, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=color, edgecolor="#444444", linewidth=1.0, zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=4)


def positionwise_diagram():
    """(figure, edges): self-attention against the position-wise feed-forward network."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    edges = {"attention": [], "feed-forward": []}
    for ax in (left, right):
        ax.set_xlim(-0.6, T - 0.4)
        ax.set_ylim(-0.6, OUTPUT_Y + 0.6)
        ax.set_aspect("equal")
        ax.axis("off")
    # Self-attention: every output is a weighted mix of every input.
    _box(left, (T - 1) / 2, BOX_Y, T - 0.2, tr("self-attention", "自注意力"), ATTENTION)
    for out in range(T):
        for inp in range(T):
            dark = out == FOCUS
            left.plot([inp, out], [INPUT_Y + 0.28, OUTPUT_Y - 0.28], color="#333333" if dark else "#cccccc",
                      linewidth=1.3 if dark else 0.6, zorder=2 if dark else 1)
            edges["attention"].append((inp, out))
    left.set_title(tr("attention: output 3 reads every position", "注意力：输出 3 读取所有位置"))
    # The FFN: the same box at every position, nothing crosses between columns.
    for t in range(T):
        right.plot([t, t], [INPUT_Y + 0.28, OUTPUT_Y - 0.28], color="#333333", linewidth=1.3, zorder=1)
        _box(right, t, BOX_Y, 0.8, "FFN", FFN)
        edges["feed-forward"].append((t, t))
    right.set_title(tr("feed-forward: each position alone, same weights", "前馈网络：逐位置，权重相同"))
    for ax in (left, right):
        for t in range(T):
            _token(ax, t, INPUT_Y, f"$x_{t + 1}$")
            _token(ax, t, OUTPUT_Y, f"$y_{t + 1}$")
    return fig, edges
