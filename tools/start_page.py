"""The reading order where readers run the book: chapters/start_here.ipynb.

JupyterLab's file browser (and a folder of notebooks on Colab or on disk) lists the chapters
alphabetically: architecture_overview, attention_in_the_model, backpropagation, ... A reader
there cannot see the order the book reads in. `bash tools/lab.sh` opens this page first: the
parts of the book and their chapters as links, in the tables of contents' order, in English and
in Chinese. jupyterlab-myst renders it; a link opens the chapter's notebook.

    .venv/bin/python tools/start_page.py           # rewrite chapters/start_here.ipynb from the tocs
    .venv/bin/python tools/start_page.py --check   # exit 1 when the committed page is stale

The page is generated, never edited by hand: titles are the chapters' own `# ` headings, the
parts and their order the tocs' (tests/test_start_page.py keeps it in step with them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "chapters" / "start_here.ipynb"
TOCS = {"en": ROOT / "_toc.yml", "zh": ROOT / "_toc.zh.yml"}
HEADINGS = {
    "en": ("Start here", "The chapters in the book's reading order. Each link opens the chapter's "
                         "notebook; run its cells from the top (Shift+Enter)."),
    "zh": ("从这里开始", "各章按本书的阅读顺序排列。点击链接打开该章的 notebook，从上到下依次运行其中的单元格"
                      "（Shift+Enter）。"),
}


def title(path: Path) -> str:
    """The first `# ` heading of a chapter (a notebook's markdown or a .md page)."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf8")
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path}: no '# ' title")


def chapter_file(doc: str) -> Path:
    """chapters/en/x -> the notebook, or the .md page when there is no notebook."""
    base = ROOT / doc
    return base.with_suffix(".ipynb") if base.with_suffix(".ipynb").exists() else base.with_suffix(".md")


def section(lang: str) -> str:
    toc = yaml.safe_load(TOCS[lang].read_text(encoding="utf8"))
    heading, intro = HEADINGS[lang]
    lines = [f"## {heading}", "", intro, ""]
    root = chapter_file(toc["root"])
    lines += [f"- [{title(root)}]({root.relative_to(PAGE.parent).as_posix()})", ""]
    number = 0
    for part in toc.get("parts", []):
        lines += [f"**{part['caption']}**", ""]
        for chapter in part.get("chapters", []):
            number += 1
            path = chapter_file(chapter["file"])
            lines.append(f"{number}. [{title(path)}]({path.relative_to(PAGE.parent).as_posix()})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def notebook() -> dict:
    head = ("# Attention Is All You Need · 从零实现 Transformer\n\n"
            "English first, then 中文 below.")
    cells = [head, section("en"), section("zh")]
    return {
        "cells": [{"cell_type": "markdown", "id": f"start-{i}", "metadata": {},
                   "source": text.splitlines(keepends=True)} for i, text in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def render() -> str:
    return json.dumps(notebook(), ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed page is stale")
    args = parser.parse_args()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf8") != render():
            print(f"{PAGE.relative_to(ROOT)} is stale: run .venv/bin/python tools/start_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(render(), encoding="utf8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
