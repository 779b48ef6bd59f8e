"""One Chinese vocabulary and one typography on every Chinese page (issue 42).

Over every page of _toc.zh.yml (the markdown cells of a notebook, or a .md page), in prose only,
this test fails on:

- **a variant to avoid**: a phrase of the "avoid" column of terminology.csv. Entries are
  separated by "; ". ``笔记本 (except 笔记本电脑)`` lets the variant stand where it is part of a
  longer phrase that is fine; ``<Name>`` stands for a Latin surname (``<Name> 等`` is "Vaswani 等",
  where the book writes 等人) and ``<chapter title>`` for the title of any Chinese page (a chapter
  is named “标题”一章 or linked, never 《标题》). A space in a phrase matches one space or none.
  Blockquotes are exempt: they quote the paper in English;
- **ASCII quotes around Chinese**: ``"中文"`` where “中文” belongs;
- **a space between bold and Chinese**: ``中文 **粗体** 中文`` (the spaces show on the page). A space
  is only a fault where removing it keeps the bold: the character inside the ``**`` is a Han
  character and the one outside the space is Han or full-width punctuation. CommonMark does not
  close ``**目标：**约`` (punctuation inside, a letter outside), so there the space stays
  (``**目标：** 约``) or, better, the punctuation moves out (``**目标**：约``);
- **bold that does not render**: ``**`` left as text, e.g. ``** 粗体**`` or ``**目标：**约``;
- **italics over Chinese**: ``*中文*`` or ``_中文_`` (CJK fonts have no italic; the browser slants);
- **a percent sign with a space or in full width**: ``5 %``, ``5％``; and a percentage typeset as
  math, ``$2\\%$``: write ``5%``;
- **a paper quote without its gloss**: a blockquote with no Han character (the paper's English)
  must be followed, as the next block, by a paragraph starting ``大意：`` (in the next markdown
  cell when the quote ends its cell);
- **a gloss in the first person**: a ``大意：`` paragraph speaks of the paper as 作者/论文, never
  我们 (the authors are not the book);
- **a hard line break inside a Chinese paragraph** (issue 55): a newline between two CJK
  characters, or next to full-width punctuation, renders as a stray space in Chromium; one
  paragraph is one line (a newline between a Chinese character and a Latin word or a formula
  reads as the space that belongs there, and is left alone);
- **a single attribution dash**: ``— §3.2`` (or ``— Abstract``) where the book writes ``—— §3.2``;
- **punctuation inside a bold run-in head**: ``**批次大小。**`` where the book writes
  ``**批次大小**。``; the opening lines (``**目标：**``, ``**阅读时间：**``, ``**前置：**``) are the
  exception;
- **a thousands separator that is a space**: ``10 000`` where the book writes ``10,000``;
- **百万 for a large number**: ``两百万``, ``{x} 百万`` where the book counts in 万 (``209 万``);
- **a space after full-width punctuation** (issue 55/57): ``**顺序无关**。 把``: 。，、：；！？ carry
  their own spacing, so an ASCII space after them shows as a gap. The opening lines keep theirs
  (``**目标：** 学会``: the space is outside the bold, which CommonMark needs);
- **Chinese against a Latin letter**: ``用自己的KV 缓存``, ``[从零实现 Transformer](…)一章``: a
  Han character and a Latin letter touching, either way round; the book writes a space between
  Chinese and a Latin word (``在 CPU 上``), or quotes the title (“[…](…)”一章). Code and math are
  not letters here;
- **单元 for a code cell**: ``检查单元``, ``隐藏的单元``, ``上一个单元``: the word is 单元格 (单元
  alone is a hidden unit of the feed-forward network, 门控线性单元 a GLU).

What a Chinese notebook prints is read here for one rule, **a percent sign with a space**
(``0.26 %`` in a table of a Chinese page: write ``0.26%``), in every output that has a Chinese
character (a Markdown table's rows carry none, its header does).

Fenced code, inline code, math, roles, HTML and link targets are not prose; the parse is MyST's
own (markdown-it with the book's extensions), and the bodies of directives that hold markdown
(dropdowns, tabs, admonitions) are parsed too.

A variant that starts or ends with a Latin letter matches a whole word only (``LayerNorm`` not
inside ``nn.LayerNorm``). What a Chinese page prints (its outputs, and the ``tr()`` strings of its
code) is held by tests/test_zh_outputs.py.

Run one page: ``pytest tests/test_zh_style.py -k positional_encoding``. Count every rule and
variant over the Chinese pages, with the printed lines, the ``tr()`` strings and the calques:
``python tests/test_zh_style.py --counts [--root DIR]`` (DIR: a checkout or an export of an older
commit; terminology.csv is always this checkout's).
"""

