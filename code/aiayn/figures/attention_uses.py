"""Drawings of the chapter attention_in_the_model: masks and attention weights, side by side.

    from aiayn.figures.attention_uses import heatmap_row
    fig = heatmap_row([(mask, keys, queries, title), ...], binary=True)

Each panel is a (T_q, T_k) matrix with the key tokens along the x axis and the query tokens
down the y axis, the way the chapter reads a mask ("may query i see key j?"). A binary row
(masks) is drawn in two colours with every cell outlined and no colour bar, so that a blocked
cell reads as a hole; a weight row gets the course's heatmap with a colour bar. Axis labels go
through ``tr``; titles are the caller's, already translated.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from ..plotting import heatmap, tr

BLOCKED, ALLOWED = "#f1f1f1", "#3b6fb6"


def _as_array(matrix) -> np.ndarray:
    if hasattr(matrix, "detach"):
        matrix = matrix.detach().cpu().numpy()
    return np.asarray(matrix, dtype=float)


def heatmap_row(panels, suptitle: str | None = None, binary: bool = False, panel_width: float = 3.6):
    """One figure, one panel per (matrix, keys, queries, title); returns the figure."""
    if not panels:
        raise ValueError("panels: at least one (matrix, keys, queries, title)")
    fig, axes = plt.subplots(1, len(panels), figsize=(panel_width * len(panels), 3.9),
                             layout="constrained", squeeze=False)
    for ax, (matrix, keys, queries, title) in zip(axes[0], panels):
        m = _as_array(matrix)
        if m.shape != (len(queries), len(keys)):
            raise ValueError(f"panels: a {m.shape} matrix for {len(queries)} queries and {len(keys)} keys")
        if binary:
            ax.imshow(m, cmap=ListedColormap([BLOCKED, ALLOWED]), vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(np.arange(-0.5, len(keys)), minor=True)
            ax.set_yticks(np.arange(-0.5, len(queries)), minor=True)
            ax.grid(which="minor", color="white", linewidth=1.5)
            ax.tick_params(which="minor", length=0)
            ax.set_xticks(range(len(keys)), labels=keys, rotation=90)
            ax.set_yticks(range(len(queries)), labels=queries)
            ax.set_title(title)
        else:
            heatmap(ax, m, xlabels=keys, ylabels=queries, title=title)
        ax.set_xlabel(tr("key", "键"))
    axes[0, 0].set_ylabel(tr("query", "查询"))
    if suptitle:
        fig.suptitle(suptitle)
    return fig
