"""Exercises, their checks, and the registry that maps an exercise id to its grader.

An exercise is a file the reader edits (``exercises/<chapter>/<file>.py``) plus a list of
named checks. A check is a function ``check(module, rng)``: ``module`` is the reader's file,
imported; ``rng`` a NumPy generator seeded for this run, so inputs are fresh every run and
reproducible from the printed seed. A check passes by returning and fails by raising
``CheckFailed`` with what was expected, what was got, and a hint that teaches. Every text a
reader sees has an English and a Chinese form (language.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .language import Text, current_language, text, tr

CheckFn = Callable[[object, object], None]


def label(en: str, zh: str) -> str:
    """A report's label in the current language, padded to the 10 columns its text starts at
    ("expected: ", "期望：    "; a Chinese character is two columns wide)."""
    return tr(f"{en:<10}", zh + " " * (10 - 2 * len(zh)))


class CheckFailed(Exception):
    """A check's verdict: ``expected`` vs ``got`` (short text) and a ``hint`` for the reader;
    each a string (built with ``tr``) or a ``Text``, fixed in the current language here."""

    def __init__(self, expected: str | Text, got: str | Text, hint: str | Text):
        expected, got, hint = text(expected), text(got), text(hint)
        super().__init__(f"expected {expected}; got {got}; hint: {hint}")
        self.expected, self.got, self.hint = expected, got, hint

    def report(self) -> str:
        """The lines of the report under a failed check."""
        return (f"{label('expected:', '期望：')}{self.expected}\n{label('got:', '实际：')}{self.got}\n"
                f"{label('hint:', '提示：')}{self.hint}")


@dataclass
class Check:
    name: str  # English: the check's id in promise tables and wrong solutions' "caught by"
    run: CheckFn
    name_zh: str | None = None  # shown instead of ``name`` in Chinese (language.py)

    def title(self, lang: str | None = None) -> str:
        """The name in ``lang`` (default: the current language)."""
        lang = current_language() if lang is None else lang
        return self.name_zh if lang == "zh" and self.name_zh else self.name


@dataclass
class Exercise:
    """``id`` is ``<chapter>/<name>``; ``file`` the path of the reader's file relative to
    ``exercises/`` (the reference solution has the same path under ``exercises/solutions/``).
    Several exercises may share one file (the from-scratch chapter grades one file in stages)."""

    id: str
    file: str
    title: str
    checks: list[Check] = field(default_factory=list)
    # "<function or class>: <key>" of a promise in the stub's docstring -> the checks keeping it
    promises: dict[str, tuple[str, ...]] = field(default_factory=dict)
    title_zh: str | None = None  # the title in Chinese

    @property
    def chapter(self) -> str:
        return self.id.split("/", 1)[0]

    def shown_title(self, lang: str | None = None) -> str:
        """The title in ``lang`` (default: the current language)."""
        lang = current_language() if lang is None else lang
        return self.title_zh if lang == "zh" and self.title_zh else self.title

    def check(self, name: str, zh: str | None = None) -> Callable[[CheckFn], CheckFn]:
        """Decorator: appends a named check; checks run in the order they are defined. ``zh``:
        the name in Chinese, for reports in a Chinese notebook (every grader of the course
        gives one: tests/test_exercises.py)."""
        def register(fn: CheckFn) -> CheckFn:
            if any(c.name == name for c in self.checks):
                raise ValueError(f"{self.id} already has a check named {name!r}")
            self.checks.append(Check(name, fn, zh))
            return fn
        return register

    def keeps(self, table: dict) -> None:
        """The promise table: ``{"<function>: <key>": check name or tuple of names}``, one row
        per promise of the stub's docstrings that this exercise's checks keep (promises.py)."""
        for promise, names in table.items():
            if promise in self.promises:
                raise ValueError(f"{self.id}: promise {promise!r} has two rows")
            self.promises[promise] = (names,) if isinstance(names, str) else tuple(names)


REGISTRY: dict[str, Exercise] = {}


def exercise(id: str, file: str, title: str, zh: str | None = None) -> Exercise:
    """Creates and registers an exercise; graders call this at import time. ``zh``: the title
    in Chinese."""
    chapter, _, name = id.partition("/")
    if not chapter or not name or "/" in name:
        raise ValueError(f"exercise id must be '<chapter>/<name>', got {id!r}")
    if not file.startswith(chapter + "/") or not file.endswith(".py"):
        raise ValueError(f"{id}: file must be '{chapter}/<name>.py', got {file!r}")
    if id in REGISTRY:
        raise ValueError(f"exercise {id!r} is registered twice")
    REGISTRY[id] = Exercise(id, file, title, title_zh=zh)
    return REGISTRY[id]


def need(module, name: str):
    """The reader's ``name`` from ``module``, or a failure that says it is missing."""
    if not hasattr(module, name):
        raise CheckFailed(
            tr(f"your file to define `{name}`", f"你的文件定义了 `{name}`"),
            tr("no such name", "没有这个名字"),
            tr(f"keep the names of the stub: the grader calls `{name}` (did you rename it?)",
               f"保留待补全文件里的名字：评分程序调用的是 `{name}`（是不是改了名？）"))
    return getattr(module, name)
