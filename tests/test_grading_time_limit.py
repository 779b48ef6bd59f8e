"""A submission that never finishes is answered within one time limit plus a few seconds, for
every exercise: the grader stops it on the first check that times out and runs none of that
file's other checks (issue 47; it used to wait the limit once per check: 7 checks, 3.5 minutes).

Why a short limit proves the default. The limit is one number, passed unchanged from
``--time-limit`` (default ``runner.TIME_LIMIT_S``, 30 s) to the child's ``sandbox.Limits``; the
code path does not depend on its value. So the time of an answer is the limit plus what does
not depend on it (forking the child, importing the file, building the first check's inputs,
stopping the child). The tests below measure that overhead for every exercise with a 3-second
limit and hold it under 5 seconds, so at the default limit every exercise is answered within
30 + 5 s, inside the issue's 40 s. Running the 26 exercises at 30 s each would cost 13 minutes
of a 15-minute CI budget. To measure at the default limit anyway (the command line, a busy
loop, one exercise after another; about 15 minutes):

    AIAYN_DEFAULT_LIMIT_SWEEP=1 .venv/bin/python -m pytest -p no:cacheprovider -s \
        tests/test_grading_time_limit.py -k default

Cost. The exercises are graded at the same time, each in a forked worker, and their loops sleep
instead of spinning, so the sweep costs one limit of wall time and almost no CPU; one command
line run, at the same time, spins (``while True: pass``), as a learner's loop does. A worker is
forked from this process, so nothing is imported again.
"""

import ast
import contextlib
import io
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from aiayn.grading import REGISTRY, grade, run_exercise
from aiayn.grading.__main__ import main
from aiayn.grading.runner import TIME_LIMIT_S

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"
LIMIT_S = 3.0
# "A few seconds": fork, import, the first check's inputs, stopping the child; under 1 s on a
# quiet machine, up to 2 s with the 28 gradings of this file at once on a loaded one.
OVERHEAD_S = 5.0
IDS = sorted(REGISTRY)
SLEEP = "time.sleep(0.05)"
SPIN = "pass"