import csv
import functools
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

ROOT = Path(__file__).resolve().parents[1]
MD = create_md_parser(MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "amsmath"}), RendererHTML)
HAN = r"\u3400-\u4dbf\u4e00-\u9fff"
CJK_PUNCT = r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u2018-\u201d\u2014\u2026"
FULL_WIDTH = r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"  # CJK punctuation, not “” —
SPACE = " \u00a0"
CODE = "\ue000"  # stands in for code and math: not prose, not Han
ROLE = "\ue001"  # stands in for a role, which may paste a number ({glue:text}`bleu` %)
# A surname (Vaswani, Ba; not NumPy, GPU), less the capitalised words that are no one's name
# and that prose may list with 等 ("Transformer 等架构").
NOT_NAMES = ("Transformer", "Adam", "Python", "Google", "Dropout", "Colab", "Binder", "Jupyter", "Linux")
NAME = rf"(?<![A-Za-z])(?!(?:{'|'.join(NOT_NAMES)})\b)[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
# Directives whose body is not markdown prose.
NOT_PROSE = {"code-cell", "code-block", "code", "sourcecode", "literalinclude", "math", "csv-table",
             "raw", "eval-rst", "include", "toctree", "tableofcontents", "bibliography", "mermaid",
             "graphviz", "image", "glue", "glue:any", "glue:text", "glue:figure", "glue:math"}
RULES = ("variant", "ascii quotes", "bold spacing", "bold not rendered", "italics", "percent", "gloss",
         "gloss voice", "line break", "attribution", "bold punctuation", "thousands", "large number",
         "space after punctuation", "cjk latin spacing", "cell word")
OPENING_LINES = ("目标：", "阅读时间：", "前置：")  # `- **目标：** …`: the bold keeps its colon
# A hard line break: both sides CJK, or full-width punctuation on either side.
LINE_BREAK = re.compile(f"[{HAN}{CJK_PUNCT}]\n[{HAN}{CJK_PUNCT}]|[{FULL_WIDTH}]\n|\n[{FULL_WIDTH}]")
ATTRIBUTION = re.compile(r"(?<!—)—[ \u00a0]*(?:§|Abstract\b|摘要)")
THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d.,])")
LARGE_NUMBER = re.compile("两?百万(?!计)")  # 数以百万计 ("millions of") is an idiom, not a count
BOLD_END = re.compile(f"(?:[。，、；：？！]|(?<=[{HAN}])[.,:;!?])$")
SPACE_AFTER_PUNCT = re.compile(f"[。，、：；！？][{SPACE}]+")
CJK_LATIN = re.compile(f"(?<=[{HAN}])(?=[A-Za-z])|(?<=[A-Za-z])(?=[{HAN}])")
CELL_WORD = re.compile("(?:检查|隐藏的|隐藏的检查|[Mm]arkdown ?|上一个|下一个|前一个|后一个)单元(?!格)")
PERCENT_SPACE = re.compile(r"\d[ \u00a0\u2009\u202f]+%")


class Finding(NamedTuple):
    rule: str
    line: int  # 1-based, in the cell's source
    text: str  # the offending text
    hint: str  # what to write instead
    key: str = ""  # the variant as terminology.csv writes it


class Variant(NamedTuple):
    phrase: str
    preferred: str
    pattern: re.Pattern
    exceptions: tuple


def phrase_pattern(phrase: str, titles=()) -> str:
    """A regular expression for a phrase of terminology.csv; Latin ends match whole words."""
    out = [r"(?<![A-Za-z0-9_.])"] if re.match("[A-Za-z]", phrase) else []
    for piece in re.split(r"(<Name>|<chapter title>| )", phrase):
        if piece == "<Name>":
            out.append(NAME)
        elif piece == "<chapter title>":
            out.append("(?:" + ("|".join(map(re.escape, sorted(titles, key=len, reverse=True))) or "(?!)") + ")")
        elif piece == " ":
            out.append(f"[{SPACE}]?")
        else:
            out.append(re.escape(piece))
    if re.search("[A-Za-z]$", phrase):
        out.append(r"(?![A-Za-z0-9_])")
    return "".join(out)


def load_variants(csv_path: Path = ROOT / "terminology.csv", titles=()) -> list[Variant]:
    rows = list(csv.reader(csv_path.read_text(encoding="utf8").splitlines()))
    avoid = next(i for i, h in enumerate(rows[0]) if h.lower().startswith("avoid"))
    variants = []
    for row in rows[1:]:
        for entry in filter(None, (e.strip() for e in row[avoid].split("; "))):
            m = re.fullmatch(r"(.+?)(?: \(except (.+)\))?", entry)
            exceptions = tuple(re.compile(phrase_pattern(x.strip(), titles)) for x in (m.group(2) or "").split(", ") if x)
            variants.append(Variant(m.group(1), row[1], re.compile(phrase_pattern(m.group(1), titles)), exceptions))
    return variants


