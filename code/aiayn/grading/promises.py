"""What a stub promises, read from its docstrings, and which check keeps each promise.

A stub's function or class states its contract in a section of its docstring:

    Promises (the grader checks each one):
      - mask: True = "may attend"; every weight of a blocked key is exactly 0.
      - all-masked: a row whose keys are ALL blocked is all zeros, not NaN.

one bullet per promise, ``- <key>: <text>``, the key in lower case with hyphens, the text
going on over lines indented under it; a blank line ends the section. The grader of the stub's
exercise names, for every promise, the check(s) that keep it (``Exercise.keeps``), and a
failing check quotes the promises it keeps under its hint. ``tests/test_exercises.py`` fails
when a stated promise has no check, when a row names a promise no docstring states, and when
a contract word (``CONTRACT_WORDS``) is written outside a Promises section, where no check
would notice it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .language import current_language

HEADER = re.compile(r"^(?P<indent>\s*)Promises\b[^\n]*:\s*$")
BULLET = re.compile(r"^(?P<indent>\s*)- (?P<key>[a-z][a-z0-9-]*): (?P<text>\S.*)$")
# Words that state a contract: outside a Promises section they would promise unchecked.
CONTRACT_WORDS = re.compile(r"\b(must|never|exactly|do not|don't|in place|NaN|keep|stay|"
                            r"unchanged|modify)\b", re.IGNORECASE)
_cache: dict[Path, tuple[float, dict]] = {}


def owners(source: str):
    """(name, docstring) of the module ("module"), and of every top-level function and
    class and every method of a class, that has a docstring."""
    tree = ast.parse(source)
    found = [("module", ast.get_docstring(tree))]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.append((node.name, ast.get_docstring(node)))
        if isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{m.name}", ast.get_docstring(m)) for m in node.body
                      if isinstance(m, ast.FunctionDef)]
    return [(name, doc) for name, doc in found if doc]


def split(doc: str) -> tuple[dict[str, str], str]:
    """({key: text} of the docstring's Promises section, the docstring's other lines). A line
    of the section that is neither a bullet nor indented under one is a ValueError."""
    promises, rest, lines = {}, [], doc.splitlines()
    i = 0
    while i < len(lines):
        header = HEADER.match(lines[i])
        if not header:
            rest.append(lines[i])
            i += 1
            continue
        if promises:
            raise ValueError("two Promises sections in one docstring")
        i += 1
        key, indent = None, None
        while i < len(lines) and lines[i].strip():
            bullet = BULLET.match(lines[i])
            if bullet and (indent is None or len(bullet["indent"]) == indent):
                key, indent = bullet["key"], len(bullet["indent"])
                if key in promises:
                    raise ValueError(f"promise {key!r} stated twice")
                promises[key] = bullet["text"].strip()
            elif key is not None and len(lines[i]) - len(lines[i].lstrip()) > indent:
                promises[key] += " " + lines[i].strip()
            else:
                raise ValueError(f"not a promise ('- <key>: <text>'): {lines[i].strip()!r}")
            i += 1
        if not promises:
            raise ValueError("a Promises section without a promise")
    return promises, "\n".join(rest)


def read(path: Path) -> dict[str, str]:
    """{"<owner>: <key>": text} of every promise in the file at ``path`` (cached by mtime)."""
    path = Path(path)
    mtime = path.stat().st_mtime
    if path not in _cache or _cache[path][0] != mtime:
        found = {}
        for owner, doc in owners(path.read_text(encoding="utf8")):
            for key, text in split(doc)[0].items():
                found[f"{owner}: {key}"] = text
        _cache[path] = (mtime, found)
    return _cache[path][1]


def unchecked_words(path: Path) -> list[str]:
    """"<owner>: ...<word>..." for every contract word outside a Promises section."""
    found = []
    for owner, doc in owners(Path(path).read_text(encoding="utf8")):
        for line in split(doc)[1].splitlines():
            if line.strip().startswith("Check your work:"):
                continue
            found += [f"{owner}: ...{line.strip()}... ({m.group(0)!r})"
                      for m in CONTRACT_WORDS.finditer(line)]
    return found


def coverage(exercises, stub: Path) -> dict[str, list[str]]:
    """How the tables of ``exercises`` (all those of one file) cover the stub's promises:
    "unchecked" (stated, no row), "stale" (a row, not stated), "unknown checks" (a row naming
    a check its exercise does not have)."""
    stated = read(stub)
    rows = {promise: (ex, names) for ex in exercises for promise, names in ex.promises.items()}
    unknown = [f"{ex.id}: {promise} -> {name!r}" for promise, (ex, names) in rows.items()
               for name in names if name not in {c.name for c in ex.checks}]
    return {"unchecked": sorted(stated.keys() - rows.keys()),
            "stale": sorted(rows.keys() - stated.keys()), "unknown checks": unknown}


def kept_by(exercise, check_name: str, stub: Path) -> list[str]:
    """The lines naming the promises the check ``check_name`` keeps, for a failure report: the
    first after "promise:", the others under it. In Chinese, a label line says where they come
    from, and each promise, quoted in the stub's English, is a line of its own under it."""
    if not exercise.promises or stub is None:
        return []
    try:
        stated = read(stub)
    except (OSError, SyntaxError, ValueError):  # no stub to quote, or one being edited
        return []
    kept = [f"{promise.replace(': ', ' - ', 1)}: {stated[promise]}"
            for promise, names in exercise.promises.items()
            if check_name in names and promise in stated]
    if kept and current_language() == "zh":
        return ["约定：    待补全文件的文档字符串中的原文（英文）：",
                *(" " * 10 + line for line in kept)]
    return [f"{'promise:' if i == 0 else '':<10}{line}" for i, line in enumerate(kept)]
