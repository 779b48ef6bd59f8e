#!/usr/bin/env bash
# Prepare this machine for the book and the tests (Debian/Ubuntu, Python 3.11):
#   1. the CJK font matplotlib needs for Chinese plot labels, and Chromium for the browser
#      test (apt, needs root or sudo),
#   2. .venv/ with the pinned requirements and the course package (editable),
#   3. a matplotlib font cache that knows about the font.
# Idempotent, and quick when everything is in place. tools/book.sh and tools/test.sh run it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
font="WenQuanYi Micro Hei"

apt_updated=""
apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "$apt_updated" ]; then
    $sudo apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

# 1. Font. (Captured first: `fc-list | grep -q` can fail under pipefail when grep exits early.)
fonts="$(fc-list : family 2>/dev/null || true)"
if ! grep -qi "$font" <<<"$fonts"; then
  echo "setup: installing the CJK font ($font)"
  apt_install fontconfig fonts-wqy-microhei
fi

# 1b. Chromium for tests/test_browser.py: Playwright (requirements.txt) drives the system
# browser and never downloads one of its own.
if [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing Chromium (for the browser test)"
  apt_install chromium
fi

# 2. Virtual environment with Python 3.11+.
if [ ! -x "$venv/bin/python" ]; then
  if command -v python3.11 >/dev/null; then
    py=python3.11
  elif python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    py=python3
  else
    echo "setup: Python 3.11 or newer is required (python3.11 or python3 on PATH)" >&2
    exit 1
  fi
  echo "setup: creating .venv with $($py --version)"
  if ! "$py" -m venv "$venv"; then
    # Debian/Ubuntu ship venv support separately.
    rm -rf "$venv"
    apt_install "$(basename "$(command -v "$py")")-venv" || apt_install python3-venv
    "$py" -m venv "$venv"
  fi
fi

# Packages: reinstall only when the pins or the package metadata changed since last time.
stamp="$venv/.requirements.sha256"
want="$(cat requirements.txt code/pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "setup: installing requirements into .venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -r requirements.txt
  "$venv/bin/python" -m pip install --quiet -e code
  echo "$want" >"$stamp"
fi

# 3. matplotlib caches the font list on first use; a cache written before the font was
# installed does not list it, and Chinese labels then render as boxes. Drop such a cache
# (matplotlib rebuilds it on next use).
cache="$("$venv/bin/python" -c 'import matplotlib; print(matplotlib.get_cachedir())')"
for f in "$cache"/fontlist-*.json; do
  if [ -e "$f" ] && ! grep -q "$font" "$f"; then
    echo "setup: removing stale matplotlib font cache $f"
    rm -f "$f"
  fi
done