def zh_pages(root: Path = ROOT) -> list[Path]:
    toc = yaml.safe_load((root / "_toc.zh.yml").read_text(encoding="utf8"))
    files = [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])
                             for c in [c, *c.get("sections", [])]]
    out = []
    for f in files:
        base = root / f
        out.append(base.with_suffix(".ipynb") if base.with_suffix(".ipynb").exists() else base.with_suffix(".md"))
    return out


def markdown_cells(path: Path) -> list[tuple[str, str]]:
    """(cell id, source) of every markdown cell; a .md page is one cell, id '-'; code cells are
    kept as (id, None) so that a gloss is only looked for in the cell right after a quote."""
    if path.suffix == ".md":
        return [("-", path.read_text(encoding="utf8"))]
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    return [(c.get("id", "?"), ("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
             if c["cell_type"] == "markdown" else None) for c in cells]


def chapter_titles(root: Path = ROOT) -> set[str]:
    """Every Chinese page's title, and its parts around ：or （） (the title and its subtitle)."""
    titles = set()
    for path in zh_pages(root):
        for _, source in markdown_cells(path):
            m = re.search(r"^# (.+)$", source or "", re.M)
            if m:
                title = m.group(1).strip()
                titles |= {title, *(p.strip() for p in re.split(r"[：:（）()]", title) if len(p.strip()) > 1)}
                break
    return titles


def blocks(source: str, offset: int = 0, top: bool = True):
    """(tokens, line offset, is it the cell itself) of the source and of every directive body
    that holds markdown."""
    tokens = MD.parse(source)
    yield tokens, offset, top
    for t in tokens:
        if t.type in ("fence", "colon_fence") and t.info.startswith("{"):
            name, _, title = t.info[1:].partition("}")
            if name.strip() in NOT_PROSE:
                continue
            if title.strip():
                yield MD.parse(title.strip()), offset + t.map[0], False
            # options (":open:") become blank lines, so line numbers hold
            body = re.sub(r"^\s*:[\w-]+:.*$", "", t.content, flags=re.M)
            yield from blocks(body, offset + t.map[0] + 1, False)


def prose(children) -> str:
    """An inline token's text as a reader sees it, code and math replaced by CODE, URLs blanked."""
    out = []
    for c in children:
        if c.type == "text":
            out.append(re.sub(r"https?://\S+", CODE, c.content))
        elif c.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif c.type == "myst_role":
            out.append(ROLE)
        elif c.type in ("code_inline", "math_inline", "math_inline_double", "html_inline", "image"):
            out.append(CODE)
    return "".join(out)


def inline_findings(children, variants, quoted: bool) -> list[tuple[int, Finding]]:
    """(line within the inline token, finding) for every typography rule and variant."""
    text, found = prose(children), []

    def at(pos, rule, snippet, hint, key=""):
        snippet = snippet.replace(CODE, "`…`").replace(ROLE, "{role}")
        found.append((text.count("\n", 0, pos), Finding(rule, 0, snippet, hint, key)))

    if not quoted:
        for rule, pos, snippet, hint, key in text_findings(text, variants):
            at(pos, rule, snippet, hint, key)
        if text.startswith("大意：") and "我们" in text:
            k = text.index("我们")
            at(k, "gloss voice", text[max(0, k - 8):k + 6], "the gloss speaks of the paper: 作者、论文, not 我们")
    for m in LINE_BREAK.finditer(text):
        at(m.start() + 1, "line break", m.group().replace("\n", "⏎"), "one paragraph, one line: join the lines")
    for m in ATTRIBUTION.finditer(text):
        at(m.start(), "attribution", m.group(), "attribute a quote with —— §")
    quotes = [m.start() for m in re.finditer('"', text)]
    for a, b in zip(quotes[::2], quotes[1::2]):
        if re.search(f"[{HAN}]", text[a:b]):
            at(a, "ascii quotes", text[a:b + 1], "use “” around Chinese")
    for m in CJK_LATIN.finditer(text):
        at(m.start(), "cjk latin spacing", text[max(0, m.start() - 4):m.start() + 4],
           "a space between Chinese and a Latin word (在 CPU 上), or “” around a linked title")
    if not quoted:
        for m in CELL_WORD.finditer(text):
            at(m.start(), "cell word", m.group(), "a code cell is 单元格 (单元 is a hidden unit)")
    for m in re.finditer(f"[\\d{ROLE}](?:[ \u00a0\u2009\u202f]+[%％]|％)", text):
        at(m.start(), "percent", m.group(), "write 5% (no space, ASCII %)")
    pos = 0  # position in text, to place the findings on their line
    for i, c in enumerate(children):
        before = children[i - 1] if i else None
        after = children[i + 1] if i + 1 < len(children) else None
        if c.type == "text":  # within one text token: the opening lines' space after **目标：** is outside it
            for m in SPACE_AFTER_PUNCT.finditer(c.content):
                if m.end() < len(c.content) or (after is not None and after.type not in ("softbreak", "hardbreak")):
                    at(pos + m.start(), "space after punctuation", text[max(0, pos + m.start() - 4):pos + m.end() + 3],
                       "no space after full-width punctuation: 。把, not 。 把")
        if c.type == "text" and "**" in c.content:
            k = c.content.index("**")
            at(pos + k, "bold not rendered", c.content[max(0, k - 12):k + 14].strip(),
               "no space just inside **; punctuation just inside ** next to a letter outside: move it out (**标题**。)")
        if c.type == "math_inline" and re.fullmatch(r"\s*[\d.,]+\s*\\%\s*", c.content):
            at(pos, "percent", f"${c.content}$", "a percentage is text, not math: write 2%")
        if c.type == "strong_open" and before is not None and after is not None and before.type == "text" \
                and re.search(f"[{HAN}{CJK_PUNCT}][{SPACE}]+$", before.content) and re.match(f"[{HAN}]", after.content):
            at(pos, "bold spacing", before.content[-3:] + "**" + after.content[:3], "no space before ** next to Chinese")
        if c.type == "strong_close" and before is not None and after is not None and before.type == "text" \
                and re.search(f"[{HAN}]$", before.content) and re.match(f"[{SPACE}]+[{HAN}{CJK_PUNCT}]", after.content):
            at(pos, "bold spacing", before.content[-3:] + "**" + after.content[:3], "no space after ** next to Chinese")
        if c.type == "strong_close":
            start = max(j for j in range(i) if children[j].type == "strong_open" and children[j].level == c.level)
            inner = prose(children[start + 1:i])
            if BOLD_END.search(inner) and inner not in OPENING_LINES:
                shown = inner if len(inner) <= 12 else "…" + inner[-11:]
                at(pos, "bold punctuation", f"**{shown}**", f"the punctuation after the bold: **{shown[:-1]}**{shown[-1]}")
        if c.type == "em_open":
            inner = prose(children[i + 1:i + 1 + next(j for j, d in enumerate(children[i + 1:]) if d.type == "em_close")])
            if re.search(f"[{HAN}]", inner):
                at(pos, "italics", f"*{inner}*", "no italics on Chinese: bold, “”, or plain")
        pos += len(prose([c]))
    return found


def text_findings(text: str, variants) -> list[tuple[str, int, str, str, str]]:
    """(rule, position, snippet, hint, key) of the faults that any Chinese text can have, prose or
    a printed line: a variant of terminology.csv, a space as a thousands separator, 百万."""
    found = []
    for v in variants:
        for m in v.pattern.finditer(text):
            if not any(x.start() <= m.start() and m.end() <= x.end() for e in v.exceptions for x in e.finditer(text)):
                found.append(("variant", m.start(), m.group(), f"write {v.preferred}", v.phrase))
    for m in THOUSANDS.finditer(text):
        found.append(("thousands", m.start(), m.group(), "thousands with a comma: 10,000"))
    for m in LARGE_NUMBER.finditer(text):
        found.append(("large number", m.start(), text[max(0, m.start() - 6):m.end() + 2], "count in 万: 200 万, not 两百万"))
    return [f if len(f) == 5 else (*f, "") for f in found]


def gloss_missing(tokens, i) -> bool | None:
    """At blockquote_open tokens[i]: True when it quotes English and the next block is not a
    大意 paragraph, None when the quote ends the token list (look at the next cell)."""
    level, j = tokens[i].level, i + 1
    while not (tokens[j].type == "blockquote_close" and tokens[j].level == level):
        j += 1
    quoted = "".join(t.content for t in tokens[i:j] if t.type == "inline")
    if re.search(f"[{HAN}]", quoted):
        return False
    nxt = next((t for t in tokens[j + 1:] if t.level <= level), None)
    if nxt is None or (nxt.type.endswith("_close") and level > 0):
        return None if level == 0 else True
    return not starts_with_gloss(tokens[j + 1:])


def starts_with_gloss(tokens) -> bool:
    return len(tokens) > 1 and tokens[0].type == "paragraph_open" and tokens[1].content.startswith("大意：")


@functools.cache
def book_variants() -> list[Variant]:
    return load_variants(titles=chapter_titles())


def page_findings(path: Path, variants=None) -> list[tuple[str, Finding]]:
    """(cell id, finding) for every fault of a Chinese page."""
    return cell_findings(markdown_cells(path), book_variants() if variants is None else variants)


def cell_findings(cells, variants) -> list[tuple[str, Finding]]:
    out = []
    for k, (cell_id, source) in enumerate(cells):
        if source is None:
            continue
        found = []
        for tokens, offset, top in blocks(source):
            depth = 0
            for i, t in enumerate(tokens):
                depth += {"blockquote_open": 1, "blockquote_close": -1}.get(t.type, 0)
                if t.type == "inline":
                    for line, f in inline_findings(t.children or [], variants, depth > 0):
                        found.append((cell_id, f._replace(line=offset + t.map[0] + line + 1)))
                if t.type == "blockquote_open" and depth == 1:  # a quote, not a quote inside one
                    missing = gloss_missing(tokens, i)
                    if missing is None:  # the quote ends its cell (look at the next) or its directive
                        nxt = cells[k + 1][1] if top and k + 1 < len(cells) else None
                        missing = nxt is None or not starts_with_gloss(MD.parse(nxt))
                    if missing:
                        first = next(x.content for x in tokens[i:] if x.type == "inline")
                        found.append((cell_id, Finding("gloss", offset + t.map[0] + 1, first.splitlines()[0][:60],
                                                       "follow the quote with a paragraph starting 大意：")))
        out += sorted(found, key=lambda cf: cf[1].line)
    return out


def report(path: Path, findings) -> list[str]:
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} cell {cell} line {f.line}: "
            f"[{f.rule}] {f.text!r}: {f.hint}" for cell, f in findings]