def looping_copy(stub: Path, dest: Path, body: str = SLEEP) -> Path:
    """``stub`` with ``while True: <body>`` at the top of every function and method, so whatever
    a check calls first never returns (a stub's docstrings stay where they are)."""
    tree = ast.parse(stub.read_text(encoding="utf8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            at = 1 if ast.get_docstring(node) is not None else 0
            node.body[at:at] = ast.parse(f"while True:\n    {body}").body
    tree.body.insert(0, ast.parse("import time").body[0])
    dest.write_text(ast.unparse(tree) + "\n", encoding="utf8")
    return dest


def grade_one(exercise_id: str, path: str) -> tuple[float, list[tuple[str, str]]]:
    """In a worker: (seconds until the answer, (status, detail) of every check)."""
    start = time.monotonic()
    result = run_exercise(REGISTRY[exercise_id], Path(path), seed=0, time_limit=LIMIT_S)
    return time.monotonic() - start, [(c.status, c.detail) for c in result.checks]


def grade_chapter(chapter: str, path: str) -> tuple[float, bool, str]:
    """In a worker: (seconds, passed, report) of grading every exercise of ``chapter`` on the
    file ``path``, as ``python -m aiayn.grading from_scratch --path <file>`` does."""
    out, start = io.StringIO(), time.monotonic()
    passed = grade(chapter, path=path, seed=0, out=out, time_limit=LIMIT_S)
    return time.monotonic() - start, passed, out.getvalue()


def command_line(args: list[str]) -> tuple[float, int, str]:
    """In a worker: (seconds, exit status, printed report) of ``python -m aiayn.grading``."""
    out, start = io.StringIO(), time.monotonic()
    with contextlib.redirect_stdout(out):
        status = main(args)
    return time.monotonic() - start, status, out.getvalue()


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """Every exercise graded on a looping copy of its stub, all at once; the from-scratch
    chapter as one run; and the command line on a spinning masked_softmax, alongside."""
    folder = tmp_path_factory.mktemp("looping")
    paths = {}
    for ex in REGISTRY.values():
        if ex.file not in paths:
            dest = folder / ex.file.replace("/", "__")
            paths[ex.file] = str(looping_copy(EXERCISES / ex.file, dest))
    spinning = looping_copy(EXERCISES / "scaled_dot_product_attention/masked_softmax.py",
                            folder / "spinning.py", SPIN)
    with ProcessPoolExecutor(len(IDS) + 2, mp_context=get_context("fork")) as pool:
        each = {i: pool.submit(grade_one, i, paths[REGISTRY[i].file]) for i in IDS}
        chapter = pool.submit(grade_chapter, "from_scratch", paths["from_scratch/transformer.py"])
        cli = pool.submit(command_line, ["scaled_dot_product_attention/masked_softmax", "--path",
                                         str(spinning), "--time-limit", f"{LIMIT_S:g}"])
        return {i: future.result() for i, future in each.items()}, chapter.result(), cli.result()


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_looping_submission_is_answered_after_one_time_limit(answers, exercise_id):
    seconds, checks = answers[0][exercise_id]
    statuses = [status for status, _ in checks]
    total = len(REGISTRY[exercise_id].checks)
    assert len(checks) == total and statuses == ["ERROR"] + ["SKIP"] * (total - 1), checks
    others = {1: "", 2: "; the other check was not run"}.get(
        total, f"; the other {total - 1} checks were not run")
    assert (f"timed out: your code did not finish within {LIMIT_S:g} s on check 1 of {total}, "
            f"so the grader stopped it{others}") in checks[0][1]
    assert all(f"not run: your code did not finish check 1 within {LIMIT_S:g} s" in detail
               for _, detail in checks[1:])
    assert LIMIT_S <= seconds <= LIMIT_S + OVERHEAD_S, f"answered after {seconds:.1f} s"


def test_the_later_stages_of_a_hung_file_are_not_run(answers):
    """``python -m aiayn.grading from_scratch`` grades eight stages of one file: after stage 1
    hangs, stages 2-8 wait for nothing."""
    seconds, passed, report = answers[1]
    stages = [ex for ex in REGISTRY.values() if ex.chapter == "from_scratch"]
    assert not passed and report.count("timed out:") == 1, report
    assert report.count("not run: your code did not finish check 1 of from_scratch/attention "
                        f"within {LIMIT_S:g} s") == len(stages) - 1, report
    assert f"0 of {len(stages)} exercises passed" in report
    assert LIMIT_S <= seconds <= LIMIT_S + OVERHEAD_S, f"answered after {seconds:.1f} s"


def test_the_command_line_answers_a_spinning_loop_after_one_limit(answers):
    """The issue's case, a `while True: pass` in masked_softmax, through the command line's
    ``main`` (tests/test_grading_sandbox.py runs ``python -m aiayn.grading`` itself)."""
    seconds, status, out = answers[2]
    assert status == 1, out
    assert ("your code did not finish within 3 s on check 1 of 7, so the grader\n"
            "                  stopped it; the other 6 checks were not run") in out, out
    assert out.count("  SKIP  ") == 6 and "result   0/7 checks passed: not yet" in out, out
    assert LIMIT_S <= seconds <= LIMIT_S + OVERHEAD_S, f"answered after {seconds:.1f} s"


@pytest.mark.skipif(os.environ.get("AIAYN_DEFAULT_LIMIT_SWEEP") != "1",
                    reason="15 minutes: set AIAYN_DEFAULT_LIMIT_SWEEP=1 to measure")
def test_default_limit_every_exercise_from_the_command_line(tmp_path):
    """At the default limit, from the command line, a spinning loop (niced, so it does not slow
    others down), one exercise after another; prints each time (pytest -s)."""
    times = {}
    for exercise_id in IDS:
        ex = REGISTRY[exercise_id]
        path = looping_copy(EXERCISES / ex.file, tmp_path / f"{ex.file.replace('/', '__')}", SPIN)
        start = time.monotonic()
        done = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "aiayn.grading",
                               exercise_id, "--path", str(path)], cwd=ROOT, capture_output=True,
                              text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=600)
        times[exercise_id] = time.monotonic() - start
        print(f"{exercise_id:<48} {times[exercise_id]:5.1f} s  exit {done.returncode}",
              flush=True)
        assert done.returncode == 1 and "did not finish within 30 s on check 1" in done.stdout
    print(f"load average after: {os.getloadavg()}")
    assert max(times.values()) <= TIME_LIMIT_S + 10, times
