"""Which Chromium the browser test drives: decided here, and only here.

In this order:
1. ``$AIAYN_CHROMIUM``, when set: the reader's explicit choice (it must be executable).
2. A browser that is already there: Debian's ``/usr/bin/chromium``, then on PATH ``chromium``,
   ``chromium-browser``, ``google-chrome``, ``google-chrome-stable``, ``chrome``. GitHub's Ubuntu
   runners have both a Chromium snapshot (linked as /usr/bin/chromium) and Google Chrome. Ubuntu's
   own ``chromium-browser`` is a wrapper that starts a snap, and snaps do not run in containers
   or CI jobs: such wrappers are skipped.
3. Debian's ``chromium`` package, where apt offers a real one (Ubuntu offers only the snap
   transition) and this user may install system packages (root, or sudo without a password).
4. Playwright's own Chromium (``python -m playwright install chromium``), where the network allows.
5. None: the reason is recorded. The browser test then skips with that reason on a reader's
   machine, and fails under ``CI=true``, where a skipped browser test would hide a broken book.

    python tools/find_browser.py           # what would be used, installing nothing
    python tools/find_browser.py --setup   # tools/setup.sh: install where 3 or 4 applies, record

``--setup`` writes the choice to .venv/aiayn-browser.json; ``chosen()`` reads it back
(tools/browser.py, hence tests/test_browser.py and tools/screenshots.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / ".venv" / "aiayn-browser.json"
KNOWN_PATHS = ("/usr/bin/chromium",)  # Debian's package (and GitHub's runners link theirs here)
NAMES_ON_PATH = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


@dataclass(frozen=True)
class Choice:
    path: str | None  # the executable, or None when no browser can be had
    how: str          # "override", "found", "apt", "playwright" or "none"
    detail: str       # one line for a person: what was found, skipped or missing


def is_snap_wrapper(path: str) -> bool:
    """True for a snap (under /snap/) or a small script that only starts one (Ubuntu's
    /usr/bin/chromium-browser): neither runs in a container."""
    real = os.path.realpath(path)
    if real.startswith("/snap/"):
        return True
    try:
        with open(real, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and b"/snap/" in head


def installed_browser(path_env: str, known: tuple[str, ...] | None = None) -> tuple[str | None, list[str]]:
    """The first usable browser already on this machine, and the snap wrappers passed over."""
    known = KNOWN_PATHS if known is None else known
    skipped = []
    candidates = [p for p in known if os.path.isfile(p) and os.access(p, os.X_OK)]
    candidates += [p for p in (shutil.which(n, path=path_env) for n in NAMES_ON_PATH) if p]
    for path in dict.fromkeys(candidates):  # keep order, drop repeats
        if is_snap_wrapper(path):
            skipped.append(path)
            continue
        return path, skipped
    return None, skipped


def apt_offers_chromium(apt_show: str) -> bool:
    """Reads ``apt-cache show chromium``: True when a real ``chromium`` package is offered
    (Debian), False when there is none or only a transition to the snap (Ubuntu)."""
    for paragraph in apt_show.split("\n\n"):
        fields = {}
        for line in paragraph.splitlines():
            key, sep, value = line.partition(":")
            if sep and not line.startswith(" "):
                fields[key.strip()] = value.strip()
        if fields.get("Package") == "chromium" and "snap" not in paragraph.lower():
            return True
    return False


def plan(env: dict, apt_show: str, may_install_system: bool, known=None) -> Choice:
    """What to use, or how to get it, without doing anything (the unit tests drive this)."""
    override = env.get("AIAYN_CHROMIUM")
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return Choice(override, "override", f"AIAYN_CHROMIUM={override}")
        return Choice(None, "none", f"AIAYN_CHROMIUM={override} is not an executable file")
    path, skipped = installed_browser(env.get("PATH", ""), known)
    passed = f" (passed over snap wrappers: {', '.join(skipped)})" if skipped else ""
    if path:
        return Choice(path, "found", f"found {path}{passed}")
    if apt_offers_chromium(apt_show):
        if may_install_system:
            return Choice(None, "apt", f"no browser found{passed}; installing Debian's chromium")
        return Choice(None, "playwright", f"no browser found{passed}; apt offers chromium but "
                      "installing it needs root or sudo; trying Playwright's Chromium")
    return Choice(None, "playwright", f"no browser found{passed} and apt offers no chromium "
                  "package (Ubuntu's is a snap); trying Playwright's Chromium")


def may_install_system_packages() -> bool:
    if os.geteuid() == 0:
        return True
    return shutil.which("sudo") is not None and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True).returncode == 0


def apt_show_chromium() -> str:
    if shutil.which("apt-cache") is None:
        return ""
    result = subprocess.run(["apt-cache", "show", "chromium"], capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else ""


def _apt_install_chromium() -> Choice:
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]):
        if subprocess.run(sudo + cmd, env=env).returncode != 0:
            return Choice(None, "none", f"`{' '.join(cmd)}` failed")
    path, _ = installed_browser(os.environ.get("PATH", ""))
    return Choice(path, "apt", f"installed Debian's chromium: {path}") if path else \
        Choice(None, "none", "apt installed chromium but no executable appeared")


def _playwright_chromium() -> Choice:
    result = subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        return Choice(None, "none", "no browser: none installed, none from apt, and Playwright "
                      f"could not download its own ({last[0][:160]})")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        path = p.chromium.executable_path
    return Choice(path, "playwright", f"downloaded Playwright's Chromium: {path}")


def setup() -> Choice:
    """What ``tools/setup.sh`` runs: decide, install if needed, record the choice."""
    choice = plan(dict(os.environ), apt_show_chromium(), may_install_system_packages())
    if choice.how == "apt":
        choice = _apt_install_chromium()
    elif choice.how == "playwright" and choice.path is None:
        choice = _playwright_chromium()
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(asdict(choice)) + "\n", encoding="utf8")
    return choice


def chosen() -> Choice:
    """The browser setup chose (still executable), else what is there now; installs nothing."""
    env = dict(os.environ)
    if not env.get("AIAYN_CHROMIUM") and RECORD.is_file():
        record = Choice(**json.loads(RECORD.read_text(encoding="utf8")))
        if record.path and os.access(record.path, os.X_OK):
            return record
    choice = plan(env, "", may_install_system=False)
    return choice if choice.path else Choice(None, "none", choice.detail.split(";")[0] +
                                             ": run tools/setup.sh, or set AIAYN_CHROMIUM")


def missing_browser_fails(env: dict) -> bool:
    """Without a browser the browser test skips, with the reason, on a reader's machine; under
    CI=true it fails: a CI run that skipped it would pass while the book could be broken."""
    return env.get("CI", "").strip().lower() in ("true", "1", "yes")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setup", action="store_true", help="install if needed and record the choice")
    args = parser.parse_args()
    choice = setup() if args.setup else chosen()
    print(f"browser: {choice.detail}")
    return 0 if choice.path else 1


if __name__ == "__main__":
    sys.exit(main())
