"""Attention weights as a row of heatmaps, one panel per head (the training chapter's pictures of
what a trained model attends to).

    from aiayn.figures.attention_panels import attention_panels
    attention_panels([(weights_of_head_0, "head 0"), ...], row_labels, column_labels, "title")

Each panel is a (rows x columns) matrix of weights in [0, 1] on one colour scale, so panels can be
compared; rows are queries (what is predicted or encoded), columns the keys they read. At most
five panels a row. Labels are passed in already translated (``aiayn.plotting.tr``).
"""

import math

import matplotlib.pyplot as plt


def attention_panels(panels, rows, columns, title):
    """Draws and shows ``panels``, a list of (weights (len(rows), len(columns)), panel title).
    Returns nothing, so that a notebook cell ending with this call shows the figure once."""
    ncols = min(len(panels), 5)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.7 * ncols, 3.1 * nrows), layout="constrained", squeeze=False)
    for ax, (w, name) in zip(axes.flat, panels):
        ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(columns)), labels=columns, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), labels=rows, fontsize=7)
        ax.set_title(name, fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title)
    plt.show()


__all__ = ["attention_panels"]
