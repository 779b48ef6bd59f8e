#!/usr/bin/env bash
# Prepare this machine for the book and the tests (Debian or Ubuntu; Python 3.11 or 3.12):
#   1. .venv/ with the pinned requirements and the course package (editable),
#   2. the CJK font matplotlib and Chromium need for Chinese text: system-wide with root or
#      passwordless sudo, otherwise for this user (tools/cjk_font.py, checksummed),
#   3. a Chromium for the browser test, chosen by tools/find_browser.py (one already there,
#      Debian's package, or Playwright's own),
#   4. a matplotlib font cache that knows about the font.
# Without root it still completes, and says what it could not do. Idempotent, and quick when
# everything is in place. tools/book.sh and tools/test.sh run it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
font="WenQuanYi Micro Hei"

# Root, or sudo that asks no password: may we install system packages?
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
fi
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    $sudo apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}
could_not=()

# 1. Virtual environment. $AIAYN_PYTHON if set (CI's Python matrix sets it), and then only it:
# falling back to python3 would test another Python than the one asked for. Else python3 when
# it is 3.11 or newer, else python3.11.
if [ ! -x "$venv/bin/python" ]; then
  py=""
  if [ -n "${AIAYN_PYTHON:-}" ]; then candidates=("$AIAYN_PYTHON"); else candidates=(python3 python3.11); fi
  for candidate in "${candidates[@]}"; do
    if command -v "$candidate" >/dev/null &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      py="$candidate"; break
    fi
  done
  if [ -n "${AIAYN_PYTHON:-}" ] && [ -z "$py" ]; then
    echo "setup: AIAYN_PYTHON=$AIAYN_PYTHON does not run as Python 3.11 or newer here; point it at one (e.g. python3.12) or unset it" >&2
    exit 1
  elif [ -z "$py" ]; then
    echo "setup: Python 3.11 or newer is required (python3 or python3.11 on PATH, or set AIAYN_PYTHON)" >&2
    exit 1
  fi
  echo "setup: creating .venv with $($py --version)"
  if ! "$py" -m venv "$venv"; then
    rm -rf "$venv"
    if [ "$sudo" = "none" ]; then  # Debian/Ubuntu ship venv support separately
      echo "setup: '$py -m venv' failed; install python3-venv (needs root), then run this again" >&2
      exit 1
    fi
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
  # --no-compile, then compileall: pip byte-compiles its 11,000 files one after the other (about
  # 60 of its 100 s on a 2-core machine); compileall -j 0 uses every core and skips the packages'
  # own test suites, which nothing here imports (35 s). Bytecode is compiled here, not on first
  # import, because with PYTHONDONTWRITEBYTECODE set every process would compile torch anew.
  "$venv/bin/python" -m pip install --quiet --no-compile -r requirements.txt
  "$venv/bin/python" -m pip install --quiet --no-compile -e code
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$venv/bin/python" -m compileall -q -j 0 -x '/tests?/|/torch/testing/_internal/' "$site" >/dev/null ||
    echo "setup: some installed files did not byte-compile; Python compiles them when they are imported"
  echo "$want" >"$stamp"
fi

# 2. Font. (Captured first: `fc-list | grep -q` can fail under pipefail when grep exits early.)
fonts="$(fc-list : family 2>/dev/null || true)"
if ! grep -qi "$font" <<<"$fonts"; then
  if [ "$sudo" != "none" ]; then
    echo "setup: installing the CJK font ($font) system-wide"
    apt_install fontconfig fonts-wqy-microhei
  elif ! python3 tools/cjk_font.py; then
    could_not+=("install the CJK font: Chinese plot labels and pages will show boxes (install fonts-wqy-microhei as root)")
  fi
fi

# 3. Browser for tests/test_browser.py. find_browser.py installs Debian's chromium only with
# root or passwordless sudo, and records its choice in .venv/aiayn-browser.json.
if ! "$venv/bin/python" tools/find_browser.py --setup; then
  could_not+=("find or install a browser: the browser test will be skipped (set AIAYN_CHROMIUM to a Chromium or Chrome)")
fi

# 4. matplotlib caches the font list on first use; a cache written before the font was
# installed does not list it, and Chinese labels then render as boxes. Drop such a cache
# (matplotlib rebuilds it on next use).
cache="$("$venv/bin/python" -c 'import matplotlib; print(matplotlib.get_cachedir())')"
for f in "$cache"/fontlist-*.json; do
  if [ -e "$f" ] && ! grep -q "$font" "$f"; then
    echo "setup: removing stale matplotlib font cache $f"
    rm -f "$f"
  fi
done

for what in "${could_not[@]+"${could_not[@]}"}"; do
  echo "setup: could not $what" >&2
done
exit 0
