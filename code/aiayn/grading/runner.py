"""Finding the reader's files, importing them, running the checks, and reporting.

Each check gets its own generator, seeded from (run seed, check number), and PyTorch is
seeded the same way: one printed seed reproduces the whole run, and a failing check sees the
same inputs whether it runs alone or after the others.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import secrets
import sys
import textwrap
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .core import CheckFailed, Exercise

_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # code/aiayn/grading -> repository root
_module_ids = itertools.count()


def exercises_dir() -> Path:
    """``exercises/`` of the checkout: under the working directory if there is one, else next
    to this package (an editable install), so notebooks can grade from their own folder."""
    for base in (Path.cwd(), _PACKAGE_ROOT):
        if (base / "exercises").is_dir():
            return base / "exercises"
    raise FileNotFoundError("no exercises/ folder: run from the root of the course repository")


def exercise_path(exercise: Exercise, solutions: bool = False) -> Path:
    """The reader's file, or with ``solutions`` the reference solution."""
    base = exercises_dir()
    return (base / "solutions" if solutions else base) / exercise.file


def load_file(path: Path):
    """Imports a Python file as a fresh module (a new name each time: no stale caching)."""
    name = f"_aiayn_exercise_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes and dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def load_exercise_file(file: str, solutions: bool = False):
    """``load_exercise_file("from_scratch/transformer.py", solutions=True)``: the module."""
    base = exercises_dir()
    return load_file((base / "solutions" if solutions else base) / file)


@dataclass
class CheckResult:
    name: str
    status: str  # "PASS", "FAIL", "TODO" (NotImplementedError) or "ERROR" (the code raised)
    detail: str = ""


@dataclass
class Result:
    exercise: Exercise
    shown_path: str
    seed: int
    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.status == "PASS" for c in self.checks)


def _reader_frame(exc: BaseException, path: Path):
    """The innermost traceback frame in the reader's file, if any."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return frames[-1] if frames else None


def _qualname(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_qualname


def _run_check(check, module, rng, path: Path) -> CheckResult:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # a NaN is reported by the check, not as a warning
            check.run(module, rng)
    except CheckFailed as e:
        detail = (f"expected: {e.expected}\ngot:      {e.got}\nhint:     {e.hint}")
        return CheckResult(check.name, "FAIL", detail)
    except NotImplementedError as e:
        what = f"todo:     {_qualname(e)} still raises NotImplementedError"
        return CheckResult(check.name, "TODO", what + (f" ({e})" if str(e) else ""))
    except Exception as e:  # the reader's code (or what it returned) broke the check
        frame = _reader_frame(e, path)
        where = f" at line {frame.lineno} in {frame.name}: {frame.line}" if frame else ""
        detail = (f"error:    your code raised {type(e).__name__}: {e}{where}\n"
                  "hint:     read the message; the checks before this one say which part works")
        return CheckResult(check.name, "ERROR", detail)
    return CheckResult(check.name, "PASS")


@contextlib.contextmanager
def _one_thread():
    """Graders use tensors of a few hundred numbers: one thread is faster than several, whose
    hand-offs cost more than the work (and much more on a busy machine). Restored afterwards."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _seed_libraries(seed: int) -> None:
    try:
        import torch
    except ImportError:  # NumPy-only exercises run without PyTorch
        return
    torch.manual_seed(seed)


def run_exercise(exercise: Exercise, path: Path, seed: int | None = None,
                 shown_path: str | None = None) -> Result:
    """Grades the file at ``path`` against ``exercise``; ``seed=None`` draws a fresh seed."""
    seed = secrets.randbelow(1_000_000) if seed is None else seed
    path = Path(path).resolve()
    shown = shown_path or str(path)
    try:
        module = load_file(path)
    except Exception as e:  # a syntax error, or an import at the top of the file failed
        detail = f"error:    importing the file raised {type(e).__name__}: {e}"
        return Result(exercise, shown, seed, [CheckResult("the file imports", "ERROR", detail)])
    results = []
    with _one_thread():
        for number, check in enumerate(exercise.checks):
            _seed_libraries(seed * 1000 + number)
            rng = np.random.default_rng([seed, number])
            results.append(_run_check(check, module, rng, path))
    return Result(exercise, shown, seed, results)


def format_result(result: Result, flags: str = "") -> str:
    """The report a reader sees; ``flags`` are repeated in the rerun command (--solutions ...)."""
    ex = result.exercise
    lines = [f"exercise {ex.id}: {ex.title}", f"file     {result.shown_path}",
             f"seed     {result.seed}"]
    said = set()
    for check in result.checks:
        lines.append(f"  {check.status:<5} {check.name}")
        if check.detail in said:  # the same "not written yet" under every check: say it once
            continue
        said.add(check.detail)
        for line in check.detail.splitlines():
            lines += textwrap.wrap(line, width=96, initial_indent=" " * 8,
                                   subsequent_indent=" " * 18)
    passed = sum(c.status == "PASS" for c in result.checks)
    verdict = "passed" if result.passed else "not yet"
    lines.append(f"result   {passed}/{len(result.checks)} checks passed: {verdict}")
    if not result.passed:
        lines.append(f"rerun    python -m aiayn.grading {ex.id}{flags} --seed {result.seed}")
    return "\n".join(lines)
