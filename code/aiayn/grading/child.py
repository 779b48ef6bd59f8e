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
from .core import CheckFailed, Exercise, label
from .language import tr

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
        send(("import failed", label("error:", "出错：") + tr("importing the file ", "导入文件时")
              + _raised(e, path)))
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
            more = (tr(f" and {len(replaced) - 3} more", f" 等，另有 {len(replaced) - 3} 个")
                    if len(replaced) > 3 else "")
            names = ", ".join(replaced[:3])
            status, detail = "FAIL", label("error:", "出错：") + tr(
                f"your code replaced {names}{more}, which the grader relies on",
                f"你的代码替换了评分程序依赖的 {names.replace(', ', '、')}{more}") + "\n" + label(
                "hint:", "提示：") + tr(
                "do not assign to attributes of numpy, torch, builtins or aiayn: give your own "
                "functions their own names", "不要给 `numpy`、`torch`、`builtins` 或 `aiayn` 的属性赋值："
                "你自己的函数用你自己的名字")
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
        message = _text_of(e)
        return "TODO", label("todo:", "未写：") + tr(
            f"{_qualname(e)} still raises NotImplementedError"
            + (f" ({message})" if message else ""),
            f"{_qualname(e)} 仍在抛出 NotImplementedError" + (f"（“{message}”）" if message else ""))
    except BaseException as e:  # the reader's code (or what it returned) broke the check
        return "ERROR", (label("error:", "出错：") + tr("your code ", "你的代码") + _raised(e, path)
                         + "\n" + label("hint:", "提示：")
                         + tr("read the message; the checks before this one say which part works",
                              "读一读这条异常信息；这一项之前的检查能告诉你哪些部分已经正确"))
    return "PASS", ""


def _raised(e: BaseException, path: Path) -> str:
    """"raised ValueError: ... at line 3 in f: ..." (or "called sys.exit(0)"), for the report.
    In Chinese the exception's own message (English, or the reader's) and the line of code get
    lines of their own, under the sentence that says where."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename) == path]
    frame = frames[-1] if frames else None
    under = "\n" + " " * 10  # a line of its own, under the label's text
    if isinstance(e, SystemExit):
        what = f"sys.exit({e.code!r})"
        return tr(f"called {what} (raised SystemExit)"
                  + (f" at line {frame.lineno} in {frame.name}: {frame.line}" if frame else "")
                  + "; an exercise must return",
                  (f"在第 {frame.lineno} 行（{frame.name} 中）" if frame else "")
                  + f"调用了 {what}（抛出 SystemExit）；练习必须用 return 返回结果"
                  + (under + frame.line if frame else ""))
    limit = ""
    if isinstance(e, MemoryError) and sandbox.limits_in_force is not None:
        gib = f"{sandbox.limits_in_force.memory_bytes / 2**30:g}"
        limit = tr(f" (the grader allows {gib} GiB beyond its own memory)",
                   f"（评分程序在它自己占用的内存之外只允许再用 {gib} GiB）")
    message = f"{type(e).__name__}: {_text_of(e)}"
    return tr(f"raised {message}"
              + (f" at line {frame.lineno} in {frame.name}: {frame.line}" if frame else "") + limit,
              (f"在第 {frame.lineno} 行（{frame.name} 中）" if frame else "") + "抛出了异常" + limit
              + "：" + under + under.join(message.splitlines() or [""])
              + (under + frame.line if frame else ""))


def _text_of(e: BaseException) -> str:
    try:
        return str(e)
    except BaseException:  # a __str__ that raises is one more way to break a report
        return tr("(its message cannot be printed)", "（它的异常信息无法打印）")


def _qualname(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_qualname


def _seed_libraries(seed: int) -> None:
    if "torch" in sys.modules:  # NumPy-only exercises run without PyTorch
        sys.modules["torch"].manual_seed(seed)
