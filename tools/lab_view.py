"""What a chapter notebook shows when it is opened in JupyterLab (``bash tools/lab.sh``).

    .venv/bin/python tools/lab_view.py --write [NOTEBOOK ...]   # default: every chapter notebook
    .venv/bin/python tools/lab_view.py --check [NOTEBOOK ...]   # exit 1 if any would change

1. A code cell the book hides (tags ``remove-cell``, ``remove-input``, ``hide-input``,
   ``hide-cell``: the Colab set-up, hidden checks, figure code) opens collapsed: its
   ``metadata.jupyter.source_hidden`` is true, so JupyterLab shows its first line and "•••".
   Its outputs stay visible: a check that passes prints nothing, one that fails shows why.
   A visible cell loses a stale ``source_hidden``.
2. jupyterlab-myst cannot fill in ``{glue}`` roles (it shows the key's name), so an appendix page
   (a toc part whose caption says appendix, lab notebook, 附录 or 实验记录) whose markdown keeps
   them gets a first note, after the Colab set-up cell, linking its rendered page in the
   published book. Lessons have no glue roles (tests/test_learner_form.py). The note is tagged ``remove-cell``: the book does
   not show it; tools/export_colab.py drops it (the export fills the values in).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
NOTE_ID = "lab-note"
GLUE_ROLE = re.compile(r"\{glue(?::\w*)?\}`")
APPENDIX = re.compile(r"appendix|lab notebook|附录|实验记录", re.I)  # as tests/test_learner_form.py
NOTE = {
    "en": "> **In JupyterLab** this page shows the names of numbers its cells compute, not the "
          "numbers: read it with them filled in at [the published book]({url}).",
    "zh": "> **在 JupyterLab 中**，本页正文里由单元格算出的数值只显示其名称；数值已填好的版本见"
          "[在线版]({url})。",
}


def is_hidden(cell) -> bool:
    return bool(HIDDEN_TAGS & set(cell.get("metadata", {}).get("tags", [])))


def collapse_hidden_cells(nb) -> bool:
    """Step 1; True if a cell changed."""
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        jupyter = cell.metadata.get("jupyter", {})
        if is_hidden(cell) and jupyter.get("source_hidden") is not True:
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
            changed = True
        elif not is_hidden(cell) and "source_hidden" in jupyter:
            del cell.metadata["jupyter"]["source_hidden"]
            if not cell.metadata["jupyter"]:
                del cell.metadata["jupyter"]
            changed = True
    return changed


def uses_glue_roles(nb) -> bool:
    return any(c.cell_type == "markdown" and c.get("id") != NOTE_ID and GLUE_ROLE.search(c.source)
               for c in nb.cells)


def note_source(config: dict, lang: str, name: str) -> str:
    import published  # tools/published.py (PyYAML), imported here: execute_notebooks.py, which
    # runs on the GPU machine too, imports this module for collapse_hidden_cells only
    return NOTE[lang].format(url=published.page_url(config, lang, name))


def place_note(nb, source: str | None) -> bool:
    """Step 2: the note present with `source`, or absent when `source` is None; True if changed."""
    where = [i for i, c in enumerate(nb.cells) if c.get("id") == NOTE_ID]
    if source is None:
        for i in reversed(where):
            del nb.cells[i]
        return bool(where)
    if where:
        cell = nb.cells[where[0]]
        if cell.source == source and cell.metadata.get("tags") == ["remove-cell"]:
            return False
        cell.source, cell.metadata["tags"] = source, ["remove-cell"]
        return True
    after_setup = 1 if nb.cells and nb.cells[0].get("id") == "colab-setup" else 0
    nb.cells.insert(after_setup, nbformat.v4.new_markdown_cell(
        source, id=NOTE_ID, metadata={"tags": ["remove-cell"]}))
    return True


def appendix_pages(lang: str) -> set[str]:
    """The pages of the language's toc parts that are appendices."""
    import yaml

    toc = yaml.safe_load((ROOT / ("_toc.yml" if lang == "en" else f"_toc.{lang}.yml")).read_text(encoding="utf8"))
    return {Path(entry["file"]).name for part in toc.get("parts", []) if APPENDIX.search(part.get("caption", ""))
            for entry in part.get("chapters", []) + [s for c in part.get("chapters", []) for s in c.get("sections", [])]}


def apply(nb, path: Path, config: dict) -> bool:
    """Both steps on a notebook at chapters/<lang>/<name>.ipynb; True if anything changed."""
    lang, name = path.parent.name, path.stem
    in_appendix = name in appendix_pages(lang) if lang in ("en", "zh") else False
    note = note_source(config, lang, name) if in_appendix and uses_glue_roles(nb) else None
    changed = collapse_hidden_cells(nb)
    return place_note(nb, note) or changed


def notebooks() -> list[Path]:
    return sorted(p for p in (ROOT / "chapters").glob("*/*.ipynb"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="change the notebooks")
    mode.add_argument("--check", action="store_true", help="report, change nothing; exit 1 if stale")
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every chapter)")
    args = parser.parse_args()
    import published

    config, stale = published.book_config(), []
    for path in [p.resolve() for p in args.paths] or notebooks():
        if path.suffix != ".ipynb" or not path.is_file():
            print(f"lab_view: {path} is not a notebook file; give chapters/<lang>/<name>.ipynb",
                  file=sys.stderr)
            return 2
        nb = nbformat.read(path, as_version=4)
        if apply(nb, path, config):
            stale.append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))
            if args.write:
                nbformat.write(nb, path)
    verb = "changed" if args.write else "would change"
    print(f"{verb} {len(stale)} notebook(s)" + (": " + ", ".join(stale) if stale else ""))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
