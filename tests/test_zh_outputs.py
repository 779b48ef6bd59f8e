"""What a Chinese page prints is in one language per line (issue 55).

Two things a reader of a Chinese page sees come from code, not from the prose that
tests/test_zh_style.py reads: the **committed outputs** of its code cells (streams, ``text/plain``,
``text/markdown`` tables) and the **``tr(en, zh)`` strings** of its code cells (the Chinese half:
axis labels, legends, titles, printed labels), together with those of the library under
``code/aiayn`` that draws its figures and prints its tables. On every Chinese line of either, this
test fails on:

- **a hybrid line**: a line with a Chinese character and two or more English words outside the
  rule of docs/writing-chapters.md ("One language per printed line"). An English word is a run of
  Latin letters; these are not English words, by that rule:

  - code identifiers, configuration and run names, file paths, numbers and units: anything with
    a digit, ``_``, ``.``, ``/``, ``<``, ``=`` or ``@`` in it (``d_model``, ``multi30k-cpu``,
    ``F.cross_entropy``, ``<s>``, ``float64``, ``4.5x``), a single letter (``t``, ``n``), the unit
    symbols in ``UNITS`` and the numbers ``nan``, ``inf``; a word that an operator joins into a
    formula (``std + eps``);
  - library and product names, names of people and acronyms: a word with a capital letter
    (``NumPy``, ``PyTorch``, ``BLEU``, ``Post-LN``, ``Elman``, ``Dropout``);
  - the terms that terminology.csv keeps in English (its Chinese column is the English word:
    ``epoch``, ``logits``, ``softmax``, ``notebook``);
  - quoted text, which is data (a Python string ``'dog'``, a phrase in “”);
  - a table cell that holds one token: a text table's columns are two or more spaces apart and a
    Markdown table's cells between ``|``; a row like ``源句  a  dog  runs  .`` shows a sentence's
    tokens, data again.

  Distinct words count once (``alpha 1.0 … alpha 0.6`` is one word).
- **ASCII punctuation after Chinese**: ``,`` or ``:`` right after a CJK character or full-width
  punctuation (``单独: max``, ``个句子, 5 轮``): write ``，`` and ``：``;
- **a variant of terminology.csv, a space as thousands separator, 百万**: as in the prose
  (tests/test_zh_style.py); for printed lines, only lines with a Chinese character are read (a
  wholly English line keeps English words such as ``LayerNorm``).

A failure names the page, the cell (its id) and the line, in the cell's output or in the cell's
source (``tr()`` strings), or the library file and line.
"""

from __future__ import annotations

import ast
import csv
import functools
import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from test_zh_style import CJK_PUNCT, FULL_WIDTH, HAN, ROOT, book_variants, text_findings, zh_pages

WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
UNITS = {"ms", "us", "ns", "min", "px"}
NUMBERS = {"nan", "inf"}
OPERATORS = {"+", "-", "*", "/", "=", "==", "<", ">", "<=", ">=", "^", "×", "·", "≤", "≥", "≈", "±",
             "+=", "-=", "*=", "/="}
# Quoted text: a Python string in a repr, a phrase in “” with no Chinese in it.
QUOTED = re.compile(r"(?<![A-Za-z0-9])'[^'\n]*'(?![A-Za-z0-9])|(?<![A-Za-z0-9])\"[^\"\n]*\"(?![A-Za-z0-9])"
                    f"|“[^”{HAN}\\n]*”|`[^`\\n]*`|\\$[^$\\n]+\\$")
CELLS = re.compile(r"\s*\|\s*|\s{2,}|\t")
CHUNK = re.compile(f"[^\\s{HAN}{CJK_PUNCT}]+")
ASCII_AFTER_CJK = re.compile(f"[{HAN}{FULL_WIDTH}][,:]")


def kept_in_english(csv_path: Path = ROOT / "terminology.csv") -> set[str]:
    """The terms whose Chinese is the English word itself (epoch, logits, softmax, BLEU, ...)."""
    rows = list(csv.reader(csv_path.read_text(encoding="utf8").splitlines()))[1:]
    return {row[1].lower() for row in rows if re.fullmatch(r"[A-Za-z ]+", row[1])}


KEPT = kept_in_english()


@functools.cache
def PRINTED_VARIANTS():  # noqa: N802 (a constant, computed once)
    """terminology.csv's variants less those that are a class name in code (``LayerNorm``): a
    printed line or a grader's hint names the class."""
    return [v for v in book_variants() if not re.fullmatch(r"[A-Za-z]+", v.phrase) or v.phrase[1:].islower()]


def bare(chunk: str) -> str:
    """A chunk without the punctuation around a word: quotes, a trailing , ; : ! ? . and brackets
    (not the ``(`` of a call: ``float()`` stays ``float(``)."""
    core = chunk.strip("\"'“”‘’,;:!?*|").rstrip(".").lstrip("([{")
    return core.rstrip(")]}") if "(" not in core else core


def is_code(chunk: str) -> bool:
    """A chunk that is code or a formula: an operator, a single letter, or something with a digit
    or one of ``_ . ( ) [ ] { } = < > @ / \\ ^`` (a number alone is not code)."""
    core = bare(chunk)
    if chunk in OPERATORS or re.fullmatch(r"[A-Za-z]", core):
        return True
    if re.fullmatch(r"[-+]?[\d.,]+%?", core):
        return False
    return bool(re.search(r"[\d_.()\[\]{}=<>@/\\^]", core) or core.startswith("-"))


def english_words(line: str) -> list[str]:
    """The English words of a line, by the rule in the module docstring, lowercased, each once."""
    words = set()
    for cell in CELLS.split(QUOTED.sub(" ", line)):
        if len(CHUNK.findall(cell)) == 1 and not re.search(f"[{HAN}]", cell):
            continue  # a table cell of one token
        for segment in re.split(f"[{HAN}{CJK_PUNCT}]+", cell):  # the Latin runs between Chinese
            chunks = segment.split()
            for i, chunk in enumerate(chunks):
                word = bare(chunk)
                if not WORD.fullmatch(word) or len(word) == 1 or word.lower() in KEPT | NUMBERS or word in UNITS:
                    continue
                if any(ch.isupper() for ch in word):
                    continue  # a name, a product, an acronym
                neighbours = chunks[max(0, i - 1):i] + chunks[i + 1:i + 2]
                if set(neighbours) & OPERATORS or (neighbours and all(map(is_code, neighbours))):
                    continue  # a symbol in a formula, a keyword in code: for _ in range(n)
                words.add(word.lower())
    return sorted(words)


class Fault(NamedTuple):
    rule: str
    text: str
    hint: str


def line_faults(line: str, variants=None) -> list[Fault]:
    """The faults of one line of Chinese text (printed, or a tr() string)."""
    if not re.search(f"[{HAN}]", line):
        return []
    faults = []
    words = english_words(line)
    if len(words) >= 2:
        faults.append(Fault("hybrid line", line.strip()[:100], f"English words {', '.join(words)}: "
                            "print the line wholly in Chinese through tr(), or wholly in English"))
    for m in ASCII_AFTER_CJK.finditer(line):
        faults.append(Fault("ascii punctuation", line[max(0, m.start() - 6):m.end() + 6].strip(),
                            "full-width after Chinese: ，："))
    variants = PRINTED_VARIANTS() if variants is None else variants
    for rule, pos, snippet, hint, _ in text_findings(line, variants):
        faults.append(Fault(rule, snippet, hint))
    return faults


def output_lines(cell: dict):
    """(line number within the cell's outputs, line) of every text a code cell shows."""
    n = 0
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            text = out["text"]
        elif out["output_type"] in ("display_data", "execute_result"):
            data = out.get("data", {})
            text = data.get("text/markdown", data.get("text/plain", ""))
        else:
            continue
        for line in ("".join(text) if isinstance(text, list) else text).splitlines():
            n += 1
            yield n, line


def tr_strings(source: str):
    """(line in the source, Chinese text) of every ``tr(en, zh)`` call in Python source; the
    values an f-string formats stand as 0."""
    source = re.sub(r"^(\s*)[%!].*$", r"\1pass", source, flags=re.M)  # IPython magics and shell lines
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and \
                (getattr(node.func, "id", None) == "tr" or getattr(node.func, "attr", None) == "tr"):
            zh = node.args[1]
            if isinstance(zh, ast.Constant) and isinstance(zh.value, str):
                yield zh.lineno, zh.value
            elif isinstance(zh, ast.JoinedStr):
                yield zh.lineno, "".join(v.value if isinstance(v, ast.Constant) else "0" for v in zh.values)


def code_cells(path: Path):
    for cell in json.loads(path.read_text(encoding="utf8"))["cells"]:
        if cell["cell_type"] == "code":
            yield cell.get("id", "?"), "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def located_faults(path: Path, variants=None) -> list[tuple[str, str, Fault]]:
    """(where: "output" or "tr()", location, fault) for every fault of a Chinese notebook's
    outputs and tr() strings."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell_id = cell.get("id", "?")
        for n, line in output_lines(cell):
            found += [("output", f"cell {cell_id} output line {n}", f) for f in line_faults(line, variants)]
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for lineno, text in tr_strings(source):
            found += [("tr()", f"cell {cell_id} source line {lineno}: tr()", f)
                      for line in text.splitlines() for f in line_faults(line, variants)]
    return found


def page_faults(path: Path, variants=None) -> list[str]:
    """Every fault of a Chinese notebook's outputs and tr() strings, one line each."""
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{name} {where}: [{f.rule}] {f.text!r}: {f.hint}" for _, where, f in located_faults(path, variants)]


def library_faults(path: Path, variants=None) -> list[str]:
    return [f"{path.relative_to(ROOT)} line {lineno}: tr() [{f.rule}] {f.text!r}: {f.hint}"
            for lineno, text in tr_strings(path.read_text(encoding="utf8"))
            for line in text.splitlines() for f in line_faults(line, variants)]


NOTEBOOKS = [p for p in zh_pages() if p.suffix == ".ipynb"]
LIBRARY = sorted(p for p in (ROOT / "code" / "aiayn").rglob("*.py") if "tr(" in p.read_text(encoding="utf8"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"zh/{p.stem}")
def test_a_chinese_page_prints_one_language_per_line(path):
    problems = page_faults(path)
    if problems:
        pytest.fail(f"{len(problems)} fault(s) in what the page prints:\n  " + "\n  ".join(problems) +
                    "\ndocs/writing-chapters.md ('Chinese pages': one language per printed line); "
                    "terminology.csv for the terms.", pytrace=False)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.relative_to(ROOT / "code").as_posix())
def test_the_library_labels_are_chinese_in_one_language(path):
    problems = library_faults(path)
    if problems:
        pytest.fail(f"{len(problems)} fault(s) in the Chinese of tr() strings:\n  " + "\n  ".join(problems),
                    pytrace=False)


@pytest.mark.parametrize("line, words", [
    # the review's hybrid lines fire
    ("复制: attention within one position of the token written: least 88%, mean 96%",
     ["attention", "least", "mean", "of", "one", "position", "the", "token", "within", "written"]),
    ("against small (3 seeds)     更新次数          差值   p（Holm）  结论", ["against", "seeds", "small"]),
    ("batch_4000   last checkpoint 4.185: +0.869 against the seeds' mean, p = 0.0034 -> 更差",
     ["against", "checkpoint", "last", "mean", "seeds", "the"]),
    ("dL/dx vs autograd：在 float64 舍入误差内一致（最大 |差值| 低于 1e-12）", ["autograd", "vs"]),
    ("PE[pos+3] vs M_3 PE[pos], every pos：一致", ["every", "pos"]),
    # and what the rule allows does not
    ("NumPy vs PyTorch：完全相同", ["vs"]),
    ("use_cache=False: 12 steps", ["steps"]),
    ("src (2, 6) -> memory (2, 6, 32) = (B, S, d_model)", ["memory", "src"]),
    ("Post-LN 与 Pre-LN：Elman RNN、BLEU 21.49、Dropout 0.3、AMD EPYC、5 轮", []),
    ("每个目标词元每层 4,096 字节；self_k (2, 4, 1, 8)；test_2016_flickr；multi30k-cpu；3.0x；<s> </s>", []),
    ("源句  a  dog  runs  in  the  park  .", []),
    ("| 目标句 | <s> | ein | hund | rennt | im | park | . |", []),
    ("解码器读入 ['<s>', 'ein', 'hund']，“with the telescope” 挂在哪里", []),
    ("输入标准差 1.0：std + eps 与 nn.LayerNorm：最大 |差值| 2.0e-5", []),
    ("loss 3.04   ln V = 2.71 (均匀猜测)；for t in range(T): h = x[:, t] @ w；x -= mean", ["loss"]),
    ("不要用 int()、float() 或 .double()，用 `weight` 和 `bias`", []),
    ("最好：束宽 2，alpha 1.0；对论文的束宽 4、alpha 0.6：p = 0.46", ["alpha"]),
    ("每个 epoch 的 logits 经 softmax：nan、inf、12 ms", []),
])
def test_english_words_by_the_rule(line, words):
    assert english_words(line) == words


