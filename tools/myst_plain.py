"""MyST markdown (what the book's markdown cells are written in) to plain Markdown, which
Colab and any Jupyter renders: the block constructs. Inline roles and links: myst_inline.py.

    plain = to_markdown(source, page)      # page: a myst_inline.Page (where, glue, titles)

Block constructs, and what they become:
- ``tab-set`` of ``tab-item``s: every tab's content in sequence, each after its bold label;
- ``dropdown``, admonitions (``note``, ``important``, ``admonition`` with a title, ``:class:
  dropdown`` ones too): a quote whose first line is the title in bold (a dropdown's marked ▸);
- ``literalinclude``: the included source, as the book shows it (``:pyobject:``, ``:lines:``,
  ``:start-after:``, ``:end-before:``), in a fenced block;
- ``figure``/``image``: a Markdown image (the file from the repository) and its caption;
- ``csv-table``/``list-table``: a pipe table; ``math``: ``$$`` display math; ``code-block``: a fence;
- ``(label)=`` targets, ``%`` comments and ``+++`` cell breaks: dropped.
Any other directive raises ValueError naming it: a new construct needs a rule here.
"""

from __future__ import annotations

import csv
import re

from myst_inline import Page, convert_inline, file_url

OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>.*)$")
PLAIN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
DROPPED = re.compile(r"^[ \t]*(\([\w:.-]+\)=|%.*|\+\+\+.*)[ \t]*$")
ADMONITIONS = {  # Sphinx's titles in each language (the zh build runs with language zh_CN)
    "note": ("Note", "备注"), "tip": ("Tip", "小技巧"), "hint": ("Hint", "提示"),
    "important": ("Important", "重要"), "warning": ("Warning", "警告"), "caution": ("Caution", "小心"),
    "attention": ("Attention", "注意"), "danger": ("Danger", "危险"), "error": ("Error", "错误"),
    "seealso": ("See also", "参见"),
}
CODE_LANGUAGES = {".py": "python", ".yml": "yaml", ".yaml": "yaml", ".sh": "bash", ".json": "json"}


def _included(path, options: dict) -> str:
    """What the book's {literalinclude} shows of the file: Sphinx's own reader does it."""
    from types import SimpleNamespace

    from sphinx.directives.code import LiteralIncludeReader
    numbers = ("dedent", "lineno-start", "tab-width")
    options = {k: (int(v) if v else None) if k in numbers else v for k, v in options.items()}
    if not path.is_file():
        raise ValueError(f"literalinclude of {path}: no such file")
    return LiteralIncludeReader(str(path), options, SimpleNamespace(source_encoding="utf-8-sig")).read()[0]


def _closes(line: str, fence: str) -> bool:
    bare = line.strip()
    return len(bare) >= len(fence) and set(bare) == {fence[0]}


def _directive(lines: list[str], start: int) -> tuple[dict, int]:
    """The directive opening at lines[start]: name, argument, options, body; and the index
    after its closing fence."""
    m = OPEN.match(lines[start])
    fence, i, inner_fence = m["fence"], start + 1, None
    options = {}
    while i < len(lines) and OPTION.match(lines[i]):
        options[OPTION.match(lines[i])["key"]] = OPTION.match(lines[i])["value"].strip()
        i += 1
    body = []
    while i < len(lines):
        line = lines[i]
        if inner_fence is None and _closes(line, fence):
            break
        plain = PLAIN_FENCE.match(line)  # a code block or backtick directive inside: skip it whole
        if plain and inner_fence is None:
            inner_fence = plain.group(1)
        elif plain and _closes(line, inner_fence):
            inner_fence = None
        body.append(line)
        i += 1
    else:
        raise ValueError(f"the {{{m['name']}}} directive opened with {fence} is "
                         "never closed; a directive that holds others needs a longer fence than theirs")
    indent = len(m["indent"])
    body = [l[indent:] if l[:indent].strip() == "" else l for l in body]
    return dict(name=m["name"], arg=m["arg"].strip(), options=options, body=body), i + 1


def _quote(title: str, body: list[str]) -> list[str]:
    return [f"> **{title}**", ">"] + [f"> {l}".rstrip() for l in body]


def _table(header: list[str], rows: list[list[str]], page: Page) -> list[str]:
    width = max([len(header)] + [len(r) for r in rows])
    cell = lambda text: convert_inline(text.strip(), page).replace("|", r"\|").replace("\n", " ")
    line = lambda cells: "| " + " | ".join(cell(c) for c in cells + [""] * (width - len(cells))) + " |"
    return [line(header), "|" + "---|" * width] + [line(r) for r in rows]


