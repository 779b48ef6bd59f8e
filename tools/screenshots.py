"""Refresh the README's screenshots: one chapter in each language, as the browser shows it.

    python tools/screenshots.py                    # builds the book into a temporary folder
    python tools/screenshots.py --html _build/html # or uses an existing build

writes docs/screenshots/attention-en.png and attention-zh.png: the top of the chapter
"scaled dot-product attention" (1280x800, math typeset), taken by headless Chromium
(tools/browser.py) from the book served on 127.0.0.1, with every other host blocked.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import browser

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "scaled_dot_product_attention"
TARGET = ROOT / "docs" / "screenshots"


def take(html: Path) -> list[Path]:
    written = []
    with browser.serve(html) as site, browser.chromium() as context:
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(site) else r.abort())
        page = context.new_page()
        for lang in ("en", "zh"):
            response = page.goto(f"{site}{lang}/chapters/{lang}/{CHAPTER}.html")
            if response is None or response.status != 200:
                sys.exit(f"{lang}: the chapter page did not load ({response and response.status})")
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            target = TARGET / f"attention-{lang}.png"
            page.screenshot(path=str(target))
            written.append(target)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="an existing build's html folder (default: build one)")
    args = parser.parse_args()
    TARGET.mkdir(parents=True, exist_ok=True)
    if args.html:
        written = take(args.html.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="aiayn-book-") as out:
            subprocess.run([sys.executable, str(ROOT / "tools" / "build_book.py"), out], check=True)
            written = take(Path(out) / "html")
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
