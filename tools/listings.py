"""Library source shown in a chapter, copied into the page and kept equal to the library.

    .venv/bin/python tools/listings.py --write chapters/en/positional_encoding.ipynb ...
    .venv/bin/python tools/listings.py --check            # every chapter; exit 1 on a stale listing

A chapter shows library code in a plain fenced block whose first line names what it holds:

    ```python
    # aiayn/np/attention.py: masked_softmax
    ...
    ```

The block renders the same in the book, in JupyterLab (jupyterlab-myst) and on Colab, which a
``{literalinclude}`` does not: it needs the file, and only Sphinx reads files. This tool fills
the body from the header, and tests/test_listings.py fails when a listing and the library
drift apart. Headers, after ``# ``:

    aiayn/np/attention.py                                 the whole file
    exercises/solutions/positional_encoding/shift_matrix.py    (paths outside aiayn: from the root)
    aiayn/np/attention.py: masked_softmax                 one function or class
    aiayn/np/attention.py: MultiHeadAttention.forward     one method
    aiayn/np/attention.py: MultiHeadAttention (__init__, forward)
                                                          a class: its first line, its docstring
                                                          and the methods named (no backward
                                                          before the chapter that teaches it)
    ..., without argument checks                          statements that only call the
                                                          library's check_* validators left out

``aiayn/...`` is read from ``code/aiayn/...``. A fenced ``python`` block whose first line is not
such a header is not a listing and is left alone.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = re.compile(
    r"^# (?P<path>(?:aiayn|exercises)/[\w/.-]+\.py)"
    r"(?:: (?P<name>[A-Za-z_][\w.]*)(?: \((?P<methods>[\w, ]+)\))?)?"
    r"(?P<nochecks>, without argument checks)?$")
# A fenced python block (backticks, three or more) anywhere in a markdown cell, indented or not.
BLOCK = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})python[ \t]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                   re.M | re.S)


class ListingError(ValueError):
    pass


def source_file(path: str) -> Path:
    return ROOT / "code" / path if path.startswith("aiayn/") else ROOT / path


def _node_lines(node: ast.AST) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno


def _find(body: list[ast.stmt], name: str, where: str) -> ast.AST:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
    raise ListingError(f"{where} defines no {name!r}")


def _is_check(stmt: ast.stmt) -> bool:
    """A statement whose only work is calling a check_* validator (possibly under an `if`)."""
    def is_check_call(value):
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id.startswith("check_"))
    if isinstance(stmt, ast.Expr) or isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return is_check_call(stmt.value)
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
        # A block whose body only checks (an `if`, or a loop over the arguments) goes whole:
        # leaving it would leave a header with an empty body.
        return not getattr(stmt, "orelse", None) and all(_is_check(s) for s in stmt.body)
    return False


def _check_lines(node: ast.AST) -> set[int]:
    """1-based line numbers of the check statements inside ``node``. A check goes only from a
    block that keeps another statement: emptying a block would leave a header without a body."""
    out = set()
    for child in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(child, field, None)
            if not (isinstance(block, list) and block and all(isinstance(s, ast.stmt) for s in block)):
                continue
            checks = [s for s in block if _is_check(s)]
            if len(checks) < len(block):
                for stmt in checks:
                    out.update(range(stmt.lineno, stmt.end_lineno + 1))
    return out


def _dedent(lines: list[str]) -> list[str]:
    width = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    return [l[width:] if l.strip() else "" for l in lines]


def listing(header: str) -> str:
    """The body (without the header line) that the header names."""
    m = HEADER.match(header)
    if not m:
        raise ListingError(f"not a listing header: {header!r}")
    path = source_file(m["path"])
    if not path.is_file():
        raise ListingError(f"{m['path']}: no such file ({path})")
    text = path.read_text(encoding="utf8")
    lines = text.splitlines()
    if not m["name"]:
        return text.rstrip("\n")
    tree = ast.parse(text)
    parts = m["name"].split(".")
    node = _find(tree.body, parts[0], m["path"])
    for part in parts[1:]:
        node = _find(node.body, part, f"{m['path']}: {node.name}")
    if m["methods"]:
        if not isinstance(node, ast.ClassDef):
            raise ListingError(f"{header}: methods can only be chosen from a class")
        first = node.body[0]
        has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
            and isinstance(first.value.value, str)
        head_end = first.end_lineno if has_doc else first.lineno - 1
        pieces = [(_node_lines(node)[0], head_end)]
        for name in (n.strip() for n in m["methods"].split(",")):
            pieces.append(_node_lines(_find(node.body, name, f"{m['path']}: {node.name}")))
    else:
        pieces = [_node_lines(node)]
    skip = _check_lines(node) if m["nochecks"] else set()
    out: list[str] = []
    for i, (start, end) in enumerate(pieces):
        chunk = [lines[n - 1] for n in range(start, end + 1) if n not in skip]
        if i > 1 or (i == 1 and out):
            out.append("")
        out.extend(chunk)
    return "\n".join(_dedent(out)).rstrip("\n")


def refresh(markdown: str) -> str:
    """``markdown`` with every listing block's body made equal to what its header names."""
    def fill(block: re.Match) -> str:
        first, _, _ = block["body"].partition("\n")
        if not HEADER.match(first.strip()):
            return block.group(0)
        indent = block["indent"]
        body = "\n".join(indent + l if l else "" for l in [first.strip(), *listing(first.strip()).splitlines()])
        return f"{indent}{block['fence']}python\n{body}\n{indent}{block['fence']}"
    return BLOCK.sub(fill, markdown)


