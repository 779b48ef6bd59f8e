"""Plot helpers shared by the English and the Chinese notebooks.

The two notebooks of a chapter have identical code cells; only the labels differ, through
``tr(en, zh)``, which picks the language from the folder the notebook runs in.

    from aiayn.plotting import use_course_style, tr, heatmap
    use_course_style()
    fig, ax = plt.subplots()
    heatmap(ax, weights, title=tr("attention weights", "注意力权重"))
"""

from __future__ import annotations

import warnings

import matplotlib as mpl
from matplotlib import font_manager

from .language import current_language, tr  # noqa: F401 (re-exported for the chapters)

LATIN_FONT = "DejaVu Sans"  # ships with matplotlib
CJK_FONT = "WenQuanYi Micro Hei"  # Debian/Ubuntu package fonts-wqy-microhei (tools/setup.sh)


def use_course_style() -> None:
    """Set matplotlib defaults for the course: fonts that cover Chinese, readable sizes."""
    # A list of *named* families gives per-glyph fallback: Latin letters and digits come
    # from DejaVu Sans, Chinese characters from WenQuanYi. A generic "sans-serif" entry
    # would resolve to a single font, and Chinese would render as boxes.
    mpl.rcParams["font.family"] = [LATIN_FONT, CJK_FONT]
    # The CJK font has no U+2212 minus sign; the ASCII hyphen renders in every font.
    mpl.rcParams["axes.unicode_minus"] = False
    mpl.rcParams["figure.figsize"] = (6.4, 4.0)
    mpl.rcParams["figure.dpi"] = 110
    mpl.rcParams["savefig.dpi"] = 150
    mpl.rcParams["font.size"] = 11
    try:
        font_manager.findfont(CJK_FONT, fallback_to_default=False)
    except ValueError:
        warnings.warn(
            f"font {CJK_FONT!r} not found: Chinese labels will render as boxes. "
            "Run `bash tools/setup.sh` (installs fonts-wqy-microhei, clears matplotlib's font cache).",
            stacklevel=2,
        )


def heatmap(ax, matrix, xlabels=None, ylabels=None, title=None):
    """Draw a 2-D array (e.g. one head's attention weights, queries x keys) with a colorbar.

    Rows go down the y axis, columns along the x axis; ``xlabels``/``ylabels`` label the
    ticks (e.g. key and query tokens). Returns the image.
    """
    image = ax.imshow(matrix, cmap="viridis", aspect="auto")
    ax.figure.colorbar(image, ax=ax)
    if xlabels is not None:
        ax.set_xticks(range(len(xlabels)), labels=xlabels, rotation=90)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), labels=ylabels)
    if title is not None:
        ax.set_title(title)
    return image
