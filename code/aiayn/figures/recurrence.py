"""Why recurrence is sequential, drawn: what each output of a layer waits for (the paper in one
page, §1).

    from aiayn.figures.recurrence import recurrence_and_attention
    fig = recurrence_and_attention(length=5)

Left, a recurrent layer: h_t is computed from x_t and h_{t-1}, so the outputs form a chain and
each one is labelled with the step at which it can be computed at the earliest (1, 2, ..., T).
Right, a self-attention layer: every output reads every input and no other output, so all of
them can be computed at step 1. The step labels are computed from the edges drawn (the longest
chain of outputs that leads to each output), not typed, so the picture cannot say something its
edges do not.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch

from .._checks import check_positive
from ..plotting import tr

INPUT, OUTPUT, WAIT = "#c7e3f6", "#fbd9a6", "#c0392b"


def earliest_steps(length: int, waits_for) -> list[int]:
    """Step at which each of ``length`` outputs can be computed at the earliest, if everything
    that is ready runs in parallel: 1 + the latest step among the outputs it waits for
    (``waits_for(t)``: indices of earlier outputs that output t reads)."""
    steps: list[int] = []
    for t in range(length):
        steps.append(1 + max((steps[s] for s in waits_for(t)), default=0))
    return steps


def _node(ax, x, y, text, color):
    ax.add_patch(Circle((x, y), 0.32, facecolor=color, edgecolor="#444444", zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=11, zorder=4)


def _arrow(ax, tail, head, color="#555555", width=1.0):
    ax.add_patch(FancyArrowPatch(tail, head, arrowstyle="-|>", mutation_scale=10, color=color,
                                 linewidth=width, shrinkA=12, shrinkB=12, zorder=2))


def _panel(ax, length, output_name, recurrent):
    waits_for = (lambda t: [t - 1] if t else []) if recurrent else (lambda t: [])
    steps = earliest_steps(length, waits_for)
    for t in range(length):
        _node(ax, t, 0, f"$x_{t + 1}$", INPUT)
        _node(ax, t, 2, f"${output_name}_{t + 1}$", OUTPUT)
        ax.text(t, 2.6, tr(f"step {steps[t]}", f"第 {steps[t]} 步"), ha="center", fontsize=8.5)
        sources = [t] if recurrent else range(length)
        for s in sources:  # what output t reads from the inputs
            _arrow(ax, (s, 0), (t, 2), width=1.0 if recurrent else 0.6)
        for s in waits_for(t):  # what output t must wait for
            _arrow(ax, (s, 2), (t, 2), color=WAIT, width=2.0)
    ax.set_xlim(-0.6, length - 0.4)
    ax.set_ylim(-0.6, 3.0)
    ax.set_aspect("equal")
    ax.axis("off")
    return steps


def recurrence_and_attention(length: int = 5):
    """Two panels, a recurrent layer and a self-attention layer over ``length`` positions."""
    check_positive("length", length)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 2.9))
    rnn_steps = _panel(axes[0], length, "h", recurrent=True)
    attention_steps = _panel(axes[1], length, "y", recurrent=False)
    axes[0].set_title(tr(f"recurrent layer: {max(rnn_steps)} steps in a row",
                         f"循环层：依次 {max(rnn_steps)} 步"), fontsize=11)
    axes[1].set_title(tr(f"self-attention: {max(attention_steps)} step for all positions",
                         f"自注意力：所有位置 {max(attention_steps)} 步完成"), fontsize=11)
    fig.tight_layout()
    return fig


__all__ = ["earliest_steps", "recurrence_and_attention"]
