#!/usr/bin/env bash
# The whole test suite: pytest over tests/ and nbval (strict: committed outputs are
# compared) over every notebook in chapters/, on two workers. Options: pytest.ini.
# Extra arguments go to pytest, e.g. `bash tools/test.sh -k plotting`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
cd "$root"
# One BLAS/OpenMP thread per process: two xdist workers already fill two cores, and
# oversubscribed threads made some tests 20x slower on a loaded 2-core machine.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# Two workers; pytest.ini's --dist loadfile keeps each notebook on one of them.
# Any non-zero pytest status fails this script (set -e), including 5, "no tests collected".
"$root/.venv/bin/python" -m pytest -n 2 tests chapters "$@"