PAGES = zh_pages()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: f"zh/{p.stem}")
def test_a_chinese_page_keeps_the_vocabulary_and_the_typography(path):
    problems = report(path, page_findings(path))
    if problems:
        pytest.fail(f"{len(problems)} fault(s) of vocabulary or typography:\n  " + "\n  ".join(problems) +
                    "\nterminology.csv lists the terms; docs/writing-chapters.md ('Chinese pages') the typography.",
                    pytrace=False)


def rules_of(markdown: str) -> list[tuple[str, str]]:
    variants = load_variants(titles={"位置编码", "手撕 Transformer", "从零实现 Transformer"})
    return [(f.rule, f.text) for _, f in cell_findings([("-", markdown)], variants)]


@pytest.mark.parametrize("markdown, expected", [
    # variants, with their exceptions, placeholders and exempt regions
    ("这台笔记本很快。", [("variant", "笔记本")]),
    ("在笔记本电脑上运行这个 notebook。", []),
    ("束大小为 4，批大小为 32。", [("variant", "束大小"), ("variant", "批大小")]),
    ("base 模型与base模型", [("variant", "base 模型"), ("variant", "base模型"), ("cjk latin spacing", " 模型与base"),
                        ("cjk latin spacing", "base模型")]),
    ("Vaswani 等（2017）与 Vinyals 等人（2015）", [("variant", "Vaswani 等")]),
    ("Transformer 等架构，NumPy、PyTorch 等库，GPU 等硬件", []),
    ("见《位置编码》一章；《动手学深度学习》", [("variant", "《位置编码》")]),
    ("教师强制（teacher forcing）之后只说 teacher forcing", [("variant", "teacher forcing")]),
    ("`束大小`、$束大小$ 与 [束宽](beam_size.ipynb)", []),
    ("> The beam size 束大小 is quoted.\n\n大意：束宽。", []),
    # typography
    ('正文说"除以 $\\sqrt{d_k}$ 能防止饱和"，而 "auf" 换成 "der"。', [("ascii quotes", '"除以 `…` 能防止饱和"')]),
    ("掩码是 **布尔型** 的数组", [("bold spacing", "码是 **布尔型"), ("bold spacing", "布尔型** 的数")]),
    ("用 **NumPy** 实现，**`True` 表示可以**，数组是**布尔型**的", []),
    ("- **目标：** 约 20 分钟\n- **目标**：约 20 分钟", []),
    ("- **目标：**约 20 分钟", [("bold not rendered", "**目标：**约 20 分钟")]),
    ("** 粗体**", [("bold not rendered", "** 粗体**")]),
    ("- **每一处都能运行。**每章都是\n- **每一处都能运行**。每章都是", [("bold not rendered", "**每一处都能运行。**每章")]),
    ("这是结论。**没有哪个词表能同时复现两个数字。**会不会不同？", [("bold not rendered", "这是结论。**没有哪个词表能同时复现两")]),
    ("重新算*整个前缀*，或 _全部_，但 *prefix* 可以", [("italics", "*整个前缀*"), ("italics", "*全部*")]),
    ("约 5 %，约 5％，约 $2\\%$，而 5% 与 $5\\%$ 的区间 $[0, 5\\%]$", [("percent", "5 %"), ("percent", "5％"),
                                                               ("percent", "$2\\%$"), ("percent", "$5\\%$")]),
    ("提高了 {glue:text}`gain:.1f` %，即 {glue:text}`gain:.1f`%", [("percent", "{role} %")]),
    # the gloss after a paper quote
    ("> Attention is all you need.\n\n大意：注意力就够了。", []),
    ("> Attention is all you need.\n\n（大意：注意力就够了。）", [("gloss", "Attention is all you need.")]),
    ("> Attention is all you need.", [("gloss", "Attention is all you need.")]),
    ("> 这是一段中文引文。\n\n正文。", []),
    (":::{dropdown} 深入\n> Attention.\n\n大意：注意力。\n:::\n\n```python\nx = \"中文\"  # 束大小\n```", []),
    ("::::{tab-set}\n:::{tab-item} NumPy\n> Attention.\n:::\n::::\n\n大意：注意力。", [("gloss", "Attention.")]),
    (":::{dropdown} 深入 **粗体** 中\n:open:\n> Attention.\n\n正文 5 %\n:::", [
        ("bold spacing", "深入 **粗体"), ("bold spacing", "粗体** 中"), ("gloss", "Attention."), ("percent", "5 %")]),
    # the gloss speaks of the paper, not as its authors
    ("> We propose.\n\n大意：我们提出一种新架构。", [("gloss voice", "大意：我们提出一种")]),
    ("> We propose.\n\n大意：作者提出一种新架构，我们这里照做。\n\n我们照做。", [("gloss voice", "提出一种新架构，我们这里照做")]),
    # a hard line break: between two CJK characters or next to full-width punctuation; not
    # between Chinese and a Latin word or a formula, nor inside the paper's English
    ("第一行\n第二行。甲，\n乙", [("line break", "行⏎第"), ("line break", "，⏎乙")]),
    ("论文 *Need*\n（Vaswani 等人）", [("line break", "⏎（")]),
    ("共 $n$ 个\n$n(n+1)/2$ 次，用 PyTorch\n写成", []),
    ("- 第一项，\n  接着写", [("line break", "，⏎接")]),
    ("> We used beam search.\n> —— §6.1\n\n大意：用束搜索。", []),
    # the attribution dash
    ("> Attention.\n> — §3.2\n\n大意：注意力。", [("attribution", "— §")]),
    ("> Attention. —§3.2\n\n大意：注意力。——§3.2 与 —— §3.2", [("attribution", "—§")]),
    ("> We propose.\n> — Abstract\n\n大意：作者提出。—— Abstract 与 — 破折号", [("attribution", "— Abstract")]),
    # punctuation after a bold run-in head; the opening lines keep theirs
    ("**批次大小。** 用 8 个句子。\n\n**批次大小**。用 8 个句子。", [("bold punctuation", "**批次大小。**")]),
    ("1. **修正：** 让它为零。\n2. **修正**：让它为零。\n3. **带缓存的解码**（自动评分）。", [("bold punctuation", "**修正：**")]),
    ("- **目标：** 学会。\n- **阅读时间：** 约 5 分钟\n- **前置：** 无", []),
    ("**一个解码器层，一次一个位置。** 自注意力", [("bold punctuation", "**…码器层，一次一个位置。**")]),
    ("这是 **float64** 与 **NumPy.** 的比较", []),
    # numbers: a comma for thousands, 万 for large counts
    ("底数 10 000、10,000、第 1 000 000 步；形状 (2, 512) 与 2 048", [("thousands", "10 000"), ("thousands", "1 000 000"),
                                                                  ("thousands", "2 048")]),
    ("约两百万个参数、约 3 百万个，而不是 209 万；数以百万计的句子", [("large number", "约两百万个参"),
                                                     ("large number", "数、约 3 百万个，")]),
    # the new terms
    ("编码器的堆栈把遮住的键留下；用 autograd 核对，即自动求导（autograd）", [("variant", "堆栈"), ("variant", "遮住"),
                                                             ("variant", "autograd")]),
    ("表 3 的 base 行、基础模型大小的模型与基线；写一个左分支基线；学习的位置编码与可学习的位置编码", [
        ("variant", "base 行"), ("variant", "基础模型大小的"), ("variant", "基线"), ("variant", "学习的位置编码")]),
    ("LayerNorm 与 `nn.LayerNorm`、nn.LayerNorm 和 MyLayerNorm", [("variant", "LayerNorm")]),
    # a space after full-width punctuation (issue 55/57); the opening lines keep the one after the bold
    ("1. **顺序无关**。 把键块反转。\n2. **块的大小**。在 1,024 个位置上", [("space after punctuation", "顺序无关。 把键块")]),
    ("这个领先有多小？ 这里，见 `x`： `y`。", [("space after punctuation", "先有多小？ 这里，"),
                                         ("space after punctuation", "，见 `…`： `…`。")]),
    ("- **目标：** 学会。\n- **前置：** [位置编码](positional_encoding.ipynb)、[复制任务](copy_task.ipynb)", []),
    # Chinese against a Latin letter, either way; code, math and a quoted linked title are not letters
    ("用自己的KV 缓存，用 Multi30k训练", [("cjk latin spacing", "用自己的KV 缓"), ("cjk latin spacing", "i30k训练")]),
    ("[从零实现 Transformer](from_scratch.ipynb)一章", [("cjk latin spacing", "rmer一章")]),
    ("“[从零实现 Transformer](from_scratch.ipynb)”一章，在 CPU 上，用`x`与$n$个", []),
    # 单元 for a code cell; a hidden unit and a gated linear unit stay 单元
    ("一个隐藏的检查单元试遍了位置；上一个单元的输出", [("cell word", "隐藏的检查单元"), ("cell word", "上一个单元")]),
    ("检查单元格、隐藏单元、2048 个单元、门控线性单元、代码单元格", []),
])
def test_rule_examples(markdown, expected):
    assert sorted(rules_of(markdown)) == sorted(expected)


