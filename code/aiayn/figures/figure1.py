"""The paper's Figure 1, drawn: the Transformer, encoder on the left, decoder on the right.

    from aiayn.figures.figure1 import figure1
    fig = figure1()

Boxes and arrows are matplotlib patches on an axis without ticks, laid out bottom to top as in
the paper: embeddings and positional encodings, N encoder layers (self-attention, feed-forward),
N decoder layers (masked self-attention, cross-attention, feed-forward), each sub-layer followed
by its Add & Norm with the skip connection drawn around it, then Linear and Softmax. Labels go
through ``tr``, so the Chinese page gets Chinese boxes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from ..plotting import tr

COLORS = {"embed": "#f8d0d0", "attn": "#fbd9a6", "norm": "#f2f2b0", "ffn": "#c7e3f6",
          "linear": "#dcd3f0", "softmax": "#cde9c6", "frame": "#f0f0f0"}
W, H = 2.6, 0.56  # box width and height
LINE = dict(color="#333333", linewidth=1.1)


def _box(ax, x, y, text, kind):
    ax.add_patch(FancyBboxPatch((x - W / 2, y - H / 2), W, H, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=COLORS[kind], edgecolor="#444444", linewidth=1.0, zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=4)


def _arrow(ax, points):
    """A polyline through ``points`` with an arrow head at the end."""
    for (x0, y0), (x1, y1) in zip(points[:-2], points[1:-1]):
        ax.plot([x0, x1], [y0, y1], zorder=2, **LINE)
    ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=10,
                                 zorder=2, shrinkA=0, shrinkB=0, **LINE))


def _adder(ax, x, y):
    ax.add_patch(Circle((x, y), 0.17, facecolor="white", edgecolor="#444444", zorder=3))
    ax.text(x, y - 0.01, "+", ha="center", va="center", fontsize=11, zorder=4)


def _qkv(ax, x, y_box, y_from, kv_from=None):
    """Three inputs (V, K, Q from left to right) entering an attention box from below."""
    top = y_box - H / 2
    if kv_from is None:  # self-attention: queries, keys and values are the same input
        for dx in (-0.7, 0.0, 0.7):
            _arrow(ax, [(x, y_from), (x, top - 0.25), (x + dx, top - 0.25), (x + dx, top)])
        return
    # Cross-attention: the queries come from the decoder below, the keys and values from the
    # encoder's output, entering from the left.
    _arrow(ax, [(x, y_from), (x + 0.7, y_from), (x + 0.7, top)])
    y_kv = top - 0.12
    ax.plot([kv_from[0], kv_from[0], x], [kv_from[1], y_kv, y_kv], zorder=2, **LINE)
    for dx in (-0.7, 0.0):
        _arrow(ax, [(x + dx, y_kv), (x + dx, top)])


def _stack(ax, x, side, sublayers, frame_top, label):
    """One stack: each sub-layer, then its Add & Norm, with the skip connection around both."""
    ax.add_patch(FancyBboxPatch((x - W / 2 - 0.55, 2.75), W + 1.1, frame_top - 2.75,
                                boxstyle="round,pad=0.02,rounding_size=0.25",
                                facecolor=COLORS["frame"], edgecolor="#888888", zorder=1))
    ax.text(x + side * (W / 2 + 0.85), (2.75 + frame_top) / 2, label, ha="center", va="center", fontsize=11)
    y_prev = 2.45  # the adder of the embedding and the positional encoding
    for y, text, kind, kv_from in sublayers:
        first = y_prev < 2.5
        y_split = y_prev + (0.45 if first else 0.3)
        _arrow(ax, [(x, y_prev + (0.17 if first else H / 2)), (x, y_split)])
        if kind == "attn":
            _qkv(ax, x, y, y_split, kv_from)
        else:
            _arrow(ax, [(x, y_split), (x, y - H / 2)])
        _box(ax, x, y, text, kind)
        edge = x + side * (W / 2 + 0.3)  # the skip connection, around the sub-layer
        _arrow(ax, [(x, y_split), (edge, y_split), (edge, y + 0.9), (x + side * W / 2, y + 0.9)])
        _arrow(ax, [(x, y + H / 2), (x, y + 0.9 - H / 2)])
        _box(ax, x, y + 0.9, tr("Add & Norm", "残差相加 & 层归一化"), "norm")
        y_prev = y + 0.9
    return y_prev


def figure1():
    """The whole model on one figure (returned; the notebook shows it)."""
    fig, ax = plt.subplots(figsize=(6.4, 8.0))
    ax.set_xlim(0.2, 10.0)
    ax.set_ylim(0.1, 12.1)
    ax.axis("off")
    xe, xd = 2.9, 7.3
    # Embeddings and positional encodings (§3.4, §3.5).
    for x, side, below, embedding in ((xe, -1, tr("Inputs", "输入"), tr("Input Embedding", "输入嵌入")),
                                      (xd, 1, tr("Outputs (shifted right)", "输出（右移一位）"),
                                       tr("Output Embedding", "输出嵌入"))):
        ax.text(x, 0.35, below, ha="center", va="center", fontsize=9)
        _arrow(ax, [(x, 0.55), (x, 1.2 - H / 2)])
        _box(ax, x, 1.2, embedding, "embed")
        _arrow(ax, [(x, 1.2 + H / 2), (x, 2.28)])
        _adder(ax, x, 2.45)
        ax.text(x + side * 1.45, 2.45, tr("Positional\nEncoding", "位置\n编码"), ha="center", va="center", fontsize=8)
        _arrow(ax, [(x + side * 0.95, 2.45), (x + side * 0.17, 2.45)])
    encoder_top = _stack(ax, xe, -1, [(3.6, tr("Multi-Head\nAttention", "多头注意力"), "attn", None),
                                             (5.4, tr("Feed\nForward", "前馈网络"), "ffn", None)], 7.05, "N×")
    memory_y = 7.35  # the encoder's output: keys and values of every cross-attention
    ax.plot([xe, xe, xd - 1.65], [encoder_top + H / 2, memory_y, memory_y], color="#333333", linewidth=1.1)
    decoder_top = _stack(ax, xd, 1, [
        (3.6, tr("Masked\nMulti-Head Attention", "掩码多头注意力"), "attn", None),
        (5.7, tr("Multi-Head\nAttention", "多头注意力"), "attn", (xd - 1.65, memory_y)),
        (7.5, tr("Feed\nForward", "前馈网络"), "ffn", None)], 9.15, "×N")
    # The output side (§3.4): the pre-softmax linear projection, then softmax.
    _arrow(ax, [(xd, decoder_top + H / 2), (xd, 9.85 - H / 2)])
    _box(ax, xd, 9.85, tr("Linear", "线性层"), "linear")
    _arrow(ax, [(xd, 9.85 + H / 2), (xd, 10.75 - H / 2)])
    _box(ax, xd, 10.75, "Softmax", "softmax")
    _arrow(ax, [(xd, 10.75 + H / 2), (xd, 11.5)])
    ax.text(xd, 11.75, tr("Output Probabilities", "输出概率"), ha="center", va="center", fontsize=9)
    ax.text(xe, 7.8, tr("encoder", "编码器"), ha="center", fontsize=11)
    ax.text(xd + 2.0, 9.5, tr("decoder", "解码器"), ha="center", fontsize=11)
    ax.set_title(tr("The Transformer (after Figure 1 of the paper)", "Transformer 结构（仿论文图 1）"), fontsize=11)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.96)
    return fig


__all__ = ["figure1"]
