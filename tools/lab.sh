#!/usr/bin/env bash
# Open the chapters in JupyterLab, with the course's environment as the kernel.
#   bash tools/lab.sh                     # sets up like the other commands, then opens a browser
#   bash tools/lab.sh --no-browser        # extra arguments go to `jupyter lab`
# JupyterLab and jupyterlab-myst are pinned in requirements.txt and run from .venv, so the
# notebooks' kernel ("python3") is .venv's Python, with the course package installed, and the
# markdown renders as in the book: tabs, dropdowns, admonitions, math, figures and tables
# (docs/writing-chapters.md lists what it does not render; tests/test_jupyterlab.py opens a
# chapter per language through this script). It serves the whole checkout, as Binder does, so a
# page's links and images into docs/ or code/ resolve, and opens chapters/start_here.ipynb: the
# chapters in the book's reading order (the file browser lists them alphabetically), a page
# tools/start_page.py writes from the tables of contents.
# AIAYN_NOTEBOOK_DIR serves another folder (a copy of the checkout to try changes on).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
cd "$root"
# The training chapter reads Multi30k from $AIAYN_DATA; without one (and without the shared
# folder a CI checkout has beside it), it is downloaded into data/ here (gitignored).
if [ -z "${AIAYN_DATA:-}" ] && [ ! -d "$root/../shared/data/multi30k" ]; then
  export AIAYN_DATA="$root/data"
fi
# Jupyter refuses to run as root unless told; containers (and CI) often are root.
as_root=()
if [ "$(id -u)" -eq 0 ]; then as_root=(--allow-root); fi
exec "$root/.venv/bin/jupyter" lab --notebook-dir="${AIAYN_NOTEBOOK_DIR:-$root}" \
  --ServerApp.default_url=/lab/tree/chapters/start_here.ipynb "${as_root[@]+"${as_root[@]}"}" "$@"
