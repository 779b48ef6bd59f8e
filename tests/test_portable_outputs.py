"""Committed outputs mean the same on every processor.

nbval compares a notebook's committed outputs with a fresh run, character for character, on
whatever machine runs the tests: a reader's laptop, CI's runner, AMD or Intel by chance. An
output that prints rounding noise ("max |difference| 2e-16") passes on the machine that made it
and fails on the next. This test catches such an output on any single machine: it runs nbval
over the chapters again under a second numeric environment, which changes the kernels NumPy's
OpenBLAS, PyTorch's MKL and ATen's own vectorised code use, and with them the last bits of most
float computations (docs/writing-chapters.md, "What a page may print").

Only the English notebooks run: code cells are identical in both languages (tests/test_chapters.py),
so the numbers are too. Left out, to keep CI within its budget: the two training pages (minutes
each; their run-dependent outputs are ignored by nbval, and their hidden asserts leave room for
another processor) and the pages whose numbers are read from results files (JSON written once by
an experiment's command, the same bytes on every processor), the appendix among them.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each moves the last bits here (checked on an Intel Xeon with AVX-512, where the defaults are
# OpenBLAS's SkylakeX kernels, MKL's AVX-512 path and ATen's AVX512 kernels; on an AMD EPYC the
# defaults are Zen/AVX2 ones, which these differ from too):
SECOND_ENVIRONMENT = {
    "OPENBLAS_CORETYPE": "Nehalem",       # NumPy's BLAS: SSE kernels instead of the CPU's widest
    "MKL_CBWR": "COMPATIBLE",             # PyTorch's BLAS: MKL's conditional-numerical-reproducibility path
    "ATEN_CPU_CAPABILITY": "default",     # PyTorch's own kernels without AVX2/AVX-512 vectorisation
}
SLOW = {"training_multi30k", "copy_task"}
# Pages that read their numbers from results/ and compute nothing a BLAS kernel could round
# differently (statistics over stored values, tables, plots of stored curves).
FROM_RESULTS = {"reading_a_result", "model_variations", "multi30k_recipe", "constituency_parsing"}


def fast_notebooks() -> list[str]:
    return [str(p.relative_to(ROOT)) for p in sorted((ROOT / "chapters" / "en").glob("*.ipynb"))
            if p.stem not in SLOW | FROM_RESULTS and not p.stem.startswith("lab_")]


def test_the_second_environment_is_a_different_one():
    """ATen reports the capability it runs with: the variable took effect (a typo in a name
    would silently test the default environment twice)."""
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    env = os.environ | SECOND_ENVIRONMENT
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "DEFAULT"


def test_committed_outputs_hold_under_another_numeric_environment():
    env = os.environ | SECOND_ENVIRONMENT | {"OMP_NUM_THREADS": "1"}
    notebooks = fast_notebooks()
    assert len(notebooks) >= 12
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", "-o", "addopts=",
         "--nbval", "--nbval-current-env", "--nbval-sanitize-with=tests/nbval_sanitize.cfg",
         "--tb=short", *notebooks],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    if result.returncode != 0:
        failed = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        raise AssertionError(
            "nbval under " + " ".join(f"{k}={v}" for k, v in SECOND_ENVIRONMENT.items())
            + " failed: an output depends on the processor's rounding (docs/writing-chapters.md, "
            "'What a page may print').\n" + "\n".join(failed) + "\n" + result.stdout[-6000:])
