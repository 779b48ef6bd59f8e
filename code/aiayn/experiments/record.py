"""Results files: what an experiment measured, and everything needed to trust and repeat it.

    with Recorder() as rec:                 # starts the wall and CPU clocks
        values = run_the_experiment()
    rec.write("results/table3/A_h1_seed0.json", values)

writes

    {"values": {...}, "command": "python -m aiayn.experiments.table3 --row A --seeds 0",
     "commit": "1747c71", "code_changes": [], "machine": "AMD EPYC; 2 logical CPUs; ...",
     "threads": 1, "seconds": 131.2, "cpu_seconds": 130.9, "finished": "2026-11-23T12:00:00+00:00"}

``code_changes`` lists files under code/ that differed from the commit when the run started
(empty for a clean tree), so a number is never attributed to a commit that did not produce it.
``cpu_seconds`` is the process's CPU time: on a busy machine wall time grows, CPU time much less.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

from ..machine import describe

REPOSITORY = Path(__file__).resolve().parents[3]  # code/aiayn/experiments -> repository root


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=REPOSITORY, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.rstrip() if out.returncode == 0 else ""  # not strip(): status lines begin with a space


def provenance() -> dict:
    """The commit of the checkout and the files under code/ that differ from it. A copy of a
    clean working tree sent to another machine (a rented GPU), whose own .git may be missing or
    older, names its commit in $AIAYN_COMMIT."""
    if os.environ.get("AIAYN_COMMIT"):
        return {"commit": os.environ["AIAYN_COMMIT"], "code_changes": []}
    changes = _git("status", "--porcelain", "--", "code")
    return {"commit": _git("rev-parse", "--short", "HEAD") or "unknown",
            "code_changes": sorted(line[3:] for line in changes.splitlines() if line)}


def command_line() -> str:
    """How this process was started, as one would type it again."""
    argv = list(sys.argv)
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:  # started with python -m
        argv = ["python", "-m", spec.name.removesuffix(".__main__"), *argv[1:]]
    return shlex.join(argv)


class Recorder:
    """Measures wall and CPU time from ``__enter__`` (or construction) to ``write``."""

    def __init__(self, command: str | None = None):
        self.command = command or command_line()
        self.provenance = provenance()
        self._start()

    def _start(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def __enter__(self) -> "Recorder":
        self._start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop = (time.perf_counter() - self._wall, time.process_time() - self._cpu)

    def write(self, path, values: dict) -> dict:
        """Writes ``values`` with their provenance to ``path`` (JSON, atomically); returns it."""
        seconds, cpu = getattr(self, "_stop", None) or (time.perf_counter() - self._wall,
                                                        time.process_time() - self._cpu)
        record = {"values": values, "command": self.command, **self.provenance,
                  "machine": describe(), "threads": _threads(), "seconds": round(seconds, 1),
                  "cpu_seconds": round(cpu, 1),
                  "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf8")
        os.replace(tmp, path)
        return record


def _threads() -> int:
    try:
        import torch
        return torch.get_num_threads()
    except ImportError:
        return int(os.environ.get("OMP_NUM_THREADS", "0")) or (os.cpu_count() or 1)


REQUIRED = ("values", "command", "commit", "machine", "threads", "seconds")


def read_results(path) -> dict:
    """A results file, checked to carry every field a reader needs to trust it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no results file {path}: run the command that writes it "
                                "(the chapter names it) or check out the committed one")
    record = json.loads(path.read_text(encoding="utf8"))
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise ValueError(f"results file {path} lacks {', '.join(missing)}")
    return record


def processor_name(record: dict) -> str:
    """The processor a results file was written on, as prose names it: "Intel(R) Xeon(R) Processor;
    2 logical CPUs; ..." -> "Intel Xeon", "AMD EPYC; ..." -> "AMD EPYC"."""
    return re.sub(r"\((R|TM)\)| Processor$", "", record["machine"].split(";")[0]).strip()


class Job(NamedTuple):
    """One run of a multi-run experiment: its label in the progress bar, the command that writes
    exactly its results file, where that file goes, the run itself and a one-line summary."""

    label: str
    command: str
    path: Path
    run: Callable[[], dict]
    summary: Callable[[dict], str]


def run_recorded(prog: str, jobs: list[Job], quiet: bool = False) -> int:
    """Runs ``jobs`` one after another, each under a ``Recorder`` that writes its results file;
    returns a command line's exit status: 0, or 2 after one line on stderr when the data is
    missing or corrupt or a value is bad (aiayn-train's own errors have printed theirs)."""
    from tqdm import tqdm

    bar = tqdm(jobs, desc=prog, unit="run", disable=quiet)
    try:
        for job in bar:
            bar.set_description(f"{prog} {job.label}")
            with Recorder(job.command) as rec:
                values = job.run()
            record = rec.write(job.path, values)
            bar.write(f"{job.label}: {job.summary(values)}, {record['seconds']:.0f} s")
    except (OSError, ValueError, RuntimeError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 2
    return 0
