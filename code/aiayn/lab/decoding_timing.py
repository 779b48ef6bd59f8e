"""Timing decoding with and without the key-value cache, so that a number can be trusted.

benchmarks/bench_decoding.py and benchmarks/bench_translate.py time the two variants with
these helpers, and the fast decoding chapter reads what they record:

- **CPU time per round** (``time.process_time``): with one thread it is the work done, which
  other processes on the machine disturb much less than wall-clock time (recorded too);
- **interleaved rounds** (``timed_rounds``): every round runs every variant once, in a shuffled
  order, so a burst of load hits all of them alike;
- **the headline is the ratio of the fastest rounds, with the spread**: the lowest and highest
  of the per-round ratios (``speedup``);
- **the load average before and after** (``load_average``), and **a clean tree**: a results
  file is written only when code/ has no uncommitted change (``check_clean_tree``), unless the
  caller allows it, and then the record says ``clean_tree: false``.
"""

from __future__ import annotations

import os
import random
import time
from typing import Callable, Hashable

from ..show import pad


class DirtyTree(ValueError):
    """code/ differs from the commit a results file would name."""


def timed_rounds(groups: dict[Hashable, dict[str, Callable[[], object]]], rounds: int,
                 seed: int = 0) -> dict:
    """Times every variant of every group once per round, groups in a shuffled order and the
    variants of a group back to back in a shuffled order. Returns
    ``{group: {variant: {"cpu_s": [...], "wall_s": [...]}}}``, one entry per round."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    rng = random.Random(seed)
    times = {g: {v: {"cpu_s": [], "wall_s": []} for v in variants} for g, variants in groups.items()}
    order = list(groups)
    for _ in range(rounds):
        rng.shuffle(order)
        for group in order:
            for name in rng.sample(list(groups[group]), len(groups[group])):
                wall, cpu = time.perf_counter(), time.process_time()
                groups[group][name]()
                times[group][name]["cpu_s"].append(time.process_time() - cpu)
                times[group][name]["wall_s"].append(time.perf_counter() - wall)
    return times


def speedup(slow_s: list[float], fast_s: list[float]) -> dict:
    """slow / fast: the ratio of the fastest rounds, and the ratio of each round (for the
    spread). Both lists hold one time per round, in the order of the rounds."""
    if len(slow_s) != len(fast_s) or not slow_s:
        raise ValueError(f"slow_s and fast_s need one time per round each, got {len(slow_s)} "
                         f"and {len(fast_s)}")
    per_round = [s / f for s, f in zip(slow_s, fast_s)]
    return {"speedup_cpu": min(slow_s) / min(fast_s), "speedup_cpu_per_round": per_round}


def load_average() -> list[float]:
    """The machine's load averages over 1, 5 and 15 minutes (empty where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def check_clean_tree(code_changes: list[str], allow_dirty: bool) -> bool:
    """True when code/ has no uncommitted change. With changes: raises ``DirtyTree`` unless
    ``allow_dirty``, and then returns False, for the record to carry as ``clean_tree``."""
    if code_changes and not allow_dirty:
        shown = ", ".join(code_changes[:3]) + (" ..." if len(code_changes) > 3 else "")
        raise DirtyTree(f"code/ has {len(code_changes)} uncommitted change(s) ({shown}): commit "
                        "or remove them so the record names the code it measured, or pass "
                        "--allow-dirty for a record flagged clean_tree: false")
    return not code_changes


def _ljust(text: str, width: int) -> str:
    """``text`` padded to ``width`` columns of a terminal, Chinese characters counting two."""
    return pad(text, width)


def translate_rows(values: dict) -> tuple[list[str], list[list[str]]]:
    """The chapter's timing table as (headers, rows) for ``aiayn.show.table``, labels in the
    page's language: CPU seconds of the fastest and slowest round and BLEU, one row per variant.
    The speed-up goes under it: ``speedup_line``."""
    from ..language import tr

    headers = ["", tr("CPU s, fastest", "CPU 秒，最快"), tr("slowest", "最慢"), "BLEU"]
    rows = [[label, f"{min(values[f'{name}_cpu_s']):.1f}", f"{max(values[f'{name}_cpu_s']):.1f}",
             f"{values[f'{name}_bleu']:.2f}"]
            for name, label in (("uncached", tr("without cache", "不用缓存")), ("cached", tr("with cache", "使用缓存")))]
    return headers, rows


def speedup_line(values: dict) -> str:
    """The speed-up of the fastest rounds with the range of the per-round ratios, one line."""
    from ..language import tr

    low, high = min(values["speedup_cpu_per_round"]), max(values["speedup_cpu_per_round"])
    return tr(f"speed-up {values['speedup_cpu']:.1f}x (rounds: {low:.1f}x to {high:.1f}x)",
              f"加速比 {values['speedup_cpu']:.1f}x（各轮：{low:.1f}x 至 {high:.1f}x）")


def translate_table(values: dict) -> list[str]:
    """The lines of the chapter's timing table, from bench_translate.py's values, labels in the
    page's language: CPU seconds of the fastest and slowest round and BLEU per variant, then the
    speed-up of the fastest rounds with the range of the per-round ratios."""
    from ..plotting import tr

    lines = [_ljust("", 16) + _ljust(tr("CPU s, fastest", "CPU 秒，最快"), 16)
             + _ljust(tr("slowest", "最慢"), 10) + "BLEU"]
    for name, label in (("uncached", tr("without cache", "不用缓存")), ("cached", tr("with cache", "使用缓存"))):
        cpu = values[f"{name}_cpu_s"]
        lines.append(_ljust(label, 16) + _ljust(f"{min(cpu):.1f}", 16) + _ljust(f"{max(cpu):.1f}", 10)
                     + f"{values[f'{name}_bleu']:.2f}")
    ratios = values["speedup_cpu_per_round"]
    lines.append(_ljust(tr("speed-up", "加速比"), 16) + f"{values['speedup_cpu']:.1f}x  "
                 + tr(f"(rounds: {min(ratios):.1f}x to {max(ratios):.1f}x)",
                      f"（各轮：{min(ratios):.1f}x 至 {max(ratios):.1f}x）"))
    return lines
