"""The report a reader sees, built in the parent from what the grading child sent.

Text that came from the child (messages of the reader's exceptions, what the reader's code
printed) is escaped by ``clean`` first, so it can neither move the cursor nor pass for a line
of the report: printed output is shown behind ``| ``.

The report is in the current language (language.py): in Chinese the frame (练习, 文件, 种子, 结果,
重跑), the status words (通过, 失败, 未写, 出错, 跳过, four columns wide as PASS is) and the
labels (期望：, 实际：, 提示：) are Chinese, and lines wrap by display width, a Chinese character
two columns, breaking between characters but never before a closing mark or inside `code`.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from dataclasses import dataclass, field

from ..show import display_width
from .core import Exercise, label
from .language import current_language, spaced, tr

WIDTH = 96  # columns of a report line (a Chinese character takes two)
# The status words of a Chinese report, each two characters (four columns) as PASS is four.
STATUS_ZH = {"PASS": "通过", "FAIL": "失败", "TODO": "未写", "ERROR": "出错", "SKIP": "跳过"}


@dataclass
class CheckResult:
    name: str
    status: str  # "PASS", "FAIL", "TODO" (NotImplementedError), "ERROR" (raised, died, hung)
    #              or "SKIP" (not run: an earlier check of the same file timed out)
    detail: str = ""
    printed: list[str] = field(default_factory=list)  # what the reader's code printed, cleaned
    timed_out: bool = False  # stopped at the time limit: the checks after it are not run
    title: str = ""  # the name shown in the report, in the report's language


@dataclass
class Result:
    exercise: Exercise
    shown_path: str
    seed: int
    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.status == "PASS" for c in self.checks)


def clean(text: str, limit: int = 4000) -> str:
    """The child's text made safe to print: control and format characters (escape sequences,
    carriage returns, bidirectional overrides) escaped, and at most ``limit`` characters."""
    more = (tr(f" ... ({len(text) - limit} more characters)",
               f" ……（另有 {len(text) - limit} 个字符）") if len(text) > limit else "")
    return "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs")
                   else repr(c)[1:-1] for c in text[:limit]) + more


def printed_lines(output: bytes, size: int) -> list[str]:
    """At most 20 lines of what a check printed, each at most 96 characters."""
    lines = output.decode("utf-8", "backslashreplace").splitlines()
    shown = [clean(line, 96) for line in lines[:20]]
    if len(lines) > 20 or size > len(output):
        shown.append(tr(f"... ({size} bytes printed in all; the rest is not shown)",
                        f"……（共输出 {size} 字节，其余未显示）"))
    return shown


_WIDE = "\u2e80-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60“‘"  # CJK, full-width forms
# a space, code in backticks (kept on one line), a wide character, a word
_ATOM = re.compile(f"\\s+|`[^`\\n]*`|[{_WIDE}]|[^\\s{_WIDE}`]+|`")
_NO_BREAK_BEFORE = set("，。、；：！？）》」』”’…")  # stays with the character before it
_NO_BREAK_AFTER = set("（《「『“‘")  # stays with the character after it


def wrap(line: str, first: str, rest: str, width: int = WIDTH) -> list[str]:
    """``line`` in lines of at most ``width`` columns, the first after ``first``, the others
    after ``rest``. English text wraps as ``textwrap`` wraps it (at spaces); Chinese text may
    also break between two characters, never before a closing mark (，。：）) nor after an
    opening one (（“), and a Chinese character counts two columns."""
    if not any(display_width(c) == 2 for c in line):
        return textwrap.wrap(line, width=width, initial_indent=first, subsequent_indent=rest)
    lead = line[:len(line) - len(line.lstrip(" "))]
    atoms: list[list[str]] = []  # [the text, the spaces before it]
    space = ""
    for piece in _ATOM.findall(line.lstrip(" ")):
        if piece.isspace():
            space = piece
            continue
        if atoms and not space and (piece[0] in _NO_BREAK_BEFORE
                                    or atoms[-1][0][-1] in _NO_BREAK_AFTER):
            atoms[-1][0] += piece
        else:
            atoms.append([piece, space])
        space = ""
    out, current = [], first + lead
    for i, (piece, gap) in enumerate(atoms):
        if i and display_width(current + gap + piece) > width:
            out.append(current)
            current, gap = rest, ""
        current += gap + piece
    if atoms:
        out.append(current)
    return out


def format_result(result: Result, flags: str = "") -> str:
    """The report a reader sees, in the current language; ``flags`` are repeated in the rerun
    command (--solutions ...)."""
    ex = result.exercise
    zh = current_language() == "zh"
    tidy = spaced if zh else (lambda line: line)
    title = ex.shown_title()
    lines = [tr(f"exercise {ex.id}: {title}", f"练习     {ex.id}：{title}"),
             tr(f"file     {result.shown_path}", f"文件     {result.shown_path}"),
             tr(f"seed     {result.seed}", f"种子     {result.seed}")]
    said = set()
    for check in result.checks:
        status = STATUS_ZH.get(check.status, check.status) if zh else check.status
        lines.append(f"  {status:<{5 - (display_width(status) - len(status))}} "
                     f"{tidy(check.title or check.name)}")
        if check.detail not in said:  # the same "not written yet" under every check: say it once
            said.add(check.detail)
            for line in check.detail.splitlines():
                lines += wrap(tidy(line), " " * 8, " " * 18)
        lines += [f"        {label('printed:', '输出：') if i == 0 else ' ' * 10}| {line}"
                  for i, line in enumerate(check.printed)]
    passed, total = sum(c.status == "PASS" for c in result.checks), len(result.checks)
    lines.append(tr(f"result   {passed}/{total} checks passed: "
                    f"{'passed' if result.passed else 'not yet'}",
                    f"结果     通过 {passed}/{total} 项检查："
                    f"{'全部通过' if result.passed else '尚未全部通过'}"))
    if not result.passed:
        lines.append(tr("rerun    ", "重跑     ") + f"python -m aiayn.grading {ex.id}{flags} "
                     f"--seed {result.seed}")
    return "\n".join(lines)
