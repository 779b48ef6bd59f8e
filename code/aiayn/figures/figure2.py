"""The paper's Figure 2, drawn: scaled dot-product attention (left), multi-head attention (right).

    from aiayn.figures.figure2 import figure2
    fig = figure2("left")            # one panel: "left", "right", or "both" (the default)

Boxes and arrows are matplotlib patches on an axis without ticks, laid out bottom to top as in
the paper; labels go through ``tr`` so the Chinese page gets Chinese boxes. Beside the boxes, in
grey, what each step computes, with the course's names (a note the paper's figure does not
have). Each ``draw_*`` returns a ``Diagram``: the boxes by role and every arrow's end points, so
the tests can check that each box is fed from below.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..plotting import tr

# The paper's colours, lightened: products purple, scaling yellow, the mask pink, softmax green.
COLORS = {"matmul": "#dcd3f0", "scale": "#f6f1b8", "mask": "#f8d0d0", "softmax": "#cde9c6",
          "linear": "#e4e4e4", "attention": "#dcd3f0", "concat": "#f6f1b8"}
EDGE, NOTE = "#444444", "#666666"
BOX_HEIGHT = 0.8


@dataclass
class Diagram:
    """What a panel drew: ``boxes[role] = (x_left, y_bottom, width, height)``; ``arrows`` as
    ((x0, y0), (x1, y1)) from tail to head."""
    boxes: dict = field(default_factory=dict)
    arrows: list = field(default_factory=list)


def _box(ax, diagram, role, x, y, width, text, kind, copies=1, height=BOX_HEIGHT):
    """A rounded box centred on (x, y); ``copies`` > 1 draws the stack of the paper's h heads."""
    for i in reversed(range(copies)):  # the back copies first, offset up and to the right
        dx = dy = 0.16 * i
        ax.add_patch(FancyBboxPatch((x - width / 2 + dx, y - height / 2 + dy), width, height,
                                    boxstyle="round,pad=0.02,rounding_size=0.15",
                                    facecolor=COLORS[kind], edgecolor=EDGE, linewidth=1.0, zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=10, zorder=4)
    diagram.boxes[role] = (x - width / 2, y - height / 2, width, height)


def _arrow(ax, diagram, tail, head):
    ax.add_patch(FancyArrowPatch(tail, head, arrowstyle="-|>", mutation_scale=11, color="#333333",
                                 linewidth=1.1, zorder=2, shrinkA=0, shrinkB=0))
    diagram.arrows.append((tail, head))


def _note(ax, x, y, text):
    ax.text(x, y, text, ha="right", va="center", fontsize=8.5, color=NOTE, zorder=4)


def _frame(ax, title, xlim, ylim):
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=12)


def draw_scaled_dot_product_attention(ax) -> Diagram:
    """Left panel: MatMul, Scale, Mask (opt.), SoftMax, MatMul, with Q, K, V entering below."""
    d = Diagram()
    x, width, steps = 4.0, 3.0, [
        ("scores", 2.2, tr("MatMul", "矩阵乘法"), "matmul", r"$QK^\top$"),
        ("scale", 3.7, tr("Scale", "缩放"), "scale", r"$\div\sqrt{d_k}$"),
        ("mask", 5.2, tr("Mask (opt.)", "掩码（可选）"), "mask", tr("False → −∞", "False → −∞")),
        ("softmax", 6.7, "SoftMax", "softmax", tr("over the keys", "沿键的方向")),
    ]
    for role, y, text, kind, note in steps:
        _box(ax, d, role, x, y, width, text, kind)
        _note(ax, x - width / 2 - 0.25, y, note)
    for (_, y0, *_), (_, y1, *_) in zip(steps, steps[1:]):
        _arrow(ax, d, (x, y0 + BOX_HEIGHT / 2), (x, y1 - BOX_HEIGHT / 2))
    x_v, y_top = 7.5, 8.2
    _box(ax, d, "weighted_sum", (3.0 + 8.2) / 2, y_top, 8.2 - 3.0, tr("MatMul", "矩阵乘法"), "matmul")
    _note(ax, 3.0 - 0.25, y_top, r"$\cdot\,V$")
    _arrow(ax, d, (x, 6.7 + BOX_HEIGHT / 2), (x, y_top - BOX_HEIGHT / 2))
    for name, x_in, y_head in (("Q", 3.0, 2.2), ("K", 5.0, 2.2), ("V", x_v, y_top)):
        ax.text(x_in, 0.55, name, ha="center", va="center", fontsize=13)
        _arrow(ax, d, (x_in, 0.9), (x_in, y_head - BOX_HEIGHT / 2))
    _arrow(ax, d, ((3.0 + 8.2) / 2, y_top + BOX_HEIGHT / 2), ((3.0 + 8.2) / 2, 9.5))
    _frame(ax, tr("Scaled dot-product attention", "缩放点积注意力"), (-1.2, 9.2), (0, 10))
    return d


