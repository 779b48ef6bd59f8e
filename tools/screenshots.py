"""Refresh the screenshots of the README and of the page "Running the book", 1280x800 each.

    python tools/screenshots.py                     # builds the book into a temporary folder
    python tools/screenshots.py --html _build/html  # or uses an existing build
    python tools/screenshots.py --only lab          # only JupyterLab's (no build needed)

writes into docs/screenshots/, for each language:
- attention-<lang>.png: the top of the chapter "scaled dot-product attention" in the book
  (math typeset), served on 127.0.0.1 with every other host blocked;
- launch-<lang>.png: the same page with its launch menu open (Binder, Colab);
- jupyterlab-<lang>.png: the same chapter in `bash tools/lab.sh`'s JupyterLab (jupyterlab-myst),
  scrolled to its first NumPy/PyTorch tab set (tools/lab_session.py);
- explorer-<name>-<lang>.png: an explorer of the book (aiayn.explorers) after a reader moved its
  controls: the positional encoding's (pair 4, offset 10) and the masks' (2 source words, 5
  target tokens), network blocked as for the others.
Headless Chromium (tools/browser.py) takes them all.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import browser
import lab_session

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "scaled_dot_product_attention"
TARGET = ROOT / "docs" / "screenshots"
LANGS = ("en", "zh")
VIEWPORT = (1280, 800)


def take_book(html: Path) -> list[Path]:
    written = []
    with browser.serve(html) as site, browser.chromium(VIEWPORT) as context:
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(site) else r.abort())
        page = context.new_page()
        for lang in LANGS:
            response = page.goto(f"{site}{lang}/chapters/{lang}/{CHAPTER}.html")
            if response is None or response.status != 200:
                sys.exit(f"{lang}: the chapter page did not load ({response and response.status})")
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            written.append(TARGET / f"attention-{lang}.png")
            page.screenshot(path=str(written[-1]))
            page.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
            page.locator(".dropdown-launch-buttons a.dropdown-item").first.wait_for(state="visible")
            written.append(TARGET / f"launch-{lang}.png")
            page.screenshot(path=str(written[-1]))
    return written


# name -> (chapter, {control: value}) of the explorers' screenshots
EXPLORERS = {"positional": ("positional_encoding", {"pair": 4, "k": 10}),
             "masks": ("attention_in_the_model", {"source_real": 2, "target_real": 5})}
READY_JS = """() => [...document.querySelectorAll('.aiayn-explorer')].every(
    e => e.dataset.ready === 'true' || e.dataset.error)"""


def take_explorers(html: Path) -> list[Path]:
    written = []
    with browser.serve(html) as site, browser.chromium(VIEWPORT) as context:
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(site) else r.abort())
        page = context.new_page()
        for name, (chapter, controls) in EXPLORERS.items():
            for lang in LANGS:
                page.goto(f"{site}{lang}/chapters/{lang}/{chapter}.html")
                page.wait_for_function(READY_JS, timeout=30_000)
                box = page.locator(".aiayn-explorer").first
                if box.get_attribute("data-error"):
                    sys.exit(f"{lang}/{chapter}: the explorer failed: {box.get_attribute('data-error')}")
                for control, value in controls.items():
                    box.locator(f"[name='{control}']").first.fill(str(value))
                page.evaluate("document.activeElement && document.activeElement.blur()")
                box.evaluate("e => { e.scrollIntoView({block: 'start'}); window.scrollBy(0, -70); }")
                page.wait_for_timeout(300)  # let Vega and the scrolled page paint
                written.append(TARGET / f"explorer-{name}-{lang}.png")
                page.screenshot(path=str(written[-1]))
    return written


def take_lab(notebook_dir: Path | None = None) -> list[Path]:
    written = []
    with lab_session.jupyterlab(notebook_dir) as lab, browser.chromium(VIEWPORT) as context:
        page = context.new_page()
        for lang in LANGS:
            counts = lab_session.open_notebook(page, lab, f"chapters/{lang}/{CHAPTER}.ipynb")
            if counts["myst"] != counts["expected"]:
                sys.exit(f"{lang}: jupyterlab-myst rendered {counts['myst']} of {counts['expected']} markdown cells")
            tabs = page.locator(".myst-tab-set").first
            tabs.evaluate("e => e.closest('.jp-MarkdownCell').scrollIntoView({block: 'start'})")
            page.wait_for_timeout(500)  # let the scrolled cells paint
            written.append(TARGET / f"jupyterlab-{lang}.png")
            page.screenshot(path=str(written[-1]))
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="an existing build's html folder (default: build one)")
    parser.add_argument("--only", choices=("book", "lab", "explorers"),
                        help="only the book's (explorers included), only JupyterLab's, or only the explorers'")
    parser.add_argument("--lab-dir", type=Path, help="serve this copy of the checkout in JupyterLab instead")
    args = parser.parse_args()
    TARGET.mkdir(parents=True, exist_ok=True)
    written = []
    def book(html: Path) -> list[Path]:
        return (take_book(html) if args.only != "explorers" else []) + take_explorers(html)

    if args.only != "lab":
        if args.html:
            written += book(args.html.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="aiayn-book-") as out:
                subprocess.run([sys.executable, str(ROOT / "tools" / "build_book.py"), out], check=True)
                written += book(Path(out) / "html")
    if args.only not in ("book", "explorers"):
        written += take_lab(args.lab_dir.resolve() if args.lab_dir else None)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
