"""What the reader's code did while a check ran it, for promises about how, not what:
"no loop over heads", "a loop over t", "computes the attention itself", "does not build the
model". Both watch the interpreter (``sys.setprofile``, ``sys.settrace``), so they see a call
whatever name the reader's file gave the function, and both stop before the check compares.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

from .language import tr

_COURSE = str(Path(__file__).resolve().parents[1]) + "/"  # code/aiayn/
_GRADER = str(Path(__file__).resolve().parent) + "/"  # code/aiayn/grading/
_LIBRARIES = tuple(sorted({str(Path(p).resolve()) + "/" for p in (
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
    sysconfig.get_paths()["platlib"])}))


def calls_made(fn, *args, watch=None, **kwargs):
    """(what ``fn(*args, **kwargs)`` returned, the course functions it called as
    "aiayn/<file>: <name>", the built-in functions it called). The grader's own code is left
    out: only what the reader's code reached. ``watch``: {library function: name}, whose
    calls count as course calls under that name (``nn.Module.__init__``: a module built)."""
    course, builtins = [], []
    watched = {f.__code__: name for f, name in (watch or {}).items()}

    def profile(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(_COURSE) and not name.startswith(_GRADER):
                course.append(f"aiayn/{name[len(_COURSE):]}: {frame.f_code.co_qualname}")
            elif frame.f_code in watched:
                course.append(watched[frame.f_code])
        elif event == "c_call":
            builtins.append(arg)

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.setprofile(before)
    return result, course, builtins


def lines_run(fn, *args, **kwargs) -> int:
    """How many lines of the reader's code (any Python file outside the installed libraries
    and the course's package) ``fn(*args, **kwargs)`` ran: a loop runs its body's lines once
    per turn, vectorised code the same number whatever the sizes."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def trace(frame, event, arg):
        name = frame.f_code.co_filename
        if name.startswith(_COURSE) or name.startswith(_LIBRARIES) or name.startswith("<"):
            return None  # not the reader's: no line events from this frame
        return local

    before = sys.gettrace()
    sys.settrace(trace)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(before)
    return count


def modules_of_type(module, types: tuple) -> list[str]:
    """Names of ``module`` and its sub-modules that are instances of ``types`` (nn classes)."""
    def kind(m):  # as the reader writes it: nn.LayerNorm, or a subclass of it
        library = next(t for t in types if isinstance(m, t))
        if type(m) is library:
            return f"nn.{library.__name__}"
        return tr(f"{type(m).__name__}, a subclass of nn.{library.__name__}",
                  f"{type(m).__name__}，nn.{library.__name__} 的子类")
    return [tr(f"{name or 'the module itself'} ({kind(m)})", f"{name or '模块本身'}（{kind(m)}）")
            for name, m in module.named_modules() if isinstance(m, types)]