def _csv_table(d: dict, page: Page) -> list[str]:
    rows = list(csv.reader([l for l in d["body"] if l.strip()], skipinitialspace=True))
    header = next(csv.reader([d["options"]["header"]], skipinitialspace=True)) if "header" in d["options"] else []
    n = int(d["options"].get("header-rows", 0))
    header, rows = (rows[n - 1], rows[n:]) if n else (header, rows)
    return _table(header, rows, page)


def _list_table(d: dict, page: Page) -> list[str]:
    rows: list[list[str]] = []
    for line in d["body"]:
        if re.match(r"^\*\s+-\s", line):
            rows.append([line.split("-", 1)[1]])
        elif re.match(r"^\s+-\s", line) and rows:
            rows[-1].append(line.split("-", 1)[1])
        elif line.strip() and rows:
            rows[-1][-1] += " " + line.strip()
    n = int(d["options"].get("header-rows", 0))
    header, body = (rows[0], rows[1:]) if n else ([""] * max(map(len, rows)), rows)
    return _table(header, body, page)


def _render(d: dict, page: Page) -> list[str]:
    name, arg, options, body = d["name"], d["arg"], d["options"], d["body"]
    lang = 1 if page.lang == "zh" else 0
    if name == "tab-set":
        return _blocks(body, page)
    if name == "tab-item":
        return [f"**{convert_inline(arg, page)}**", ""] + _blocks(body, page) + [""]
    if name == "dropdown":
        return _quote("▸ " + convert_inline(arg, page), _blocks(body, page))
    if name in ADMONITIONS or name == "admonition":
        title = convert_inline(arg, page) if arg else ADMONITIONS[name][lang]
        if name in ADMONITIONS and arg:  # `{note} Text`: the argument is the first line of the body
            title, body = ADMONITIONS[name][lang], [arg, ""] + body
        return _quote(title, _blocks(body, page))
    if name in ("figure", "image"):
        caption = " ".join(l.strip() for l in body if l.strip())
        alt = options.get("alt", caption or arg)
        image = f"![{alt}]({file_url(arg, page, raw=True)})"
        return [image] + (["", f"*{convert_inline(caption, page)}*"] if caption else [])
    if name == "csv-table":
        return _csv_table(d, page)
    if name == "list-table":
        return _list_table(d, page)
    if name == "math":
        return ["$$"] + body + ["$$"]
    if name in ("code-block", "code", "sourcecode"):
        return [f"```{arg}"] + body + ["```"]
    if name == "literalinclude":
        path = page.resolve(arg)
        code = _included(path, options)
        language = options.get("language", CODE_LANGUAGES.get(path.suffix, ""))
        return [f"```{language}"] + code.rstrip("\n").splitlines() + ["```"]
    raise ValueError(f"{page.where}: no plain-Markdown rule for the {{{name}}} directive "
                     "(add one to tools/myst_plain.py)")


def _blocks(lines: list[str], page: Page) -> list[str]:
    """Directives rendered, code blocks verbatim, prose converted a paragraph at a time (a link
    or role may wrap onto the next line)."""
    out, prose, i, fence = [], [], 0, None

    def flush():
        if prose:
            text = convert_inline("\n".join(prose), page)
            out.extend(re.sub(r"^(\s*\$\$)\s*\([\w:.-]+\)\s*$", r"\1", l) for l in text.split("\n"))
            prose.clear()

    while i < len(lines):
        line = lines[i]
        if fence is not None:  # inside a plain code block: verbatim
            out.append(line)
            fence = None if _closes(line, fence) else fence
        elif OPEN.match(line):
            flush()
            try:
                directive, i = _directive(lines, i)
            except ValueError as error:
                raise ValueError(f"{page.where}: {error}") from None
            out += _render(directive, page)
            continue
        elif PLAIN_FENCE.match(line):
            flush()
            fence = PLAIN_FENCE.match(line).group(1)
            out.append(line)
        elif not line.strip():
            flush()
            out.append(line)
        elif not DROPPED.match(line):
            prose.append(line)
        i += 1
    flush()
    return out


def to_markdown(source: str, page: Page) -> str:
    """A markdown cell's MyST source as plain Markdown."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(_blocks(source.splitlines(), page))).strip("\n")
