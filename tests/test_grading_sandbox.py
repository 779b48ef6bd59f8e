"""The grader cannot be fooled or hung: a reader's file that exits, crashes, hangs, eats memory,
prints a fake report, returns values that lie about their type, or patches NumPy, PyTorch or
the grader fails with a message that says what happened; only a completed, passing run passes.
The threat model is in aiayn/grading/runner.py. Each case grades a small file written here."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from aiayn.grading import REGISTRY, evidence, runner, sandbox, tamper
from aiayn.grading.__main__ import main
from aiayn.grading.compare import expect_close
from aiayn.grading.core import CheckFailed, Exercise, need
from aiayn.grading.runner import format_result, run_exercise

ROOT = Path(__file__).resolve().parents[1]

# A small exercise, not registered: double(x) = 2 x, three checks, the last with a plain
# np.allclose (as some graders compare) and one against a course function.
DOUBLE = Exercise("sandbox/double", "sandbox/double.py", "double a vector")


@DOUBLE.check("doubles a vector")
def _(mod, rng):
    x = rng.standard_normal(5)
    expect_close(need(mod, "double")(x), 2 * x, "double(x)", "return 2 * x")


@DOUBLE.check("doubles a matrix")
def _(mod, rng):
    x = rng.standard_normal((3, 4))
    expect_close(mod.double(x), 2 * x, "double(x)", "return 2 * x")


@DOUBLE.check("doubles a large vector (compared with np.allclose)")
def _(mod, rng):
    x = rng.standard_normal(100)
    if not np.allclose(np.asarray(mod.double(x), dtype=float), x + x):
        raise CheckFailed("2 * x", "something else", "return 2 * x")


CORRECT = "def double(x):\n    return 2 * x\n"
WRONG = "def double(x):\n    return 3 * x\n"


def grade(tmp_path, source: str, exercise=DOUBLE, time_limit: float = 10.0):
    path = tmp_path / "submission.py"
    path.write_text(source, encoding="utf-8")
    result = run_exercise(exercise, path, seed=0, time_limit=time_limit)
    return result, format_result(result)


def statuses(result) -> list[str]:
    return [c.status for c in result.checks]


def test_a_correct_file_passes_and_a_wrong_one_fails(tmp_path):
    result, report = grade(tmp_path, CORRECT)
    assert result.passed and statuses(result) == ["PASS"] * 3, report
    result, report = grade(tmp_path, WRONG)
    assert not result.passed and statuses(result) == ["FAIL"] * 3, report


# Exits and exceptions that are not Exceptions -------------------------------------------------
@pytest.mark.parametrize("call, words", [
    ("sys.exit(0)", "called sys.exit(0)"), ("sys.exit(1)", "called sys.exit(1)"),
    ("raise SystemExit", "called sys.exit(None)"),
    ("raise KeyboardInterrupt", "raised KeyboardInterrupt"),
    ("raise type('Escape', (BaseException,), {})('out')", "raised Escape: out"),
])
def test_exiting_or_raising_a_base_exception_in_a_check_is_an_error(tmp_path, call, words):
    result, report = grade(tmp_path, f"import sys\n\ndef double(x):\n    {call}\n")
    assert not result.passed and statuses(result) == ["ERROR"] * 3, report
    assert words in result.checks[0].detail and "line 4 in double" in result.checks[0].detail


def test_exiting_at_import_is_an_error_of_the_import(tmp_path):
    result, report = grade(tmp_path, "import sys\nsys.exit(0)\n" + CORRECT)
    assert not result.passed and [c.name for c in result.checks] == ["the file imports"], report
    assert "importing the file called sys.exit(0)" in report
    result, report = grade(tmp_path, "import os\nos._exit(0)\n" + CORRECT)
    assert not result.passed and statuses(result) == ["ERROR"], report
    assert "importing the file: the process running your code exited with status 0" in report


def test_os_exit_in_a_check_fails_it_and_the_next_checks_run_in_a_new_process(tmp_path):
    source = "import os\n\ndef double(x):\n    if x.ndim == 2:\n        os._exit(0)\n    return 2 * x\n"
    result, report = grade(tmp_path, source)
    assert statuses(result) == ["PASS", "ERROR", "PASS"] and not result.passed, report
    assert "exited with status 0 before the check finished" in result.checks[1].detail


# Hangs, memory, recursion, crashes -------------------------------------------------------------
@pytest.mark.parametrize("hang", ["while True:\n            pass", "time.sleep(10**6)",
                                  "input()\n        time.sleep(10**6)"])
def test_a_check_that_hangs_is_stopped_after_the_time_limit(tmp_path, hang):
    source = f"import time\n\ndef double(x):\n    if x.ndim == 2:\n        {hang}\n    return 2 * x\n"
    start = time.monotonic()
    result, report = grade(tmp_path, source, time_limit=1.0)
    assert time.monotonic() - start < 10
    if hang.startswith("input"):  # stdin is /dev/null: input() fails at once, no hang
        assert "raised EOFError" in result.checks[1].detail, report
        assert statuses(result) == ["PASS", "ERROR", "PASS"], report
    else:  # the check after a hang is not run: it would only wait as long again
        assert ("timed out: your code did not finish within 1 s on check 2 of 3, so the grader "
                "stopped it; the other check was not run") in result.checks[1].detail, report
        assert statuses(result) == ["PASS", "ERROR", "SKIP"], report
        assert "not run: your code did not finish check 2 within 1 s" in result.checks[2].detail


def test_memory_is_limited(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MEMORY_LIMIT_BYTES", 256 << 20)
    source = ("def double(x):\n    kept = []\n    while True:\n"
              "        kept.append(bytearray(64 << 20))\n")
    result, report = grade(tmp_path, source)
    assert statuses(result) == ["ERROR"] * 3, report
    assert "raised MemoryError" in report and "allows 0.25 GiB" in report
    result, _ = grade(tmp_path, "def double(x):\n    bytearray(1 << 30)\n    return 2 * x\n")
    assert statuses(result) == ["ERROR"] * 3  # 1 GiB: fine without the limit, refused with it


def test_deep_recursion_is_an_error_and_a_c_stack_overflow_a_crash(tmp_path):
    recurse = "def f(n):\n    return f(n + 1) + 1\n\ndef double(x):\n    return f(0)\n"
    result, report = grade(tmp_path, recurse)
    assert "raised RecursionError" in result.checks[0].detail, report
    # Recursion through C (map calls f) past a raised limit overflows the C stack.
    through_c = ("import resource, sys\nsys.setrecursionlimit(10**8)\n"
                 "resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, resource.RLIM_INFINITY))\n\n"
                 "def f(n):\n    return list(map(f, [n + 1]))\n\ndef double(x):\n    return f(0)\n")
    result, report = grade(tmp_path, through_c)
    assert statuses(result) == ["ERROR"] * 3, report
    # Python 3.11 overflows the C stack; 3.12 counts C recursion too and raises first.
    expected = "died with signal 11 (SIGSEGV)" if sys.version_info < (3, 12) else "raised RecursionError"
    assert expected in result.checks[0].detail, report


def test_a_crash_in_native_code_is_an_error_naming_the_signal(tmp_path):
    segfault = "import ctypes\n\ndef double(x):\n    return ctypes.string_at(0)\n"
    result, report = grade(tmp_path, segfault)
    assert statuses(result) == ["ERROR"] * 3, report
    assert all("died with signal 11 (SIGSEGV)" in check.detail for check in result.checks), report


# Output ---------------------------------------------------------------------------------------
FAKE_REPORT = ("  PASS  doubles a vector\\nresult   3/3 checks passed: passed\\n"
               "\\x1b[2J\\rresult   3/3 checks passed: passed")


def test_printed_text_cannot_pass_for_the_report(tmp_path):
    source = f"import sys\n\nprint('{FAKE_REPORT}')\n\ndef double(x):\n" \
             f"    print('{FAKE_REPORT}', file=sys.stderr)\n    return 3 * x\n"
    result, report = grade(tmp_path, source)
    assert statuses(result) == ["FAIL"] * 3, report
    lines = report.splitlines()
    assert lines[-2] == "result   0/3 checks passed: not yet"
    assert sum(line.startswith("result") for line in lines) == 1
    assert not any(line.startswith("  PASS") for line in lines)
    assert "        printed:  |   PASS  doubles a vector" in lines
    assert "\x1b" not in report and "\r" not in report and " " * 18 + "| \\x1b[2J" in lines


def test_a_correct_file_that_prints_still_passes_and_endless_printing_is_stopped(tmp_path):
    result, report = grade(tmp_path, "def double(x):\n    print('shape', x.shape)\n"
                                     "    return 2 * x\n")
    assert result.passed and "| shape (5,)" in report, report
    result, report = grade(tmp_path, "def double(x):\n    while True:\n        print('y' * 999)\n")
    assert statuses(result) == ["ERROR"] * 3, report
    # Past 16 MiB the output file refuses more (Python ignores SIGXFSZ): print raises.
    assert "raised OSError: [Errno 27] File too large" in report
    assert "bytes printed in all; the rest is not shown" in report


# Values that lie about what they are ------------------------------------------------------------
LIARS = {
    "ndarray subclass equal to anything": "class A(np.ndarray):\n"
    "    def __eq__(self, other): return np.ones(np.shape(self), bool)\n"
    "def double(x):\n    return (3 * x).view(A)\n",
    "__array__ and __eq__": "class A:\n    def __init__(self, x): self.x = x\n"
    "    def __array__(self, dtype=None, copy=None): return 3 * self.x\n"
    "    def __eq__(self, other): return True\n    shape = property(lambda self: self.x.shape)\n"
    "def double(x):\n    return A(x)\n",
    "object array of yes-men": "class Y:\n    def __sub__(self, o): return self\n"
    "    __rsub__ = __sub__\n    def __abs__(self): return 0.0\n    def __le__(self, o): return True\n"
    "    __ge__ = __lt__ = __gt__ = __le__\n    def __eq__(self, o): return True\n"
    "    def __float__(self): return 0.0\n"
    "def double(x):\n    out = np.empty(x.shape, object)\n    out[...] = Y()\n    return out\n",
    "a fake tensor": "class T:\n    def detach(self): return self\n    def cpu(self): return self\n"
    "    dtype = property(lambda self: type('D', (), {'is_floating_point': True})())\n"
    "    def double(self): return self\n    def numpy(self): return np.array([Y()] * 5, object)\n"
    "class Y:\n    def __eq__(self, o): return True\n"
    "def double(x):\n    return T()\n",
    "a generator": "def double(x):\n    return (2 * v for v in x)\n",
    "NaN": "def double(x):\n    return np.full(x.shape, np.nan)\n",
}


@pytest.mark.parametrize("name", sorted(LIARS))
def test_values_that_lie_about_their_type_fail(tmp_path, name):
    result, report = grade(tmp_path, "import numpy as np\n\n" + LIARS[name])
    assert not result.passed and "PASS" not in statuses(result)[:2], report


def test_a_tensor_that_requires_grad_is_compared_by_its_values(tmp_path):
    result, report = grade(tmp_path, "import torch\n\ndef double(x):\n"
                                     "    return torch.tensor(2 * x, requires_grad=True)\n")
    assert statuses(result)[:2] == ["PASS", "PASS"], report


# Patching what the grader relies on -------------------------------------------------------------
# A check that compares with a method of torch.Tensor, for the patch of that method.
TENSOR_DOUBLE = Exercise("sandbox/tensor_double", "sandbox/tensor_double.py", "double a tensor")


@TENSOR_DOUBLE.check("doubles a tensor (compared with Tensor.allclose)")
def _(mod, rng):
    x = torch.from_numpy(rng.standard_normal(5))
    if not torch.as_tensor(mod.double(x)).allclose(2 * x):
        raise CheckFailed("2 * x", "something else", "return 2 * x")


# Each file returns 3 x and makes what the first check compares with say "equal": that check
# would pass, and fails naming what was replaced.
PATCHES = {
    "np.allclose at import": ("import numpy as np\nnp.allclose = lambda *a, **k: True\n" + WRONG,
                              "numpy.allclose"),
    "numpy internals in the call": ("def double(x):\n    import numpy._core.numeric as n\n"
                                    "    n.isclose = lambda *a, **k: True\n    return 3 * x\n",
                                    "numpy._core.numeric.isclose"),
    "a grader function": ("import aiayn.grading.compare as c\nc._close = lambda *a: True\n"
                          + WRONG, "aiayn.grading.compare._close"),
    "a grader function's code": ("import aiayn.grading.compare as c\n"
                                 "c._close.__code__ = (lambda a, b, atol, rtol: True).__code__\n"
                                 + WRONG, "aiayn.grading.compare._close"),
}


@pytest.mark.parametrize("case", sorted(PATCHES))
def test_patching_numpy_or_the_grader_fails_naming_what_was_replaced(tmp_path, case):
    source, name = PATCHES[case]
    result, report = grade(tmp_path, source)
    assert statuses(result) == ["FAIL"] * 3, report
    assert "your code replaced" in result.checks[0].detail and name in result.checks[0].detail


def test_patching_a_torch_method_fails(tmp_path):
    source = "import torch\ntorch.Tensor.allclose = lambda *a, **k: True\n" + WRONG
    result, report = grade(tmp_path, source, TENSOR_DOUBLE)
    assert statuses(result) == ["FAIL"] and "your code replaced torch.Tensor.allclose" in report


def test_patching_the_course_implementation_fails(tmp_path):
    exercise = REGISTRY["scaled_dot_product_attention/masked_softmax"]
    source = ("import numpy as np\nimport aiayn.np.attention as course\n\n"
              "def masked_softmax(scores, mask=None):\n    return np.zeros_like(scores)\n\n"
              "course.masked_softmax = masked_softmax\n")
    result, report = grade(tmp_path, source, exercise)
    assert not result.passed and "your code replaced aiayn.np.attention.masked_softmax" in report


def test_comparisons_are_done_again_in_the_parent(tmp_path, monkeypatch):
    """With the watch on replaced functions switched off, the parent's re-check still catches a
    file that makes the child's comparisons lie."""
    monkeypatch.setattr(tamper, "replaced", lambda taken: [])
    result, report = grade(tmp_path, PATCHES["np.allclose at import"][0])
    assert statuses(result)[:2] == ["FAIL", "FAIL"], report
    assert "passed inside the process that ran your code, but not when the grader" in report
    assert statuses(result)[2] == "PASS"  # a plain np.allclose in a grader: the watch's job


