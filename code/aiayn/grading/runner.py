"""Finding the reader's files, grading them in a child process, and reporting.

Each check gets its own generator, seeded from (run seed, check number), and PyTorch is
seeded the same way: one printed seed reproduces the whole run, and a failing check sees the
same inputs whether it runs alone or after the others.

How a file is graded. This process never imports the reader's file. A child forked from it
(``sandbox.Child``) imports the file, runs the checks in order and sends each verdict back as
plain data; this process decides, and writes the report. Only a run in which every check
came back PASS, and survived the parent's re-check, passes.

Threat model: the reader's code is careless or hostile, but not written against this grader's
own source. What it may do, and what the reader is told:

- ``sys.exit(0)``, ``raise SystemExit`` / ``KeyboardInterrupt`` / any ``BaseException``, at
  import or inside a check: caught in the child; ERROR naming it (sys.exit(0) is not a pass).
- ``os._exit``, a signal, a crash, a C-stack overflow from deep recursion (plain deep recursion
  is a RecursionError): the child dies; ERROR with its exit status or signal; the remaining
  checks run in a fresh child.
- Hang (endless loop, ``time.sleep``, ``input()``): stopped after the time limit (30 s per check,
  ``time_limit=`` / ``--time-limit``) with everything in its process group; ERROR, and the
  file's remaining checks are not run (SKIP): the same code would hang again, and one wait is
  enough to know. stdin is /dev/null, so ``input()`` fails at once.
- Memory: the child's address space is limited to what the parent had mapped plus 4 GiB, so a
  huge allocation is a MemoryError (ERROR), not a machine that swaps or an OOM kill elsewhere.
- Output: the child's stdout and stderr go to an in-memory file; what a check printed is shown
  under it as ``| `` lines, control characters escaped, 20 lines at most, so text that looks
  like a report ("PASS", "result 9/9 checks passed") cannot pass for one. Past 16 MiB a write
  fails (OSError: File too large): an endless print loop ends as an ERROR. The child's other
  inherited file descriptors (the terminal behind this process's stdout, a notebook's sockets)
  are closed. The verdicts, the report and the exit status come from this process only.
- Values that lie (an ndarray subclass, an object whose ``__eq__`` or ``__array__`` says "equal",
  an object array, a generator, NaN, a tensor that requires grad): comparisons run on plain
  arrays of numbers (``compare.as_numpy``), so none of the reader's methods decide a comparison;
  NaN equals nothing.
- Replacing what the grader relies on (``np.allclose = ...``, ``torch.Tensor.allclose``, a
  course function, a grader function, a ``__code__``): ``tamper.py`` fails a check that passed
  if a watched function is no longer the same; and every ``expect_*`` comparison that passed
  in the child is done again here on its plain arrays (``evidence.py``; messages are unpickled
  with no class allowed, arrays rebuilt only from numbers).
- Killing the parent (``os.kill(os.getppid(), ...)``): possible (same user), but a killed grader
  exits with the signal's status, never 0; the child dies with it (PR_SET_PDEATHSIG).

Not defended: code written against this grader can forge its child's messages (it runs in
that process) and could as well import the course's implementation; the grader is a teaching
aid, not an exam proctor. The child has the reader's permissions: it can write files, write to
the terminal through /dev/tty, stop the parent (SIGSTOP), or start processes that leave its
process group. A library function the watch does not list (a NumPy internal other than those
``np.allclose`` calls, a method of ``nn.Linear``) can be replaced unnoticed where a grader
compares without ``expect_*``. And fork copies only the calling thread: a lock that another
thread of this process held at that moment (in a notebook, say) stays locked in the child, and
a check that needs it times out; a timed-out check, never a hung grader.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import secrets
import sys
import warnings
from pathlib import Path

from . import evidence, promises, sandbox, tamper
from .child import OUTPUT_KEPT, grade_in_child, load_file
from .core import CheckFailed, Exercise, label
from .language import current_language, tr
from .report import CheckResult, Result, clean, format_result, printed_lines  # noqa: F401

TIME_LIMIT_S = 30.0  # per check: generous for the graders' small inputs on a busy machine
MEMORY_LIMIT_BYTES = 4 << 30  # address space the child may add to what it inherits
STATUSES = ("PASS", "FAIL", "TODO", "ERROR")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # code/aiayn/grading -> repository root


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


def load_exercise_file(file: str, solutions: bool = False):
    """``load_exercise_file("from_scratch/transformer.py", solutions=True)``: the module."""
    base = exercises_dir()
    return load_file((base / "solutions" if solutions else base) / file)


def run_exercise(exercise: Exercise, path: Path, seed: int | None = None,
                 shown_path: str | None = None, time_limit: float | None = None) -> Result:
    """Grades the file at ``path`` against ``exercise``; ``seed=None`` draws a fresh seed.
    ``time_limit``: seconds a check may run (default ``TIME_LIMIT_S``)."""
    seed = secrets.randbelow(1_000_000) if seed is None else seed
    path = Path(path).resolve()
    shown = shown_path or str(path)
    limits = sandbox.Limits(TIME_LIMIT_S if time_limit is None else time_limit, MEMORY_LIMIT_BYTES)
    checks: list[CheckResult] = []
    _import_what_children_imported()
    with _one_thread():
        while len(checks) < len(exercise.checks):  # a dead child is replaced, from the next check
            results, imported = _grade_in_a_child(exercise, path, seed, len(checks), limits)
            if not imported and not checks:  # one line, "the file imports", instead of checks
                return Result(exercise, shown, seed, results)
            checks += results
            if checks[-1].timed_out:  # a code that hung once would hang again: one wait only
                checks += not_run(exercise.checks[len(checks):], len(checks), limits.time_s)
    return Result(exercise, shown, seed, _titled(exercise, checks))


def _titled(exercise: Exercise, checks: list[CheckResult]) -> list[CheckResult]:
    """Each check's name in the report's language, and under a failure the stub's promises
    that the check keeps (quoted from the docstring, so the reader finds the sentence)."""
    lang = current_language()
    try:
        stub = exercises_dir() / exercise.file
    except FileNotFoundError:  # no checkout around: no docstring to quote
        stub = None
    for check, result in zip(exercise.checks, checks):
        result.title = check.title(lang)
        if result.status == "FAIL":
            result.detail = "\n".join([result.detail, *promises.kept_by(
                exercise, check.name, stub)]).strip("\n")
    return checks


def not_run(rest, stalled_at: int, time_s: float, where: str = "") -> list[CheckResult]:
    """SKIP results for the checks ``rest``, after check number ``stalled_at`` (1-based) timed
    out; ``where`` names another exercise of the same file when that is where it happened."""
    detail = tr(f"not run: your code did not finish check {stalled_at}{where} within {time_s:g} s; "
                "fix that first, then grade again",
                f"没有运行：{where}第 {stalled_at} 项检查在 {time_s:g} 秒内没有结束；先解决这个问题，"
                "再重新评分")
    lang = current_language()
    return [CheckResult(c.name, "SKIP", detail, title=c.title(lang)) for c in rest]


def _grade_in_a_child(exercise: Exercise, path: Path, seed: int, start: int,
                      limits: sandbox.Limits) -> tuple[list[CheckResult], bool]:
    """(results of checks ``start``, ``start + 1``, ... until the child ended or finished,
    whether the file imported)."""
    checks = []
    with sandbox.Child(functools.partial(grade_in_child, exercise, path, seed, start,
                                         tamper.current()), limits) as child:
        imported = child.receive()
        if imported != ("imported",):
            failure = _import_failure(imported, child)
            if start == 0:
                return [failure], False
            return [CheckResult(c.name, "ERROR", failure.detail)
                    for c in exercise.checks[start:]], False
        for number in range(start, len(exercise.checks)):
            verdict, alive = _verdict(exercise, number, child.receive(), child)
            checks.append(verdict)
            if not alive:
                return checks, True
        _remember_imports(child.receive())
    return checks, True


@contextlib.contextmanager
def _one_thread():
    """Graders use tensors of a few hundred numbers: one thread is faster than several, whose
    hand-offs cost more than the work (and much more on a busy machine). Set here, before the
    fork, and not in the child: another of this process's threads may hold PyTorch's
    thread-pool lock at the fork, and the child's copy of that lock would never be released."""
    torch = sys.modules.get("torch")
    if torch is None:  # NumPy-only exercises run without PyTorch
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_imported_by_children: set[str] = set()  # imported in this process before the next fork


