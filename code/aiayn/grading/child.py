"""What runs in the grading child (see runner.py): import the reader's file, run the checks in
order, and send each verdict with the evidence of its comparisons and what it printed."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

from . import evidence, sandbox, tamper
from .core import CheckFailed, Exercise

OUTPUT_KEPT = 4096  # bytes of a check's printed output sent back (the report shows 20 lines)
_module_ids = itertools.count()


def load_file(path: Path):
    """Imports a Python file as a fresh module (a new name each time: no stale caching)."""
    name = f"_aiayn_exercise_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes and dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def grade_in_child(exercise: Exercise, path: Path, seed: int, start: int, watched: list,
                   send) -> None:
    """``watched``: ``tamper.current()`` of the parent, taken before the fork."""
    loaded = set(sys.modules)
    try:
        module = load_file(path)
    except BaseException as e:  # a syntax error, a failed import, sys.exit at the top
        send(("import failed", f"error:    importing the file {_raised(e, path)}"))
        return
    send(("imported",))
    for number in range(start, len(exercise.checks)):
        check = exercise.checks[number]
        _seed_libraries(seed * 1000 + number)
        rng = np.random.default_rng([seed, number])
        kept = evidence.start_recording()
        status, detail = _run_check(check, module, rng, path)
        evidence.stop_recording()
        # Reading every watched object copies its memory page into this process: only a pass
        # needs the check (a failure stands whatever the file replaced).
        replaced = tamper.replaced(watched) if status == "PASS" else []
        if replaced:
            more = f" and {len(replaced) - 3} more" if len(replaced) > 3 else ""
            status, detail = "FAIL", (
                f"error:    your code replaced {', '.join(replaced[:3])}{more}, which the grader "
                "relies on\nhint:     do not assign to attributes of numpy, torch, builtins or "
                "aiayn: give your own functions their own names")
        plain = evidence.to_plain(kept) if status == "PASS" else []
        output, size = sandbox.take_output(OUTPUT_KEPT)
        send(("check", number, status, detail, plain, output, size))
    # Modules the checks imported on first use (PyTorch's meta device imports some 800): the
    # parent imports those of libraries it already uses, so the next child starts with them.
    send(("imported later", sorted(set(sys.modules) - loaded)))


def _run_check(check, module, rng, path: Path) -> tuple[str, str]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # a NaN is reported by the check, not as a warning
            check.run(module, rng)
    except CheckFailed as e:
        return "FAIL", e.report()
    except NotImplementedError as e:
        what = f"todo:     {_qualname(e)} still raises NotImplementedError"
        return "TODO", what + (f" ({_text_of(e)})" if _text_of(e) else "")
    except BaseException as e:  # the reader's code (or what it returned) broke the check
        return "ERROR", (f"error:    your code {_raised(e, path)}\nhint:     read the message; the "
                         "checks before this one say which part works")
    return "PASS", ""


def _raised(e: BaseException, path: Path) -> str:
    """"raised ValueError: ... at line 3 in f: ..." (or "called sys.exit(0)"), for the report."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename) == path]
    where = f" at line {frames[-1].lineno} in {frames[-1].name}: {frames[-1].line}" if frames else ""
    if isinstance(e, SystemExit):
        return f"called sys.exit({e.code!r}) (raised SystemExit){where}; an exercise must return"
    if isinstance(e, MemoryError) and sandbox.limits_in_force is not None:
        where += (f" (the grader allows {sandbox.limits_in_force.memory_bytes / 2**30:g} GiB "
                  "beyond its own memory)")
    return f"raised {type(e).__name__}: {_text_of(e)}{where}"


def _text_of(e: BaseException) -> str:
    try:
        return str(e)
    except BaseException:  # a __str__ that raises is one more way to break a report
        return "(its message cannot be printed)"


def _qualname(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_qualname


def _seed_libraries(seed: int) -> None:
    if "torch" in sys.modules:  # NumPy-only exercises run without PyTorch
        sys.modules["torch"].manual_seed(seed)
