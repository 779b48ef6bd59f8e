"""Execute chapter notebooks in place, the way nbval runs them, and report how long each took.

    .venv/bin/python tools/execute_notebooks.py chapters/en/copy_task.ipynb chapters/zh/copy_task.ipynb
    .venv/bin/python tools/execute_notebooks.py --check chapters/en/why_self_attention.ipynb

Each notebook runs top to bottom in a fresh kernel of this environment, with the notebook's
folder as working directory (so ``aiayn.plotting.tr`` picks the language) and one BLAS/OpenMP
thread, as tools/test.sh runs nbval. Outputs replace the old ones and the file is saved;
``--check`` runs without saving. A cell that raises stops the run with the error and exit 1;
so does ``--deadline`` (seconds for the whole notebook) when it passes. ``--save-failed`` saves
such a run too, with the outputs until then: on a lent GPU, a run cut short still tells how far
it got.

Before saving, each cell's consecutive stream outputs are merged and the text a carriage return
overwrites is dropped, as a notebook front end shows them: a progress bar redraws its line with
``\r`` hundreds of times, and the book (myst-nb renders every stream output as its own block)
would otherwise print every state of it. ``--tidy`` does only that to the saved outputs.
"""

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

from lab_view import collapse_hidden_cells  # tools/lab_view.py: hidden cells open collapsed in JupyterLab


# Everything on a line up to the last carriage return that more text follows.
OVERWRITTEN = re.compile(r".*\r(?=[^\n])")


def coalesce_streams(nb) -> None:
    """In place: what nbconvert's CoalesceStreamsPreprocessor does (tests/test_chapters.py
    checks that the two agree), written out because the GPU machine's environment, which runs
    this script, has no nbconvert."""
    for cell in nb.cells:
        merged = []
        for output in cell.get("outputs", []):
            if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == output.name):
                merged[-1].text += output.text
            else:
                merged.append(output)
        for output in merged:
            if output.output_type == "stream" and "\r" in output.text:
                output.text = OVERWRITTEN.sub("", output.text)
        if "outputs" in cell:
            cell.outputs = merged


def execute(path: Path, timeout: int, save: bool, save_failed: bool = False, deadline: float | None = None) -> float:
    """Runs ``path``; returns the seconds it took. ``deadline``: seconds for the whole notebook, after
    which the running cell is stopped (CellTimeoutError); each cell also gets at most ``timeout``."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()

    def cell_timeout(cell) -> int:
        if deadline is None:
            return timeout
        return max(1, min(timeout, int(deadline - (time.perf_counter() - start))))

    client = NotebookClient(nb, timeout=timeout, timeout_func=cell_timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError):
        if save_failed:  # the outputs up to the failing cell, for a run that cannot be repeated at will
            coalesce_streams(nb)
            collapse_hidden_cells(nb)
            nbformat.write(nb, path)
        raise
    seconds = time.perf_counter() - start
    if save:
        coalesce_streams(nb)
        collapse_hidden_cells(nb)
        nbformat.write(nb, path)
    return seconds


def tidy(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    coalesce_streams(nb)
    collapse_hidden_cells(nb)
    nbformat.write(nb, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell (default 900)")
    parser.add_argument("--check", action="store_true", help="execute without saving")
    parser.add_argument("--tidy", action="store_true",
                        help="do not execute: only merge the saved stream outputs (see above) and save")
    parser.add_argument("--save-failed", action="store_true",
                        help="save a notebook whose run failed too, with its outputs up to the error (GPU runs)")
    parser.add_argument("--deadline", type=float, metavar="SECONDS",
                        help="stop a notebook's run after this many seconds in all (with --save-failed, what "
                             "ran until then is saved: on a lent GPU, a run cut short still tells how far it got)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # as tools/test.sh
    status = 0
    for path in args.notebooks:
        if not path.is_file():
            print(f"{path}: no such notebook", file=sys.stderr)
            return 2
        if args.tidy:
            tidy(path)
            print(f"{path}: stream outputs merged, saved")
            continue
        try:
            seconds = execute(path.resolve(), args.timeout, save=not args.check,
                              save_failed=args.save_failed and not args.check, deadline=args.deadline)
        except CellExecutionError as e:
            print(f"{path}: a cell raised\n{e}", file=sys.stderr)
            status = 1
            continue
        except CellTimeoutError as e:
            limit = f"the deadline ({args.deadline:g} s in all)" if args.deadline else f"--timeout {args.timeout} s"
            print(f"{path}: stopped at {limit}: {str(e).splitlines()[0].rstrip('.')}"
                  + ("; the outputs until then are saved" if args.save_failed and not args.check else ""),
                  file=sys.stderr)
            status = 1
            continue
        print(f"{path}: executed in {seconds:.1f} s" + ("" if args.check else ", saved"))
    return status


if __name__ == "__main__":
    sys.exit(main())
