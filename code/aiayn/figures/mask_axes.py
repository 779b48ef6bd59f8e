"""A padding mask on the right axis and on the wrong one (the common-mistakes chapter), drawn.

A padding mask is built from the token ids of a sentence, one entry per position, and then
broadcast over the attention scores ``(T_q, T_k)``. Shaped ``(B, 1, 1, T)`` it stretches along
the queries and hides the padded *keys* (columns); shaped ``(B, 1, T, 1)`` it stretches along the
keys and hides the padded *queries* (rows), leaving every real query free to read the padding.
``broadcast_masks`` computes both grids; ``draw_mask_axes`` draws them side by side.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from ..plotting import tr

VISIBLE, HIDDEN = "#8fb8de", "#e0e0e0"


def broadcast_masks(tokens, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(keys hidden, queries hidden): the ``(T, T)`` grids that a ``(1, 1, T)`` and a ``(1, T, 1)``
    padding mask of ``tokens`` (one sentence, ``(T,)``) broadcast to; True = may attend."""
    real = np.asarray(tokens) != pad_id
    if real.ndim != 1 or real.size == 0:
        raise ValueError(f"tokens must be one sentence of ids, shape (T,), got {np.shape(tokens)}")
    T = real.size
    on_keys = np.broadcast_to(real[None, :], (T, T))
    on_queries = np.broadcast_to(real[:, None], (T, T))
    return on_keys.copy(), on_queries.copy()


def draw_mask_axes(tokens=(5, 7, 9, 0, 0, 0), pad_id: int = 0, words=None):
    """Two panels, the right mask and the wrong one; ``words`` label the positions (default:
    the ids, with ``<pad>`` where the id is ``pad_id``). Returns the figure."""
    on_keys, on_queries = broadcast_masks(tokens, pad_id)
    labels = list(words) if words is not None else [
        "<pad>" if t == pad_id else str(t) for t in tokens]
    if len(labels) != len(tokens):
        raise ValueError(f"words must label every position: {len(labels)} words, {len(tokens)} tokens")
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 4.2))
    panels = ((on_keys, tr("(B, 1, 1, T): padded keys hidden", "(B, 1, 1, T)：屏蔽填充的键"),
               tr("right: every query reads real keys only", "正确：每个查询只读真实的键")),
              (on_queries, tr("(B, 1, T, 1): padded queries hidden", "(B, 1, T, 1)：屏蔽填充的查询"),
               tr("wrong: real queries read the padding", "错误：真实的查询读到了填充")))
    cmap = ListedColormap([HIDDEN, VISIBLE])
    for ax, (grid, title, verdict) in zip(axes, panels):
        ax.imshow(grid.astype(int), cmap=cmap, vmin=0, vmax=1)
        T = grid.shape[0]
        ax.set_xticks(range(T), labels, fontsize=8, rotation=45)
        ax.set_yticks(range(T), labels, fontsize=8)
        ax.set_xticks(np.arange(-0.5, T), minor=True)
        ax.set_yticks(np.arange(-0.5, T), minor=True)
        ax.grid(which="minor", color="white", lw=1.5)
        ax.tick_params(which="minor", length=0)
        ax.set_xlabel(tr("key", "键"))
        ax.set_ylabel(tr("query", "查询"))
        ax.set_title(f"{title}\n{verdict}", fontsize=10)
    fig.legend(handles=[Patch(facecolor=VISIBLE, label=tr("may attend", "可以关注")),
                        Patch(facecolor=HIDDEN, label=tr("hidden", "被屏蔽"))],
               loc="upper center", ncol=2, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig
