"""Measured numbers in the chapters' prose come from cells, never from the keyboard.

A number that a cell measured (a timing, a loss, a BLEU score, a ratio, an accuracy) and that
the prose repeats is held to its source in one of two ways:

- **asserted** (the chapters' main path, docs/writing-chapters.md): the prose states it rounded
  or plainly ("about 3.4 times faster"), and a hidden check cell of the same notebook (a code
  cell tagged ``remove-cell``) asserts that claim against the computed or recorded value, naming
  the number as the prose types it: ``assert 3.35 <= speedup < 3.45  # "about 3.4 times"``.
  The page then reads the same in the book, in JupyterLab and on Colab, and the notebook fails
  when the value drifts away from the prose;
- **glued** (the appendix): pasted with the role {glue:text}`key` from
  ``myst_nb.glue(key, value, display=False)``.

This test finds numbers typed into markdown that look measured and that neither a role pastes
nor a hidden assert names, in every chapter notebook of both languages.

The rule, mechanically. In each markdown cell, first remove what may hold numbers legitimately:

- math: ``$...$``, ``$$...$$``;
- code: fenced blocks (directives such as ``literalinclude`` included) and inline ``code spans``;
- glue roles: {glue:text}`key` and the like (that is where measured numbers belong);
- quotations: blockquote lines (``> ...``, the paper's quotes) and text in double quotes,
  "..." or “...” (quoted phrases of the paper or of the source material);
- link targets ``(https://...)``, section and reference marks (§3.2.1, Section 3.2.1, Table 3,
  row (E), [38, 2, 9]), version numbers (NumPy 2.4), products of constants (150 × 4,000) and
  the enumerator of a heading (``### 1.``) or of a list item (``1.``);
- numbers inside identifiers (``d_k``, ``P100``, ``arXiv:1706.03762``, ``2D``).

What remains is prose. In it, a number is flagged when it is

- followed by a unit of measurement: ms, s, µs, seconds, min, minutes, hours, MiB, GiB, MB,
  GB, %, ×, x, times, BLEU, nats, F1, million, 倍, 秒, 毫秒, 分钟, 小时, 万, 亿; or preceded by ×,
  x or "BLEU"; or
- a decimal (3.14, 0.048, 1e-6): measured quantities are rarely round.

unless it is allowed: ALLOWED below holds configuration constants of the paper and the course
(dropout 0.1, α = 0.6, ...), which pass where they are typed without a unit; a chapter's entry
in ALLOWED_IN holds the paper's published figures where that chapter discusses them (Table 2's
BLEU scores, ...), the source material's reported losses and the chapter's own settings, which
pass in any form. Every entry carries its reason. The lists are short on purpose: when a new
number is flagged, glue it from the cell that computes it; add it here only if it is a
constant or a published figure that no cell measures.

The rule cannot see a measurement written out in words ("a third") or typed into math, and it
does not judge qualitative claims ("faster", "about the same"): those are kept true by the
assertions of the cells that glue the numbers.

When the test fails it names the notebook, the cell id, the line and the number, and says what
to do.
"""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(p for p in CHAPTERS.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)

# Typed numbers allowed in every chapter, as they appear in the prose (number and unit, after
# the removals above), with the reason: configuration constants of the paper and the course.
# A bare number here passes wherever it is typed without a unit, so this list stays short.
ALLOWED = {
    "0.1": "P_drop and ε_ls of the base model (§5.4)",
    "0.6": "length penalty α (§6.1)",
    "0.9": "Adam β1 (§5.3)",
    "0.98": "Adam β2 (§5.3)",
    "28.4 BLEU": "the big model, EN-DE (Abstract)",
    "41.8 BLEU": "the big model, EN-FR (Abstract)",
    "12 hours": "training time of the base model (§1, §5.2)",
    "12 小时": "training time of the base model (§1, §5.2)",
}