def _remember_imports(message) -> None:
    if (isinstance(message, tuple) and len(message) == 2 and message[0] == "imported later"
            and isinstance(message[1], list)):
        _imported_by_children.update(n for n in message[1][:5000] if isinstance(n, str))


def _import_what_children_imported() -> None:
    """Imports here the submodules earlier children's checks imported on first use, so that
    the next child inherits them instead of importing them again (seconds, for torch._dynamo).
    Done before the next fork, not after a run, so that a one-exercise run never pays. Only
    submodules of packages this process already imported, never a ``__main__``: importing a
    library's module runs that library's code, not the reader's."""
    if not _imported_by_children:
        return
    packages = {name for name in sys.modules if "." not in name}
    names = sorted(_imported_by_children)
    _imported_by_children.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of modules nobody asked for
        for name in names:
            if (name not in sys.modules and _MODULE.fullmatch(name)
                    and name.split(".")[0] in packages and "__main__" not in name.split(".")):
                try:
                    importlib.import_module(name)
                except Exception:  # it imports in the child only (or not at all): no matter
                    pass


# In the parent: turning what the child sent (or how it ended) into a verdict ----------------
def _verdict(exercise: Exercise, number: int, message, child) -> tuple[CheckResult, bool]:
    """(the check's result, whether the child can go on with the next check)."""
    name = exercise.checks[number].name
    if isinstance(message, sandbox.Ended):
        printed = printed_lines(*child.output(OUTPUT_KEPT))
        if message.timed_out:
            return CheckResult(name, "ERROR", _timed_out_detail(
                number, len(exercise.checks), child.limits.time_s), printed, True), False
        return CheckResult(name, "ERROR", _ended_detail(message), printed), False
    if not (isinstance(message, tuple) and len(message) == 7 and message[:2] == ("check", number)
            and message[2] in STATUSES and isinstance(message[3], str)
            and isinstance(message[4], list) and isinstance(message[5], bytes)
            and type(message[6]) is int):
        child.stop()
        return CheckResult(name, "ERROR", _ended_detail(sandbox.Ended(
            tr("the process running your code sent something that is not this check's result",
               "运行你代码的进程发来的不是这项检查的结果"),
            tr("something wrote into the grader's result pipe; only the grader may",
               "有代码往评分程序的结果管道里写了东西；只有评分程序自己可以写")))), False
    _, _, status, detail, kept, output, output_size = message
    detail = clean(detail)
    if status == "PASS":
        try:
            failure = evidence.recheck(kept)
        except (ValueError, TypeError, OSError, EOFError) as e:
            failure = CheckFailed(tr("comparisons the grader can read again",
                                     "评分程序能够重新读取的比较记录"),
                                  tr(f"unreadable ({e})", f"无法读取：“{e}”"),
                                  tr("something changed what the grader sent itself",
                                     "有代码改动了评分程序发给自己的内容"))
        if failure is not None:
            status, detail = "FAIL", clean(failure.report() + "\n" + label("note:", "注意：") + tr(
                "this passed inside the process that ran your code, but not when the grader "
                "compared the same values again: did your code change NumPy, PyTorch or the "
                "grader?", "这一项在运行你代码的进程里通过了，但评分程序重新比较同样的值时没有通过："
                "你的代码是不是改动了 NumPy、PyTorch 或评分程序？"))
    return CheckResult(name, status, detail, printed_lines(output, output_size)), True


