#!/usr/bin/env bash
# Build the HTML book, English and Chinese, from a clean _build, warnings as errors:
# _build/html/index.html (landing page), _build/html/en/, _build/html/zh/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
rm -rf "$root/_build"
"$root/.venv/bin/python" "$root/tools/build_book.py" "$root/_build"