# Published figures and constants of one chapter only: {notebook file name: {text: reason}}.
# The paper's figures are allowed where a chapter discusses them, not everywhere, so that a
# measurement that happens to equal one of them elsewhere is still caught.
TABLE_3 = {
    "4.92": "perplexity of the base model and of row (E), newstest2013 (Table 3)",
    "25.8": "BLEU of the base model, newstest2013 (Table 3)",
}
ALLOWED_IN = {
    "paper_in_one_page.ipynb": {
        "27.3": "BLEU of the base model, EN-DE (Table 2)",
        "38.1": "BLEU of the base model, EN-FR (Table 2)",
        "28.4": "BLEU of the big model, EN-DE (Table 2)",
        "41.8": "BLEU of the big model, EN-FR (Table 2)",
        "0.4 s": "seconds per step of the base model (§5.2)",
        "0.4 秒": "seconds per step of the base model (§5.2)",
        "1.0 s": "seconds per step of the big model (§5.2)",
        "1.0 秒": "seconds per step of the big model (§5.2)",
        "3.5 days": "training time of the big model (§5.2)",
        "3.5 天": "training time of the big model (§5.2)",
        "2 BLEU": "the Abstract's improvement over the best earlier results",
        "91.3": "F1 of the parser trained on WSJ only (Table 4)",
        "91.3 F1": "F1 of the parser trained on WSJ only (Table 4)",
    },
    "positional_encoding.ipynb": {
        **TABLE_3,
        "25.7": "BLEU with learned positional embeddings, row (E) (Table 3)",
    },
    "training_multi30k.ipynb": {
        "25.8": "BLEU of the base model, newstest2013 (Table 3)",
        "25.3": "BLEU without label smoothing, newstest2013 (Table 3)",
        "4.5 million": "sentence pairs of WMT 2014 EN-DE (§5.1)",
        "450 万": "sentence pairs of WMT 2014 EN-DE (§5.1)",
        "10 分钟": "interval between the averaged checkpoints (§6.1)",
        "0.3": "P_drop of the big model (Table 3)",
    },
    "multi30k_recipe.ipynb": {
        "41.02": "BLEU of Wu et al. (2021) on test2016, the literature's best text-only result",
        "0.3": "P_drop of the big model (Table 3) and of Wu et al. (2021)",
        "4.5 million": "sentence pairs of WMT 2014 EN-DE (§5.1)",
        "450 万": "sentence pairs of WMT 2014 EN-DE (§5.1)",
        "60 minutes": "a training budget of the laptop run (a setting)",
        "10 分钟": "a training budget of the laptop run (a setting)",
        "60 分钟": "a training budget of the laptop run (a setting)",
        "30 分钟": "a training budget of the laptop run (a setting)",
    },
    "feed_forward_and_embeddings.ipynb": {
        "0.02": "initial standard deviation of the learned positional encoding (the course's setting)",
    },
    "from_scratch.ipynb": {
        "45 minutes": "the length of the interview the chapter rehearses",
        "45 分钟": "the length of the interview the chapter rehearses",
    },
}

UNITS = (r"ms|µs|us|s|sec|seconds?|min|minutes?|h|hours?|days?|MiB|GiB|KiB|MB|GB|kB|%|％|×|x|"
         r"times|BLEU|nats?|F1|million|billion|倍|秒|毫秒|微秒|分钟|小时|天|万|亿")
NUMBER = r"\d+(?:[.,]\d+)*(?:[eE][-−]?\d+)?"
# A number not glued on its left to a letter, digit, underscore, dot, colon, slash or hash
# (d_k, P100, v1.2, arXiv:1706.03762, #133882).
FLAGGED = re.compile(
    rf"(?<![\w.:/#])(?P<num>{NUMBER})(?:(?P<space>[ \u00a0\u2009]?)(?P<unit>{UNITS})(?![A-Za-z]))?"
)
PRECEDED = re.compile(rf"(?:×|\bx|BLEU)[ \u00a0]?(?P<num>{NUMBER})(?![\w.])")

REMOVE = [
    re.compile(r"^(?:```|~~~|:::).*?^(?:```|~~~|:::)\s*$", re.M | re.S),  # fenced blocks
    re.compile(r"\$\$.*?\$\$", re.S),                         # display math
    re.compile(r"(?<!\\)\$.+?(?<!\\)\$", re.S),               # inline math
    re.compile(r"\{glue(?::\w+)?\}`[^`]*`"),                  # glue roles
    re.compile(r"\{[\w:-]+\}`[^`]*`"),                        # other roles ({doc}, {ref}, ...)
    re.compile(r"`[^`]*`"),                                   # code spans
    re.compile(r"^\s*>.*$", re.M),                            # blockquotes: the paper's words
    re.compile(r'"[^"\n]*(?:\n[^"\n]*){0,6}"'),               # "quoted text"
    re.compile(r"“[^”]*”|「[^」]*」"),                          # “quoted text”, 「quoted text」
    re.compile(r"\]\([^)]*\)"),                               # link targets
    re.compile(r"https?://\S+"),                              # bare URLs
    re.compile(r"§\s?\d+(?:\.\d+)*|\bSection\s\d+(?:\.\d+)*|第\s?\d+(?:\.\d+)*\s?节"),  # sections
    re.compile(r"\b(?:NumPy|PyTorch|Python|Sphinx|CUDA|OpenBLAS)\s\d+(?:\.\d+)+"),  # versions
    re.compile(r"\d[\d,.]*\s?×\s?\d[\d,.]*"),                # products of constants, 150 × 4,000
    re.compile(r"\b(?:Table|Figure|Equation|footnote|row|rows|表|图|脚注|第)\s?\(?[\dA-E]+\)?", re.I),
    re.compile(r"\[\d+(?:,\s*\d+)*\]"),                       # citations [38, 2, 9]
    re.compile(r"^\s*#+\s*\d+(?:\.\d+)*\.?", re.M),           # heading enumerators
    re.compile(r"^\s*\d+\.\s", re.M),                         # list enumerators
    re.compile(r"<[^>]+>"),                                   # HTML tags
    re.compile(r"\*\*(?:Reading time:|阅读时间：)\*\*.*$", re.M),  # a chapter's reading time
]