def test_a_gloss_may_open_the_next_markdown_cell_and_the_lines_are_the_cells(tmp_path):
    def page(*cells):
        nb = {"cells": [{"cell_type": t, "id": f"c{i}", "metadata": {}, "source": s, "outputs": []}
                        for i, (t, s) in enumerate(cells)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (tmp_path / "p.ipynb").write_text(json.dumps(nb), encoding="utf8")
        return [(c, f.rule, f.line) for c, f in page_findings(tmp_path / "p.ipynb", load_variants())]

    assert page(("markdown", "# 题\n\n> Quote."), ("markdown", "大意：引文。")) == []
    assert page(("markdown", "> Quote."), ("code", "x = 1"), ("markdown", "大意：引文。")) == [("c0", "gloss", 1)]
    assert sorted(page(("markdown", "正文。\n\n第二段，有 `x`\n束大小 5 %。"))) == [("c0", "percent", 4), ("c0", "variant", 4)]


def percent_faults(path: Path) -> list[str]:
    """'cell <id> output <n>: <line>' for every printed percentage with a space before its sign, in
    the outputs of a Chinese notebook that hold a Chinese character (a table's rows are read with
    its header)."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf8"))["cells"]:
        for n, out in enumerate(cell.get("outputs", []) if cell["cell_type"] == "code" else [], 1):
            data = out.get("data", {})
            text = out.get("text", data.get("text/markdown", data.get("text/plain", "")))
            text = "".join(text) if isinstance(text, list) else text
            if re.search(f"[{HAN}]", text):
                found += [f"cell {cell.get('id', '?')} output {n}: {line.strip()[:100]!r}"
                          for line in text.splitlines() if PERCENT_SPACE.search(line)]
    return found


@pytest.mark.parametrize("path", [p for p in PAGES if p.suffix == ".ipynb"], ids=lambda p: f"zh/{p.stem}")
def test_a_chinese_page_prints_percentages_without_a_space(path):
    problems = percent_faults(path)
    if problems:
        pytest.fail(f"{len(problems)} printed percentage(s) with a space before %: write 0.26%, "
                    "through tr(' %', '%') where the English page keeps its space:\n  " + "\n  ".join(problems),
                    pytrace=False)


def test_a_printed_percentage_is_read_where_the_output_has_chinese(tmp_path):
    table = "| 归一化 | 占比 |\n| :--- | :--- |\n| LayerNorm | 0.26 % |\n| RMSNorm | 0.15% |"
    nb = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1, "source": "",
                     "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/markdown": table}},
                                 {"output_type": "stream", "name": "stdout", "text": ["MFU 0.08 % on one GPU\n"]}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "p.ipynb").write_text(json.dumps(nb), encoding="utf8")
    assert percent_faults(tmp_path / "p.ipynb") == ["cell c1 output 1: '| LayerNorm | 0.26 % |'"]


def test_every_avoid_entry_of_the_terminology_parses():
    variants = load_variants(titles={"位置编码"})
    assert len(variants) >= 30
    for v in variants:
        assert v.pattern.search(v.phrase.replace("<Name>", "Vaswani").replace("<chapter title>", "位置编码")), v
        assert not v.pattern.search(v.preferred) or v.exceptions, f"{v.phrase} matches the preferred {v.preferred}"


def counts(root: Path) -> Counter:
    variants = load_variants(titles=chapter_titles(root) | chapter_titles())
    total = Counter()
    for path in zh_pages(root):
        for _, f in page_findings(path, variants):
            total[f.rule] += 1
            if f.rule == "variant":
                total[f"  {f.key}"] += 1
    return total


# Calques the review of the Chinese edition counted (issue 55): not faults a test can decide, but
# numbers to watch. 它 is counted per 1,000 Han characters of prose (d2l-zh: 1.8).
CALQUES = {"它/它们 (not 其它)": "(?<!其)它", "「，而不是」 tail": "，而不是", "换来 / 不白来": "换来|不白来",
           "落在": "落在", "一份": "一份", "那一章": "那一章"}


def measures(path: Path) -> Counter:
    """What the rules do not count on one page: every newline inside a Chinese paragraph (the
    rule flags those between CJK characters), the forms that are right (—— §, punctuation after
    the bold), the calques, and the Han characters of the prose (outside quotes)."""
    out = Counter()
    for _, source in markdown_cells(path):
        for tokens, _, _ in blocks(source or ""):
            depth = 0
            for t in tokens:
                depth += {"blockquote_open": 1, "blockquote_close": -1}.get(t.type, 0)
                if t.type != "inline":
                    continue
                text = prose(t.children or [])
                out["—— § (right)"] += len(re.findall("——[ \u00a0]*(?:§|Abstract\\b|摘要)", text))
                kids = t.children or []
                out["punctuation after the bold (right)"] += sum(
                    1 for a, b in zip(kids, kids[1:]) if a.type == "strong_close" and b.type == "text"
                    and re.match("[。，、；：？！]", b.content))
                if depth or not re.search(f"[{HAN}]", text):
                    continue
                out["newlines in Chinese paragraphs"] += text.count("\n")
                out["Han characters"] += len(re.findall(f"[{HAN}]", text))
                for name, pattern in CALQUES.items():
                    out[name] += len(re.findall(pattern, text))
    return out


def print_counts(root: Path) -> None:
    """Every rule and variant, the printed lines and tr() strings (tests/test_zh_outputs.py), the
    right forms, the calques, over the Chinese pages under ``root``."""
    import test_zh_outputs  # noqa: PLC0415 (imports this module: not at the top)

    c = counts(root)
    for rule in RULES:
        print(f"{rule:24} {c[rule]}")
        if rule == "variant":  # every variant of terminology.csv, those at 0 too
            for phrase in dict.fromkeys(v.phrase for v in load_variants()):
                print(f"  {phrase:30} {c['  ' + phrase]}")
    variants = load_variants(titles=chapter_titles(root) | chapter_titles())
    printed = [v for v in variants if v in test_zh_outputs.PRINTED_VARIANTS()]
    print("printed lines and tr() strings of the notebooks (tests/test_zh_outputs.py):")
    for key, n in sorted(test_zh_outputs.counts(root, printed).items()):
        print(f"  {key:32} {n}")
    english = sum(test_zh_outputs.english_lines(p) for p in zh_pages(root) if p.suffix == ".ipynb")
    print(f"  {'output lines wholly in English':32} {english}  (not a fault: two or more English words, no Chinese)")
    m = sum((measures(p) for p in zh_pages(root)), Counter())
    print("the right forms, the calques and the newlines (not rules):")
    for key in ("—— § (right)", "punctuation after the bold (right)", "newlines in Chinese paragraphs", *CALQUES):
        print(f"  {key:36} {m[key]}")
    print(f"  {'它 per 1,000 Han characters':36} {1000 * m['它/它们 (not 其它)'] / max(m['Han characters'], 1):.1f}"
          f"  ({m['Han characters']:,} Han characters of prose)")
    if "--by-page" in sys.argv:
        for path in zh_pages(root):
            pm, found = measures(path), Counter(f.rule for _, f in page_findings(path, variants))
            if path.suffix == ".ipynb":
                found.update(f"{where} {f.rule}" for where, _, f in test_zh_outputs.located_faults(path, printed))
            print(f"{path.stem}: " + (", ".join(f"{k} {n}" for k, n in sorted(found.items())) or "no fault") + " | " +
                  ", ".join(f"{k} {pm[k]}" for k in ("newlines in Chinese paragraphs", *CALQUES) if pm[k]))


if __name__ == "__main__":
    if "--counts" not in sys.argv:
        sys.exit("usage: python tests/test_zh_style.py --counts [--by-page] [--root DIR]")
    root = Path(sys.argv[sys.argv.index("--root") + 1]) if "--root" in sys.argv else ROOT
    if not (root / "_toc.zh.yml").is_file():
        print(f"--root {root}: no _toc.zh.yml there; give a checkout of the book", file=sys.stderr)
        sys.exit(2)
    print_counts(root)