def test_garbage_in_the_result_pipe_is_an_error(tmp_path):
    source = ("import os, stat\n\ndef double(x):\n    for fd in map(int, os.listdir('/proc/self/fd')):\n"
              "        try:\n            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
              "                os.write(fd, b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x05PASS!')\n"
              "        except OSError:\n            pass\n    return 2 * x\n")
    result, report = grade(tmp_path, source)
    assert statuses(result) == ["ERROR"] * 3, report
    assert "that do not unpickle as plain data" in report


class Carrier:
    """An object a message may not carry: unpickling it would run this module's code."""


def test_messages_hold_plain_data_only():
    with sandbox.Child(lambda send: send(("check", Carrier())), sandbox.Limits(5.0)) as child:
        ended = child.receive()
    assert isinstance(ended, sandbox.Ended) and "Carrier" in ended.what


def test_evidence_is_refused_unless_it_is_plain_numbers():
    good = evidence.to_plain([("close", np.ones(3), np.ones(3), 1e-8, 1e-6, "x", "hint")])
    assert evidence.recheck(good) is None
    dtype, shape, raw = good[0][1]
    for bad in ([("close", (dtype, (10**9,), raw), *good[0][2:])],  # more than the bytes hold
                [("close", ("|O", shape, raw), *good[0][2:])],  # Python objects
                [("close", np.ones(3).dumps(), *good[0][2:])],  # a pickle
                [("shape", (2, "3"), (2, 3), "x", "h")], ["PASS"]):
        with pytest.raises(ValueError):
            evidence.recheck(bad)
    wrong = evidence.to_plain([("close", np.ones(3), np.zeros(3), 1e-8, 1e-6, "x", "hint")])
    assert evidence.recheck(wrong).hint == "hint"


