"""The grader's language: English, or Chinese in a Chinese notebook (``aiayn.language``'s rule,
which imports no matplotlib: ``AIAYN_LANG``, else a working folder named ``zh``).

Everything a report shows comes in both languages: a check's name (``Exercise.check(name,
zh=...)``), an exercise's title (``exercise(..., zh=...)``), every hint, every "expected"/"got"
text the comparisons build, and the report's frame (PASS, expected:, hint:, seed, result, the
time-limit and tamper messages). Texts built when a check fails call ``tr(en, zh)`` there; texts
kept in a module's constants are ``Text(en, zh)``, which picks its language when it is shown
(``str()``, an f-string, ``+``), so a process that changes ``AIAYN_LANG`` after importing the
graders still gets its language. ``tests/test_exercises.py`` holds every check and hint to both.

What stays English in a Chinese report: code (identifiers, formulas, commands, file paths), the
messages of the reader's own exceptions, and the promises quoted from the stubs' docstrings,
which are the stubs' English code documentation: a Chinese label, then each promise on its own
wholly English line, so the reader finds the sentence in the file they edit.
"""

from __future__ import annotations

import re

from ..language import current_language, tr  # noqa: F401 (the graders import them from here)

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_LATIN = "A-Za-z0-9`"
_GAP = re.compile(f"(?<=[{_HAN}])(?=[{_LATIN}])|(?<=[{_LATIN}])(?=[{_HAN}])")


class Text:
    """A text in English and in Chinese, shown in the language current when it is shown."""

    __slots__ = ("en", "zh")

    def __init__(self, en: str, zh: str):
        if not isinstance(en, str) or not isinstance(zh, str):
            raise ValueError(f"en and zh: two strings, got {type(en).__name__} and "
                             f"{type(zh).__name__}")
        self.en, self.zh = en, zh

    def __str__(self) -> str:
        return tr(self.en, self.zh)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __add__(self, other: Text) -> Text:
        if not isinstance(other, Text):
            return NotImplemented  # a bare string would leak one language into the other
        return Text(self.en + other.en, self.zh + other.zh)

    def __eq__(self, other) -> bool:
        return isinstance(other, Text) and (self.en, self.zh) == (other.en, other.zh)

    def __hash__(self) -> int:
        return hash((self.en, self.zh))

    def __repr__(self) -> str:
        return f"Text({self.en!r}, {self.zh!r})"


def text(value) -> str:
    """``value`` as the text to show: a ``Text`` in the current language, a string as it is."""
    return str(value) if isinstance(value, Text) else value


def spaced(line: str) -> str:
    """A Chinese line with a space between a Chinese character and a Latin letter, a digit or a
    backtick next to it, as the book writes them (``weights 全是有限值``, ``第 3 行``): texts
    joined from parts (a name and a phrase) get the space whatever the part."""
    return _GAP.sub(" ", line)
