"""The Colab set-up cell that starts every chapter notebook: its text, and putting it there.

    .venv/bin/python tools/colab_cell.py           # insert or refresh it in every chapter notebook
    .venv/bin/python tools/colab_cell.py --check   # exit 1 if any notebook lacks it or differs

The cell is built from _config.yml's repository URL and branch (the book's launch buttons open
the same ones), so Colab installs the course from the branch the book was built from. It is the
first code cell, tagged ``remove-cell`` (the book does not show it; a notebook opened on Colab
does) and collapsed in JupyterLab (``metadata.jupyter.source_hidden``, as tools/lab_view.py
collapses every hidden cell), and it outputs nothing outside Colab, so the notebook's committed outputs stay valid:
when the cell is inserted, the other cells' execution counts move up by one, as a fresh run
would number them. The notebook's language is recorded in ``metadata.aiayn.lang``; on Colab,
``aiayn.colab`` reads it to label plots in that language.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
CELL_ID = "colab-setup"
TAG = "remove-cell"
CLONE = "/content/attention-is-all-you-need"


def cell_source(config_path: Path = ROOT / "_config.yml") -> str:
    repository = yaml.safe_load(config_path.read_text(encoding="utf8"))["repository"]
    url, branch = repository["url"], repository["branch"]
    return f'''# Google Colab only (anywhere else this cell does nothing): get the course at the branch this
# book was built from, then install what Colab lacks, a CJK font and the data (code/aiayn/colab.py).
import sys
if "google.colab" in sys.modules:
    import os, subprocess
    repo = "{CLONE}"
    if not os.path.isdir(repo):
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "{branch}",
                        "{url}", repo], check=True)
    sys.path.insert(0, repo + "/code")
    from aiayn.colab import set_up
    print(set_up(repo))'''


def notebooks() -> list[Path]:
    """The chapters, chapters/<lang>/<name>.ipynb (not chapters/start_here.ipynb, a list of links)."""
    return sorted(p for p in CHAPTERS.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def language_of(path: Path) -> str:
    return path.parent.name  # chapters/<lang>/<name>.ipynb


def apply(nb, source: str, lang: str) -> bool:
    """Puts the cell first (or refreshes it) and the language into the metadata; True if
    anything changed."""
    changed = nb.metadata.get("aiayn", {}).get("lang") != lang
    nb.metadata.setdefault("aiayn", {})["lang"] = lang
    first = nb.cells[0] if nb.cells else None
    if first is not None and first.get("id") == CELL_ID:
        if first.source != source or first.metadata.get("tags") != [TAG] or \
                first.metadata.get("jupyter", {}).get("source_hidden") is not True:
            first.source, first.metadata["tags"] = source, [TAG]
            first.metadata.setdefault("jupyter", {})["source_hidden"] = True
            changed = True
        return changed
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    executed = bool(counts) and None not in counts
    for cell in nb.cells:
        if cell.cell_type == "code" and executed:
            cell.execution_count += 1
    cell = nbformat.v4.new_code_cell(source, id=CELL_ID,
                                     metadata={"tags": [TAG], "jupyter": {"source_hidden": True}},
                                     execution_count=1 if executed else None)
    nb.cells.insert(0, cell)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report, change nothing")
    parser.add_argument("paths", nargs="*", type=Path, help="these notebooks only (default: every chapter)")
    args = parser.parse_args()
    source, stale = cell_source(), []
    for path in [p.resolve() for p in args.paths] or notebooks():
        nb = nbformat.read(path, as_version=4)
        if apply(nb, source, language_of(path)):
            stale.append(path.relative_to(ROOT).as_posix())
            if not args.check:
                nbformat.write(nb, path)
    verb = "would change" if args.check else "changed"
    print(f"{verb} {len(stale)} notebook(s)" + (": " + ", ".join(stale) if stale else ""))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