def headers(markdown: str) -> list[str]:
    return [b["body"].partition("\n")[0].strip() for b in BLOCK.finditer(markdown)
            if HEADER.match(b["body"].partition("\n")[0].strip())]


def _cells(path: Path):
    """(nb or None, list of markdown sources) of a notebook or a MyST .md file."""
    import nbformat
    if path.suffix == ".md":
        return None, [path.read_text(encoding="utf8")]
    nb = nbformat.read(path, as_version=4)
    return nb, [c.source for c in nb.cells if c.cell_type == "markdown"]


def process(path: Path, write: bool) -> list[str]:
    """Stale listings of one page (their headers); with ``write``, refreshed in place."""
    import nbformat
    nb, sources = _cells(path)
    stale = [h for src in sources for h in headers(src) if h not in _fresh_headers(src)]
    if write and stale:
        if nb is None:
            path.write_text(refresh(path.read_text(encoding="utf8")), encoding="utf8")
        else:
            for cell in nb.cells:
                if cell.cell_type == "markdown":
                    cell.source = refresh(cell.source)
            nbformat.write(nb, path)
    return stale


def _fresh_headers(markdown: str) -> set[str]:
    fresh = set()
    for b in BLOCK.finditer(markdown):
        first, _, rest = b["body"].partition("\n")
        h = first.strip()
        if HEADER.match(h):
            got = "\n".join(l[len(b["indent"]):] if l.startswith(b["indent"]) else l for l in rest.rstrip("\n").splitlines())
            if got == listing(h):
                fresh.add(h)
    return fresh


def pages() -> list[Path]:
    return sorted(p for p in (ROOT / "chapters").glob("*/*") if p.suffix in (".ipynb", ".md"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="refresh stale listings in place")
    mode.add_argument("--check", action="store_true", help="exit 1 if a listing is stale")
    parser.add_argument("paths", nargs="*", type=Path, help="pages (default: every chapter page)")
    args = parser.parse_args(argv)
    bad = 0
    for path in args.paths or pages():
        try:
            stale = process(path, write=args.write)
        except ListingError as e:
            print(f"{path}: {e}", file=sys.stderr)
            bad += 1
            continue
        for h in stale:
            print(f"{path}: {'refreshed' if args.write else 'stale'}: {h}")
        bad += bool(stale) and not args.write
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
