"""aiayn.show.display_width and pad: the one measure the course pads text by, so that columns
of text with Chinese labels align in a monospaced font (issue 55 item 4). It replaces the copies
of a sum over ``unicodedata.east_asian_width`` in aiayn.lab (decoding_timing, walkthrough)."""

import unicodedata

import pytest

from aiayn.lab.decoding_timing import speedup_line, translate_rows, translate_table
from aiayn.show import display_width, markdown_table, pad


def copy_of_the_old_sum(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


@pytest.mark.parametrize("text, width", [
    ("", 0), ("BLEU", 4), ("不用缓存", 8), ("CPU 秒，最快", 12), ("（各轮：2.8x 至 3.0x）", 22),
    ("ΔBLEU ± 0.3 …", 13), ("ｆｕｌｌ", 8), ("e\u0301", 1),  # full-width Latin: two each; a combining accent: none
])
def test_display_width_counts_wide_characters_twice_and_combining_marks_not_at_all(text, width):
    assert display_width(text) == width


@pytest.mark.parametrize("text", ["不用缓存", "CPU 秒，最快", "Post-LN：最大 |差值| 0.17", "本书 ΔBLEU [95% 区间]"])
def test_it_agrees_with_the_sum_it_replaces_where_there_is_no_combining_mark(text):
    assert display_width(text) == copy_of_the_old_sum(text)


def test_pad_fills_to_the_width_on_either_side_and_leaves_wider_text_alone():
    assert pad("加速比", 10) == "加速比    " and display_width(pad("加速比", 10)) == 10
    assert pad("3.9", 6, right=True) == "   3.9"
    assert pad("自注意力缓存", 4) == "自注意力缓存"
    with pytest.raises(ValueError, match="^text"):
        display_width(3.9)


VALUES = {"uncached_cpu_s": [30.0, 31.5], "cached_cpu_s": [12.0, 12.5], "uncached_bleu": 21.7, "cached_bleu": 21.7,
          "speedup_cpu": 2.5, "speedup_cpu_per_round": [2.5, 2.52]}


def test_the_timing_table_aligns_its_chinese_columns(monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "zh")
    lines = translate_table(VALUES)
    starts = [display_width(line[:line.index(cell)]) for line, cell in zip(lines[1:3], ("30.0", "12.0"))]
    assert starts == [display_width(lines[0][:lines[0].index("CPU")])] * 2  # the numbers under their header


def test_the_timing_rows_are_the_table_a_page_renders(monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "en")
    headers, rows = translate_rows(VALUES)
    assert headers == ["", "CPU s, fastest", "slowest", "BLEU"]
    assert rows == [["without cache", "30.0", "31.5", "21.70"], ["with cache", "12.0", "12.5", "21.70"]]
    assert speedup_line(VALUES) == "speed-up 2.5x (rounds: 2.5x to 2.5x)"
    monkeypatch.setenv("AIAYN_LANG", "zh")
    headers, rows = translate_rows(VALUES)
    assert headers[1:3] == ["CPU 秒，最快", "最慢"] and rows[0][0] == "不用缓存"
    assert markdown_table(headers, rows).splitlines()[2] == "| 不用缓存 | 30.0 | 31.5 | 21.70 |"
    assert speedup_line(VALUES) == "加速比 2.5x（各轮：2.5x 至 2.5x）"