def test_a_line_fails_on_two_english_words_and_ascii_punctuation_only_after_chinese():
    rules = lambda line: [f.rule for f in line_faults(line, [])]  # noqa: E731
    assert rules("PyTorch cached vs uncached, 13 steps：一致") == ["hybrid line"]
    assert rules("得分，有缓存与无缓存：一致") == []
    assert rules("one position at a time vs the whole sequence, 13 steps") == []  # no Chinese: not read
    assert rules("test_2016_flickr, 1000 个句子, 5 轮 | AMD EPYC") == ["ascii punctuation"]
    assert rules("目标掩码: 改变了的输出 [0, 0, 1]") == ["ascii punctuation"]
    assert rules("差值 p（Holm）: 0.5") == ["ascii punctuation"]
    assert rules("形状 (2, 3): 一致, dict {'a': 1}") == ["ascii punctuation"]
    assert rules("形状 (2, 3): 一致；dict {'a': 1}") == []
    assert rules("底数 10 000 的两百万个参数") == ["thousands", "large number"]


def test_a_chinese_line_keeps_the_terms_and_an_english_one_is_not_read():
    variants = book_variants()
    assert [f.rule for f in line_faults("最后一个 LayerNorm 之后", variants)] == ["variant"]
    assert line_faults("the decoder's final LayerNorm included", variants) == []
    assert line_faults("nn.LayerNorm：最大 |差值| 0.2", variants) == []
    assert [f.text for f in line_faults("验证损失（nats）", variants)] == ["验证损失", "nats"]


def test_tr_strings_are_found_in_calls_and_f_strings():
    source = ('%matplotlib inline\n'
              'print(tr("rows", "行数：") , plotting.tr(f"{n} steps", f"{n} 步，共 {m:.1f} 秒"))\n'
              'ax.set_xlabel(tr("updates", "更新次数"))\nlabel = "不是 tr() 的字符串"\n')
    assert list(tr_strings(source)) == [(2, "行数："), (2, "0 步，共 0 秒"), (3, "更新次数")]


def test_a_page_names_the_cell_and_the_line(tmp_path):
    nb = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1,
                     "source": 'print(tr("a", "甲: 乙"))\nprint("得分 cached vs uncached")',
                     "outputs": [{"output_type": "stream", "name": "stdout",
                                  "text": ["甲: 乙\n", "得分 cached vs uncached\n"]}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "p.ipynb").write_text(json.dumps(nb), encoding="utf8")
    faults = page_faults(tmp_path / "p.ipynb", [])
    assert [f.split(": [")[0].split("p.ipynb ")[1] for f in faults] == [
        "cell c1 output line 1", "cell c1 output line 2", "cell c1 source line 1: tr()"]


def english_lines(path: Path) -> int:
    """Printed lines of a Chinese notebook with no Chinese and two or more English words (a
    measure for --counts: allowed by the rule, but a Chinese reader reads them in English)."""
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    return sum(1 for cell in cells if cell["cell_type"] == "code" for _, line in output_lines(cell)
               if not re.search(f"[{HAN}]", line) and len(english_words(line)) >= 2)


def counts(root: Path = ROOT, variants=None) -> dict[str, int]:
    """Faults per rule over the Chinese pages under ``root`` (for tests/test_zh_style.py --counts)."""
    total: dict[str, int] = {}
    for path in zh_pages(root):
        if path.suffix == ".ipynb":
            for where, _, fault in located_faults(path, variants):
                key = f"{where} {fault.rule}"
                total[key] = total.get(key, 0) + 1
    return total
