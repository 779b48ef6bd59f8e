"""The sinusoidal encoding read as clock hands, beside a binary counter (positional_encoding).

    from aiayn.figures.positional import draw_clock_hands
    fig = draw_clock_hands()            # positions 0..15, the four pairs of d_model = 8

Pair i of the table is the point (sin(pos w_i), cos(pos w_i)). Drawn with x = sin and y = cos,
that point is the tip of a clock hand that points at twelve for position 0 and turns clockwise
by w_i radians per position: pair 0 is the fast hand, each later pair a slower one. The top
panel is a binary counter over the same positions, whose low bit flips every step and each
higher bit half as often: fast digits tell neighbours apart, slow ones far-apart positions.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle, Rectangle

from .._checks import check_positive
from ..np.embeddings import sinusoidal_table
from ..plotting import tr

RADIUS = 0.42
ON, OFF, HAND, FACE = "#3b5b92", "#ffffff", "#c0392b", "#f3f3f3"


def clock_hands(num_positions: int, d_model: int) -> np.ndarray:
    """(num_positions, d_model / 2, 2): the tip (x, y) = (sin, cos) of pair i's hand at each
    position, read straight from the table, so the drawing shows the table's own numbers."""
    table = sinusoidal_table(num_positions, d_model)
    return np.stack([table[:, 0::2], table[:, 1::2]], axis=-1)


def counter_bits(num_positions: int, num_bits: int) -> np.ndarray:
    """(num_positions, num_bits): bit j of each position, lowest bit first."""
    check_positive("num_bits", num_bits)
    return (np.arange(num_positions)[:, None] >> np.arange(num_bits)) & 1


def draw_clock_hands(num_positions: int = 16, d_model: int = 8):
    """Two panels over positions 0 .. num_positions - 1: a binary counter with d_model / 2 bits
    (top) and the d_model / 2 pairs of the sinusoidal table as clock hands (bottom)."""
    check_positive("num_positions", num_positions)
    hands = clock_hands(num_positions, d_model)  # also checks d_model (positive, even)
    pairs = d_model // 2
    bits = counter_bits(num_positions, pairs)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(0.5 * num_positions + 2.4, 1.0 * pairs + 1.2),
                                      sharex=True, layout="constrained")
    for pos in range(num_positions):
        for row in range(pairs):
            top.add_patch(Rectangle((pos - 0.42, row - 0.42), 0.84, 0.84, edgecolor="#999999",
                                    facecolor=ON if bits[pos, row] else OFF, linewidth=0.6))
            bottom.add_patch(Circle((pos, row), RADIUS, facecolor=FACE, edgecolor="#999999", linewidth=0.6))
            x, y = hands[pos, row] * RADIUS * 0.9
            # y grows downwards on these axes (row 0 on top), so the hand's y is drawn negated.
            bottom.plot([pos, pos + x], [row, row - y], color=HAND, linewidth=1.6, solid_capstyle="round")
    rates = [f"1/{10 ** i:,}" if i else "1" for i in range(pairs)] if d_model == 8 else None
    for ax, labels, title in (
            (top, [tr(f"bit {j}", f"第 {j} 位") for j in range(pairs)],
             tr("a binary counter: bit 0 flips every position, each next bit half as often",
                "二进制计数器：第 0 位每个位置翻转一次，往后每一位慢一半")),
            (bottom, [tr(f"pair {i}", f"第 {i} 对") + (f" ({rates[i]})" if rates else "") for i in range(pairs)],
             tr("the sinusoidal pairs as clock hands: pair i turns by ω_i radians per position",
                "正弦编码的各对维度像时钟指针：第 i 对每个位置转过 ω_i 弧度"))):
        ax.set_xlim(-0.6, num_positions - 0.4)
        ax.set_ylim(pairs - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_yticks(range(pairs), labels=labels)
        ax.set_title(title, fontsize=10)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
        ax.tick_params(length=0)
    bottom.set_xticks(range(num_positions))
    bottom.set_xlabel(tr("position pos", "位置 pos"))
    return fig
