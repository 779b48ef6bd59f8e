"""Graders for the course's exercises: ``python -m aiayn.grading --help``.

Layout of one exercise (``<chapter>`` is the chapter notebook's file name):

    exercises/<chapter>/<name>.py              the stub the reader edits
    exercises/solutions/<chapter>/<name>.py    the reference solution (shown behind a toggle)
    code/aiayn/grading/graders/<chapter>.py    the grader: ``exercise(...)`` and its checks

Graders compare the reader's code with the course's tested implementations (``aiayn.np``,
``aiayn.pt``) on fresh random inputs; ``tests/test_exercises.py`` proves every grader passes
its reference solution and fails the untouched stub. Every promise a stub's docstring makes
(its Promises section) has a row in its grader's table naming the check that keeps it
(promises.py). The reader's code runs in a child process
(runner.py says what it may try and what then happens): a file that exits, crashes, hangs,
prints a fake report or patches NumPy fails, and only a completed, passing run passes.
"""

from __future__ import annotations

import re
import secrets
import sys
from pathlib import Path

from . import graders  # noqa: F401  (importing registers every exercise)
from .compare import as_numpy, expect_close, expect_equal, expect_finite, expect_shape
from .core import REGISTRY, CheckFailed, Exercise, exercise, need
from .language import Text, tr
from .runner import (TIME_LIMIT_S, Result, exercise_path, exercises_dir, format_result,
                     load_exercise_file, not_run, run_exercise)


def in_book_order() -> list[Exercise]:
    """Every exercise, chapters in the order of the book's table of contents (chapters it does
    not list come last), exercises in the order their grader defines them."""
    toc = exercises_dir().parent / "_toc.yml"
    text = toc.read_text(encoding="utf8") if toc.is_file() else ""
    listed = re.findall(r"chapters/en/(\w+)", text)
    position = {name: i for i, name in enumerate(listed)}
    return sorted(REGISTRY.values(), key=lambda ex: position.get(ex.chapter, len(position)))


def select(target: str) -> list[Exercise]:
    """``<chapter>/<name>`` -> that exercise; ``<chapter>`` -> the chapter's, in order."""
    if target in REGISTRY:
        return [REGISTRY[target]]
    chosen = [ex for ex in REGISTRY.values() if ex.chapter == target.rstrip("/")]
    if not chosen:
        known = ", ".join(sorted({ex.chapter for ex in REGISTRY.values()}))
        raise KeyError(f"no exercise or chapter named {target!r}; chapters: {known} "
                       "(python -m aiayn.grading --list shows every exercise)")
    return chosen


def grade(targets, solutions: bool = False, path=None, seed: int | None = None,
          out=None, time_limit: float | None = None) -> bool:
    """Grades and prints; True when every check of every selected exercise passes.

    ``targets``: an exercise id, a chapter, or a list of them. ``path`` grades that file
    instead of the stub (exercises of one file only: one exercise, or the from-scratch stages).
    One seed serves the whole run; a fixed ``seed``
    gives the same inputs and the same report every time (the notebooks use ``seed=0``).
    ``time_limit``: seconds one check may run (default ``runner.TIME_LIMIT_S``, 30). After a
    check that timed out, the file's remaining checks are not run (SKIP), in this exercise and
    in the later ones of the same file: a hung file costs one time limit, not one per check."""
    out = out or sys.stdout
    targets = [targets] if isinstance(targets, str) else list(targets)
    chosen = list(dict.fromkeys(ex.id for t in targets for ex in select(t)))
    if path is not None and len({REGISTRY[i].file for i in chosen}) != 1:
        raise ValueError(f"path= grades one file, but {targets!r} selects exercises of "
                         f"{len({REGISTRY[i].file for i in chosen})} files")
    seed = secrets.randbelow(1_000_000) if seed is None else seed
    root = exercises_dir().parent
    results = []
    stalled: dict[Path, tuple[str, int]] = {}  # file -> (exercise, check) where it timed out
    for ex in (REGISTRY[i] for i in chosen):
        file = Path(exercise_path(ex, solutions) if path is None else path)
        try:  # paths as typed from the repository root, wherever the caller runs
            shown = file.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:  # a file outside the repository: show it as given
            shown = str(file)
        flags = " --solutions" if solutions else (f" --path {shown}" if path is not None else "")
        if file.resolve() in stalled:  # the from-scratch file: one wait for all its stages
            where, number = stalled[file.resolve()]
            results.append(Result(ex, shown, seed, not_run(
                ex.checks, number, TIME_LIMIT_S if time_limit is None else time_limit,
                tr(f" of {where}", f"{where} 的"))))
        else:
            results.append(run_exercise(ex, file, seed, shown, time_limit))
            hung = [i for i, c in enumerate(results[-1].checks, 1) if c.timed_out]
            if hung:
                stalled[file.resolve()] = (ex.id, hung[0])
        print(format_result(results[-1], flags), end="\n\n", file=out)
    if len(results) > 1:
        passed = sum(r.passed for r in results)
        print(tr(f"{passed} of {len(results)} exercises passed",
                 f"共 {len(results)} 个练习，通过 {passed} 个"), file=out)
    return all(r.passed for r in results)


__all__ = ["REGISTRY", "CheckFailed", "Exercise", "Result", "Text", "as_numpy", "exercise",
           "exercise_path", "exercises_dir", "expect_close", "expect_equal", "expect_finite",
           "expect_shape", "format_result", "grade", "in_book_order", "load_exercise_file",
           "need", "run_exercise", "select"]
