"""The CJK font for Chinese plot labels, for a user without root.

tools/setup.sh installs ``fonts-wqy-microhei`` system-wide when it may (root, or sudo without a
password). Otherwise it runs this: ``apt-get download`` fetches the same Debian/Ubuntu package
without root, the font file is taken out of it with ``dpkg-deb -x``, checked against the sha256
below, and copied to ``~/.local/share/fonts`` ($XDG_DATA_HOME/fonts), where fontconfig (hence
Chromium) and matplotlib both look.

    python3 tools/cjk_font.py            # install for this user; exit 1 with the reason if not
    python3 tools/cjk_font.py --deb F    # use a .deb already downloaded

The font file has not changed since 2010 (upstream 0.2.0-beta): Debian 12 and Ubuntu 22.04/24.04
ship the same bytes, so one checksum serves every distribution this course supports.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "fonts-wqy-microhei"
FONT_FILE = "usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
SHA256 = "2420e8078af796b19a3f6ef13de527a1a91c1e7171eea115926c614ced1009b3"


class FontError(RuntimeError):
    """Why the font could not be installed, in one line for the reader."""


def user_font_dir(env: dict) -> Path:
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME", str(Path.home())), ".local", "share")
    return Path(data) / "fonts"


def download_package(folder: Path) -> Path:
    """``apt-get download`` needs no root, only the package lists apt already has."""
    if shutil.which("apt-get") is None:
        raise FontError("apt-get is not available (not Debian or Ubuntu)")
    result = subprocess.run(["apt-get", "download", PACKAGE], cwd=folder, capture_output=True, text=True)
    debs = sorted(folder.glob(f"{PACKAGE}_*.deb"))
    if result.returncode != 0 or not debs:
        why = (result.stderr.strip().splitlines() or ["no .deb was written"])[-1]
        raise FontError(f"`apt-get download {PACKAGE}` failed: {why}")
    return debs[0]


def install_from_deb(deb: Path, env: dict, expected_sha256: str = SHA256) -> Path:
    """Extracts the font from ``deb``, checks it, installs it for the user; returns its path."""
    if shutil.which("dpkg-deb") is None:
        raise FontError("dpkg-deb is not available to unpack the package")
    with tempfile.TemporaryDirectory(prefix="aiayn-font-") as tmp:
        if subprocess.run(["dpkg-deb", "-x", str(deb), tmp], capture_output=True).returncode != 0:
            raise FontError(f"{deb} is not a readable .deb package")
        font = Path(tmp) / FONT_FILE
        if not font.is_file():
            raise FontError(f"{deb} holds no {FONT_FILE}")
        digest = hashlib.sha256(font.read_bytes()).hexdigest()
        if digest != expected_sha256:
            raise FontError(f"{FONT_FILE} in {deb.name} has sha256 {digest}, expected {expected_sha256}")
        target = user_font_dir(env) / Path(FONT_FILE).name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(font, target)
    if shutil.which("fc-cache"):  # Chromium finds fonts through fontconfig's cache
        subprocess.run(["fc-cache", "-f", str(target.parent)], capture_output=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deb", type=Path, help="a downloaded fonts-wqy-microhei .deb")
    args = parser.parse_args()
    try:
        with tempfile.TemporaryDirectory(prefix="aiayn-font-deb-") as folder:
            deb = args.deb or download_package(Path(folder))
            target = install_from_deb(deb, dict(os.environ))
    except FontError as e:
        print(f"setup: could not install the CJK font for this user: {e}", file=sys.stderr)
        return 1
    print(f"setup: installed the CJK font for this user: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
