"""The grader's language: English, or Chinese in a Chinese notebook.

The rule is ``aiayn.plotting.current_language``'s ($AIAYN_LANG, else "zh" when the working
directory is a folder named zh, as it is for a kernel of chapters/zh/), restated here because
importing ``aiayn.plotting`` imports matplotlib, which the grader does not otherwise need
(tests/test_exercises.py checks that both rules agree). Check names given in Chinese
(``Exercise.check(name, zh=...)``) and hints written with ``tr(en, zh)`` come out in the
notebook's language; the report's frame (PASS, expected:, hint:, result) and the promises quoted
from the stubs stay English, as code and printed output do in the Chinese chapters.
"""

from __future__ import annotations

import os
from pathlib import Path


def current_language() -> str:
    lang = os.environ.get("AIAYN_LANG", "").strip().lower()
    if lang:
        if lang not in ("en", "zh"):
            raise ValueError(f"AIAYN_LANG must be 'en' or 'zh', not {lang!r}")
        return lang
    return "zh" if Path.cwd().name == "zh" else "en"


def tr(en: str, zh: str) -> str:
    """The text in the current language (a check's hint, evaluated where the check runs)."""
    return zh if current_language() == "zh" else en