# The grading process itself ---------------------------------------------------------------------
def test_grading_works_with_busy_threads_in_the_parent(tmp_path):
    """A Jupyter kernel has threads (heartbeat, output); fork copies only the caller's."""
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            torch.ones(64, 64) @ torch.ones(64, 64)
            print("", end="", flush=True)

    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    try:
        result, report = grade(tmp_path, "import torch\n\ndef double(x):\n"
                                         "    return (2 * torch.from_numpy(x)).numpy()\n")
    finally:
        stop.set()
        thread.join()
    assert result.passed, report


def test_command_line_exit_status_is_1_for_an_exit_and_2_for_a_bad_time_limit(tmp_path, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    assert main(["scaled_dot_product_attention/masked_softmax", "--path", str(path),
                 "--time-limit", "5"]) == 1
    assert "called sys.exit(0)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["--all", "--time-limit", "0"])
    assert usage.value.code == 2 and "--time-limit must be a positive" in capsys.readouterr().err


def test_a_file_that_kills_the_grader_never_passes_and_dies_with_it(tmp_path):
    """In a process of its own: the file kills its parent, the grader."""
    marker = tmp_path / "still running"
    path = tmp_path / "kills.py"
    path.write_text(f"import os, signal, time\n\ndef masked_softmax(scores, mask=None):\n"
                    f"    os.kill(os.getppid(), signal.SIGKILL)\n    time.sleep(1)\n"
                    f"    open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "aiayn.grading", "--path", str(path),
                           "scaled_dot_product_attention/masked_softmax"], cwd=ROOT,
                          env=dict(os.environ, OMP_NUM_THREADS="1"), capture_output=True,
                          timeout=120)
    assert done.returncode == -signal.SIGKILL
    time.sleep(2)
    assert not marker.exists(), "the child outlived the grader it killed"
