"""The attention backward graph (the backpropagation chapter): what the forward pass computes,
what it keeps for the backward pass, and where each gradient flows.

Three columns, one per step of scaled dot-product attention (scores, softmax, weighted sum),
three rows: the forward pass left to right, the tensors it saves, and the backward pass right
to left, each backward step under its forward step and reading only what that step saved:

    forward    Q, K -> S = Q K^T / sqrt(d_k) -> P = softmax(S) -> O = P V   (V from above)
    saved              Q, K                     P                 P, V
    backward   dQ, dK <- from dS and Q, K   <- dS from dP, P  <- dP, dV from dO, P, V  <- dO

    fig = draw_attention_backward()
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from ..plotting import tr

FORWARD, SAVED, BACKWARD = "#dbe9f6", "#eeeeee", "#fde0c5"  # fills of the three rows
COLUMNS = (2.0, 4.4, 6.8)  # x of the scores, the softmax and the weighted sum
Y_FORWARD, Y_SAVED, Y_BACKWARD = 3.0, 1.75, 0.5
WIDTH, HEIGHT = 1.95, 0.62


def _box(ax, x, y, text, fill, width=WIDTH, height=HEIGHT, dashed=False):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.03,rounding_size=0.08", facecolor=fill,
                                edgecolor="#555555", linestyle="--" if dashed else "-", lw=1))
    ax.text(x, y, text, ha="center", va="center", fontsize=9.5)


def _arrow(ax, start, end, color="black", dashed=False, label=None, label_side=0.14):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=color, lw=1.4 if not dashed else 1.0,
                                linestyle="--" if dashed else "-", shrinkA=2, shrinkB=2))
    if label:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + label_side, label,
                ha="center", va="bottom", fontsize=9, color=color)


def draw_attention_backward(ax=None):
    """Draws the graph on ``ax`` (a new figure when None) and returns the figure."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 5.2), layout="constrained")
    scores, softmax, weighted = COLUMNS
    half = WIDTH / 2
    # Row labels, in the page's language.
    for y, en, zh in ((Y_FORWARD, "forward", "前向"), (Y_SAVED, "saved for\nbackward", "为反向\n保存"),
                      (Y_BACKWARD, "backward", "反向")):
        ax.text(-0.75, y, tr(en, zh), ha="right", va="center", fontsize=10)

    # The forward pass: left to right.
    _box(ax, 0, Y_FORWARD, "$Q,\\ K$", FORWARD, width=0.9)
    _box(ax, scores, Y_FORWARD, "$S = QK^\\top/\\sqrt{d_k}$", FORWARD)
    _box(ax, softmax, Y_FORWARD, "$P = \\mathrm{softmax}(S)$", FORWARD)
    _box(ax, weighted, Y_FORWARD, "$O = PV$", FORWARD)
    _box(ax, weighted, Y_FORWARD + 1.15, "$V$", FORWARD, width=0.6)
    _arrow(ax, (0.45, Y_FORWARD), (scores - half, Y_FORWARD))
    _arrow(ax, (scores + half, Y_FORWARD), (softmax - half, Y_FORWARD))
    _arrow(ax, (softmax + half, Y_FORWARD), (weighted - half, Y_FORWARD))
    _arrow(ax, (weighted, Y_FORWARD + 1.15 - HEIGHT / 2), (weighted, Y_FORWARD + HEIGHT / 2))
    _arrow(ax, (weighted + half, Y_FORWARD), (weighted + half + 0.75, Y_FORWARD),
           label=tr("output", "输出"))

    # What each step keeps, and what its backward step reads.
    for x, text in ((scores, "$Q,\\ K$"), (softmax, "$P$"), (weighted, "$P,\\ V$")):
        _box(ax, x, Y_SAVED, text, SAVED, width=0.9, height=0.5, dashed=True)
        _arrow(ax, (x, Y_FORWARD - HEIGHT / 2), (x, Y_SAVED + 0.25), color="#777777", dashed=True)
        _arrow(ax, (x, Y_SAVED - 0.25), (x, Y_BACKWARD + HEIGHT / 2), color="#777777", dashed=True)

    # The backward pass: right to left, each step under the forward step it undoes.
    orange = "#c0580b"
    _box(ax, weighted, Y_BACKWARD, "$dP = dO\\,V^\\top$\n$dV = P^\\top dO$", BACKWARD,
         height=0.78)
    _box(ax, softmax, Y_BACKWARD, "$dS = P \\odot (dP - r)$\n$r = \\mathrm{rowsum}(dP \\odot P)$",
         BACKWARD, height=0.78)
    _box(ax, scores, Y_BACKWARD, "$dQ = dS\\,K/\\sqrt{d_k}$\n$dK = dS^\\top Q/\\sqrt{d_k}$",
         BACKWARD, height=0.78)
    _box(ax, 0, Y_BACKWARD, "$dQ,\\ dK$", BACKWARD, width=0.9)
    _box(ax, weighted, Y_BACKWARD - 1.15, "$dV$", BACKWARD, width=0.6)
    _arrow(ax, (weighted + half + 0.75, Y_BACKWARD), (weighted + half, Y_BACKWARD), color=orange,
           label="$dO$")
    _arrow(ax, (weighted - half, Y_BACKWARD), (softmax + half, Y_BACKWARD),
           color=orange, label="$dP$")
    _arrow(ax, (softmax - half, Y_BACKWARD), (scores + half, Y_BACKWARD), color=orange,
           label="$dS$")
    _arrow(ax, (scores - half, Y_BACKWARD), (0.45, Y_BACKWARD), color=orange)
    _arrow(ax, (weighted, Y_BACKWARD - 0.39), (weighted, Y_BACKWARD - 1.15 + HEIGHT / 2),
           color=orange)

    ax.set_xlim(-1.9, weighted + half + 0.95)
    ax.set_ylim(Y_BACKWARD - 1.6, Y_FORWARD + 1.6)
    ax.axis("off")
    ax.set_title(tr("Scaled dot-product attention: forward, saved, backward",
                    "缩放点积注意力：前向、保存、反向"), fontsize=11)
    return ax.figure