def prose(markdown: str) -> str:
    """The markdown with every exempt region blanked out (newlines kept, so line numbers hold)."""
    for pattern in REMOVE:
        markdown = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), markdown)
    return markdown


def typed_numbers(markdown: str, allowed: dict | None = None) -> list[tuple[int, str]]:
    """(line number, number as typed with its unit) for every flagged number of a markdown cell;
    ``allowed`` holds the chapter's own entries (its ALLOWED_IN), in addition to ALLOWED."""
    chapter = allowed or {}
    found = []
    for lineno, line in enumerate(prose(markdown).splitlines(), start=1):
        spans = []
        for m in FLAGGED.finditer(line):
            num, unit = m.group("num"), m.group("unit")
            decimal = re.search(r"\d[.]\d|[eE][-−]?\d", num) is not None
            if unit or decimal:
                spans.append((m.start(), m.group().strip()))
        for m in PRECEDED.finditer(line):
            if not any(start <= m.start("num") <= start + len(text) for start, text in spans):
                spans.append((m.start(), m.group().strip()))
        for _, text in sorted(spans):
            number = FLAGGED.match(text)
            bare = number.group("num") if number else PRECEDED.match(text).group("num")
            with_unit = text != bare
            # A bare entry of ALLOWED passes only where the number is typed without a unit (the
            # dropout 0.1, never "0.1 s"); a chapter's own entries pass in any form ("BLEU 25.8").
            if not (text in ALLOWED or text in chapter or bare in chapter
                    or (not with_unit and bare in ALLOWED)):
                found.append((lineno, text))
    return found


def markdown_cells(path: Path):
    for cell in json.loads(path.read_text(encoding="utf8"))["cells"]:
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            yield cell.get("id", "?"), source if isinstance(source, str) else "".join(source)


HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def normalise(number: str) -> str:
    """One spelling per number: no thousands separators (2,000 = 2000 = 2_000), no trailing
    unit; the minus sign is ASCII."""
    return re.sub(r"[,_]", "", number).replace("−", "-")


def asserted_numbers(path: Path) -> set[str]:
    """Every number written in an assert statement (its condition, its message, or a comment on
    its lines) of a hidden cell: the numbers that a hidden check cell names."""
    found = set()
    for cell in json.loads(path.read_text(encoding="utf8"))["cells"]:
        if cell["cell_type"] != "code" or not HIDDEN_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        lines = source.splitlines()
        try:
            spans = [(n.lineno, n.end_lineno) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert)]
        except SyntaxError:  # IPython syntax in the cell: fall back to the lines that say assert
            spans = [(i, i) for i, l in enumerate(lines, start=1) if re.match(r"\s*assert\b", l)]
        for start, end in spans:
            text = "\n".join(lines[start - 1:end])
            found.update(normalise(m) for m in re.findall(NUMBER, text))
    return found


def offending_lines(path: Path) -> list[str]:
    problems = []
    asserted = asserted_numbers(path)
    for cell_id, source in markdown_cells(path):
        lines = source.splitlines()
        for lineno, text in typed_numbers(source, ALLOWED_IN.get(path.name)):
            number = FLAGGED.match(text) or PRECEDED.match(text)
            if normalise(number.group("num")) in asserted:
                continue
            problems.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} cell {cell_id} line {lineno}: "
                            f"{text!r} in: {lines[lineno - 1].strip()[:120]}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(CHAPTERS).as_posix())
