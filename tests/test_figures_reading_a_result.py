"""aiayn.figures.reading_a_result: the figure of the page "Reading a result" draws in both
languages without missing glyphs or warnings, shows the committed seeds and the chapter's own
verdicts, and is deterministic."""

import warnings

import numpy as np
import pytest

from aiayn.figures.reading_a_result import ROWS, plot_paired_seeds
from aiayn.lab.model_variations import family, load_results, summarize
from figure_helpers import png, texts


@pytest.fixture(scope="module")
def summaries():
    return summarize(load_results())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figure_shows_the_seeds_the_differences_and_the_verdicts(style, monkeypatch, lang, summaries):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        fig = plot_paired_seeds(summaries)
        fig.canvas.draw()
    left, right = fig.axes
    by_name = {s.name: s for s in summaries}
    base = np.array(by_name["base"].bleu.values)
    # Left: one line per (row, seed), from the base's seed k to the variant's seed k.
    lines = [line for line in left.lines if len(line.get_xdata()) == 2]
    assert len(lines) == 3 * len(ROWS)
    for i, name in enumerate(ROWS):
        for k in range(3):
            assert list(lines[3 * i + k].get_ydata()) == [base[k], by_name[name].bleu.values[k]]
    # Right: the seed-by-seed differences, drawn as they are.
    drawn = sorted(float(line.get_xdata()[0]) for line in right.lines if line.get_marker() == "o")
    expected = sorted(float(d) for name in ROWS for d in np.array(by_name[name].bleu.values) - base)
    assert drawn == pytest.approx(expected)
    words = {"en": ["beyond seed noise", "inconclusive", "no difference within ±1.0 BLEU"],
             "zh": ["超出种子噪声", "无定论", "在 ±1.0 BLEU 内无差异"]}[lang]
    assert texts(fig) == words
    kinds = [family(summaries, "bleu")[name].verdict.kind for name in ROWS]
    assert kinds == ["agrees", "inconclusive", "no difference"]


def test_the_figure_is_deterministic(style, summaries):
    assert png(plot_paired_seeds(summaries)) == png(plot_paired_seeds(summaries))


def test_rows_without_a_verdict_are_refused(summaries):
    with pytest.raises(ValueError, match="rows: no verdict for E_nothing"):
        plot_paired_seeds(summaries, rows=("C_d64", "E_nothing"))