def draw_multi_head_attention(ax, heads: int = 8) -> Diagram:
    """Right panel: V, K, Q through h linear maps each, h attentions, Concat, Linear."""
    d = Diagram()
    copies = 3  # the stack that stands for h heads
    y_lin, y_att, y_cat, y_out = 2.3, 4.6, 6.9, 8.4
    for name, x_in in (("V", 2.0), ("K", 4.6), ("Q", 7.2)):
        _box(ax, d, f"linear_{name}", x_in, y_lin, 2.0, tr("Linear", "线性层"), "linear", copies)
        y_mid = (y_lin + BOX_HEIGHT / 2 + 0.32 + y_att - BOX_HEIGHT / 2) / 2
        ax.text(x_in + 0.15, y_mid, rf"$W_i^{name}$", ha="left", va="center", fontsize=9, color=NOTE)
        ax.text(x_in, 0.55, name, ha="center", va="center", fontsize=13)
        _arrow(ax, d, (x_in, 0.9), (x_in, y_lin - BOX_HEIGHT / 2))
        _arrow(ax, d, (x_in, y_lin + BOX_HEIGHT / 2 + 0.32), (x_in, y_att - BOX_HEIGHT / 2))
    _box(ax, d, "attention", 4.6, y_att, 7.4, tr("Scaled dot-product attention", "缩放点积注意力"),
         "attention", copies)
    ax.text(8.75, y_att + 0.5, f"h = {heads}", ha="left", va="center", fontsize=10)
    _box(ax, d, "concat", 4.6, y_cat, 3.0, tr("Concat", "拼接"), "concat")
    _note(ax, 4.6 - 1.75, y_cat, tr("h heads side by side", "h 个头并排"))
    _box(ax, d, "output", 4.6, y_out, 3.0, tr("Linear", "线性层"), "linear")
    _note(ax, 4.6 - 1.75, y_out, r"$W^O$")
    _arrow(ax, d, (4.6, y_att + BOX_HEIGHT / 2 + 0.32), (4.6, y_cat - BOX_HEIGHT / 2))
    _arrow(ax, d, (4.6, y_cat + BOX_HEIGHT / 2), (4.6, y_out - BOX_HEIGHT / 2))
    _arrow(ax, d, (4.6, y_out + BOX_HEIGHT / 2), (4.6, 9.5))
    _frame(ax, tr("Multi-head attention", "多头注意力"), (-0.6, 10.0), (0, 10))
    return d


PANELS = {"left": draw_scaled_dot_product_attention, "right": draw_multi_head_attention}


def figure2(panels: str = "both"):
    """A figure with the left panel, the right panel, or both side by side (``panels``)."""
    names = list(PANELS) if panels == "both" else [panels]
    if any(name not in PANELS for name in names):
        raise ValueError(f"panels={panels!r}: choose 'left', 'right' or 'both'")
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.9), squeeze=False)
    for ax, name in zip(axes[0], names):
        PANELS[name](ax)
    fig.tight_layout()
    return fig
