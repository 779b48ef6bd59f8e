"""The language of the page a piece of code runs for: English, or Chinese in a Chinese notebook.

Jupyter kernels (and nbval) start in the notebook's folder, so code run from chapters/zh/ gets
Chinese labels, hints and clauses without any difference in the code cells, which are identical
in both languages. $AIAYN_LANG overrides the folder (Colab, scripts). Importing this module
imports nothing heavy: the grader uses it too, without matplotlib.
"""

from __future__ import annotations

import os
from pathlib import Path


def current_language() -> str:
    """'zh' or 'en': $AIAYN_LANG if set, else 'zh' when running from a folder named zh."""
    lang = os.environ.get("AIAYN_LANG", "").strip().lower()
    if lang:
        if lang not in ("en", "zh"):
            raise ValueError(f"AIAYN_LANG must be 'en' or 'zh', not {lang!r}")
        return lang
    return "zh" if Path.cwd().name == "zh" else "en"


def tr(en: str, zh: str) -> str:
    """The text in the current language."""
    return zh if current_language() == "zh" else en
