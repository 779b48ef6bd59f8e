"""The report a reader sees, built in the parent from what the grading child sent.

Text that came from the child (messages of the reader's exceptions, what the reader's code
printed) is escaped by ``clean`` first, so it can neither move the cursor nor pass for a line
of the report: printed output is shown behind ``| ``.
"""

from __future__ import annotations

import textwrap
import unicodedata
from dataclasses import dataclass, field

from .core import Exercise


@dataclass
class CheckResult:
    name: str
    status: str  # "PASS", "FAIL", "TODO" (NotImplementedError), "ERROR" (raised, died, hung)
    #              or "SKIP" (not run: an earlier check of the same file timed out)
    detail: str = ""
    printed: list[str] = field(default_factory=list)  # what the reader's code printed, cleaned
    timed_out: bool = False  # stopped at the time limit: the checks after it are not run
    title: str = ""  # the name shown in the report (in Chinese where the check has one)


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
    more = f" ... ({len(text) - limit} more characters)" if len(text) > limit else ""
    return "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs")
                   else repr(c)[1:-1] for c in text[:limit]) + more


def printed_lines(output: bytes, size: int) -> list[str]:
    """At most 20 lines of what a check printed, each at most 96 characters."""
    lines = output.decode("utf-8", "backslashreplace").splitlines()
    shown = [clean(line, 96) for line in lines[:20]]
    if len(lines) > 20 or size > len(output):
        shown.append(f"... ({size} bytes printed in all; the rest is not shown)")
    return shown


def format_result(result: Result, flags: str = "") -> str:
    """The report a reader sees; ``flags`` are repeated in the rerun command (--solutions ...)."""
    ex = result.exercise
    lines = [f"exercise {ex.id}: {ex.title}", f"file     {result.shown_path}",
             f"seed     {result.seed}"]
    said = set()
    for check in result.checks:
        lines.append(f"  {check.status:<5} {check.title or check.name}")
        if check.detail not in said:  # the same "not written yet" under every check: say it once
            said.add(check.detail)
            for line in check.detail.splitlines():
                lines += textwrap.wrap(line, width=96, initial_indent=" " * 8,
                                       subsequent_indent=" " * 18)
        lines += [f"        {'printed:' if i == 0 else '':<10}| {line}"
                  for i, line in enumerate(check.printed)]
    passed = sum(c.status == "PASS" for c in result.checks)
    verdict = "passed" if result.passed else "not yet"
    lines.append(f"result   {passed}/{len(result.checks)} checks passed: {verdict}")
    if not result.passed:
        lines.append(f"rerun    python -m aiayn.grading {ex.id}{flags} --seed {result.seed}")
    return "\n".join(lines)
