"""Plot helpers shared by the English and the Chinese notebooks.

The two notebooks of a chapter have identical code cells; only the labels differ, through
``tr(en, zh)``, which picks the language from the folder the notebook runs in.

    from aiayn.plotting import use_course_style, tr, heatmap
    use_course_style()
    fig, ax = plt.subplots()
    heatmap(ax, weights, title=tr("attention weights", "注意力权重"))
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager

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


def current_language() -> str:
    """'zh' or 'en': $AIAYN_LANG if set, else 'zh' when running from a folder named zh.

    Jupyter kernels (and nbval) start in the notebook's folder, so notebooks under
    chapters/zh/ get Chinese labels without any code difference.
    """
    lang = os.environ.get("AIAYN_LANG", "").strip().lower()
    if lang:
        if lang not in ("en", "zh"):
            raise ValueError(f"AIAYN_LANG must be 'en' or 'zh', not {lang!r}")
        return lang
    return "zh" if Path.cwd().name == "zh" else "en"


def tr(en: str, zh: str) -> str:
    """The label in the notebook's language."""
    return zh if current_language() == "zh" else en


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