def test_measured_numbers_in_prose_are_asserted_or_glued(path):
    problems = offending_lines(path)
    assert not problems, (
        "numbers typed into the prose that look measured:\n  " + "\n  ".join(problems) +
        "\nState each as the output says it, rounded, and assert it in a hidden check cell "
        "(tag remove-cell) naming the number as typed: assert 3.35 <= speedup < 3.45  # \"3.4 times\" "
        "(docs/writing-chapters.md); in the appendix, glue it instead. A configuration constant, "
        "or a figure the paper published, goes into ALLOWED or ALLOWED_IN in "
        "tests/test_prose_numbers.py, with its reason."
    )


# The rule itself, on small examples: what is flagged and what is not.
@pytest.mark.parametrize("markdown, flagged", [
    ("The loop took 2.1 times as long.", ["2.1 times"]),
    ("at T = 8 it took 390.84 ms", ["390.84 ms"]),
    ("exact match 99.5 %, after 19 s", ["99.5 %", "19 s"]),
    ("about 4.3 where the frequencies give 4.25", ["4.3", "4.25"]),
    ("a gap of ×12 and 3x", ["×12", "3x"]),
    ("在 $d_k = 64$ 时小了约 6 倍", ["6 倍"]),
    ("用了 19 秒，损失 0.18", ["19 秒", "0.18"]),
    ("63.1 million parameters, 共 6310 万个", ["63.1 million", "6310 万"]),
    ("1000 queries, 10 keys, 6 layers", []),
    ("the variance is $d_k = 64.34$ here", []),
    ("measured {glue:text}`sdpa_ratio:.2f` times smaller", []),
    ("`lr = 3e-4` and `0.048`", []),
    ("> We used warmup_steps = 4000 and 0.4 seconds per step.", []),
    ('the paper says "over 2.0 BLEU" here', []),
    ("see §3.2.1, Table 3 row (E) and [38, 2, 9]", []),
    ("### 1. The variance", []),
    ("1. First item\n2. Second item", []),
    ("[arXiv:1706.03762](https://arxiv.org/abs/1706.03762)", []),
    ("dropout 0.1, label smoothing 0.1, 28.4 BLEU", []),
    ("a BLEU of 25.8 and 0.4 s per step", ["25.8", "0.4 s"]),
    ("dropout 0.1, but 0.1 s and 0.6 % are measured", ["0.1 s", "0.6 %"]),
    ("d_k, P100 GPUs, float32, 2D", []),
    ("Section 3.2.1 of the paper; 第 3.2.1 节; NumPy 2.4", []),
    ("batches of 150 × 4,000 tokens", []),
    ("- **Reading time:** about 25 minutes", []),
    ("- **阅读时间：**约 25 分钟", []),
])
def test_rule_examples(markdown, flagged):
    assert [text for _, text in typed_numbers(markdown)] == flagged


def test_a_number_named_by_a_hidden_assert_passes_and_one_named_nowhere_fails(tmp_path):
    def notebook(check_source, tags):
        cells = [{"cell_type": "markdown", "id": "m", "metadata": {},
                  "source": "Caching makes it about 3.4 times faster, and 2,000 updates take 1.5 s."},
                 {"cell_type": "code", "id": "c", "metadata": {"tags": tags}, "outputs": [],
                  "execution_count": 1, "source": check_source}]
        path = tmp_path / "page.ipynb"
        path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        return path

    check = ('assert 3.35 <= speedup < 3.45, "about 3.4 times"\n'
             'assert (updates ==\n        2000)  # "2,000 updates"\nprint(1.5)\n')
    problems = offending_lines(notebook(check, ["remove-cell"]))
    # 3.4 and 2,000 are named by asserts; 1.5 only by a print, so it still needs a check.
    assert [p.split(": ", 1)[1].split(" in:")[0] for p in problems] == ["'1.5 s'"]
    # The same asserts in a visible cell do not count: the check belongs off the page.
    assert len(offending_lines(notebook(check, []))) == 2


@pytest.mark.parametrize("name", sorted(ALLOWED_IN))
def test_a_chapters_allowed_number_is_still_typed_in_it(name):
    """An entry of ALLOWED_IN that the chapter's prose (either language) no longer types would
    let a measured number of the same spelling pass unchecked later: it goes."""
    prose_text = "\n".join(prose(source) for lang in ("en", "zh") if (CHAPTERS / lang / name).exists()
                           for _, source in markdown_cells(CHAPTERS / lang / name))
    stale = [text for text in ALLOWED_IN[name] if text not in prose_text]
    assert not stale, f"{name}: allowed numbers no longer in its prose, remove them: {stale}"