def _import_failure(message, child) -> CheckResult:
    if isinstance(message, tuple) and len(message) == 2 and message[0] == "import failed" \
            and isinstance(message[1], str):
        detail = clean(message[1])
    elif isinstance(message, sandbox.Ended):
        detail = _ended_detail(message, tr("importing the file: ", "导入文件时，"),
                               tr("; no check was run", "；没有运行任何检查")
                               if message.timed_out else "")
    else:
        child.stop()
        detail = label("error:", "出错：") + tr(
            "importing the file: the process sent something that is not a result",
            "导入文件时，运行你代码的进程发来的不是结果")
    return CheckResult("the file imports", "ERROR", detail,
                       printed_lines(*child.output(OUTPUT_KEPT)),
                       title=tr("the file imports", "文件能够导入"))


def _ended_detail(ended: sandbox.Ended, prefix: str = "", suffix: str = "") -> str:
    return (f"{label('error:', '出错：')}{prefix}{ended.what}{suffix}\n"
            f"{label('hint:', '提示：')}{ended.hint}")


def _timed_out_detail(number: int, total: int, time_s: float) -> str:
    rest = total - number - 1
    others = {0: "", 1: tr("; the other check was not run", "；另一项检查没有运行")}.get(
        rest, tr(f"; the other {rest} checks were not run", f"；其余 {rest} 项检查没有运行"))
    return label("error:", "出错：") + tr(
        f"timed out: your code did not finish within {time_s:g} s on check {number + 1} of "
        f"{total}, so the grader stopped it{others}",
        f"超时：你的代码在第 {number + 1} 项检查（共 {total} 项）中运行了 {time_s:g} 秒仍未结束，"
        f"评分程序把它停了下来{others}") + "\n" + label("hint:", "提示：") + tr(
        "look for a loop that never ends or a call that waits (time.sleep, input()); "
        "--time-limit SECONDS changes the limit",
        "找找永不结束的循环或会一直等待的调用（time.sleep、input()）；时限可以用 --time-limit "
        "调整（单位为秒）")
