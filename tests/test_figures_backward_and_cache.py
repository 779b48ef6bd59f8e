"""The drawings of the backpropagation and fast decoding chapters: they draw in both languages
without missing glyphs or warnings, say what the chapters say they show, and are deterministic."""

import warnings

import pytest

from aiayn.figures.backward_graph import draw_attention_backward
from aiayn.figures.kv_cache import draw_kv_cache, plot_speedup
from figure_helpers import png, texts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_graph_names_every_gradient_and_what_is_saved(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph or font warns
        fig = draw_attention_backward()
        fig.canvas.draw()
    shown = "\n".join(texts(fig))
    for formula in ("dV = P^\\top dO", "dP = dO\\,V^\\top", "dQ = dS\\,K/\\sqrt{d_k}",
                    "dK = dS^\\top Q/\\sqrt{d_k}", "\\mathrm{rowsum}(dP \\odot P)"):
        assert formula in shown, formula
    assert ("saved for\nbackward" if lang == "en" else "为反向\n保存") in shown
    # The saved row holds what each backward step reads: Q and K, P, P and V.
    assert {"$Q,\\ K$", "$P$", "$P,\\ V$"} <= set(texts(fig))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cache_drawing_grows_a_column_per_step_and_reorders_rows(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = draw_kv_cache(steps=4, source_len=5, rows=(0, 0, 2, 1))
        fig.canvas.draw()
    steps_ax, beams_ax = fig.axes
    cells = [p for p in steps_ax.patches if p.get_width() == 0.9]
    # self-attention: 1 + 2 + 3 + 4 cells; encoder-decoder: 5 per step; the legend's two swatches
    assert len(cells) == 10 + 4 * 5 + 2
    assert [t.get_text() for t in steps_ax.texts].count("3") == 1  # position 3 exists at step 4 only
    assert "rows = [0, 0, 2, 1]" in texts(fig)
    assert len(beams_ax.patches) == 2 * 4 * 4


def test_the_cache_drawing_rejects_rows_that_index_no_beam(style):
    with pytest.raises(ValueError, match="rows"):
        draw_kv_cache(rows=(0, 4, 1, 2))
    with pytest.raises(ValueError, match="steps"):
        draw_kv_cache(steps=0)


def test_the_drawings_are_deterministic(style):
    assert png(draw_attention_backward()) == png(draw_attention_backward())
    assert png(draw_kv_cache()) == png(draw_kv_cache())


def test_the_speedup_plot_draws_the_fastest_ratio_and_the_spread_of_the_rounds(style):
    rows = [dict(shape="base", tokens=n, speedup_cpu=r, speedup_cpu_per_round=[r - 0.2, r, r + 0.3])
            for n, r in ((25, 2.0), (50, 2.5), (100, 3.5))]
    ax = plot_speedup({"values": {"rows": rows}})
    line = ax.lines[0]
    assert list(line.get_xdata()) == [25, 50, 100] and list(line.get_ydata()) == [2.0, 2.5, 3.5]
    (bars,) = ax.collections  # one error bar per point: per-round minimum to maximum
    segments = bars.get_segments()
    ends = [y for s in segments for y in (s[0][1], s[1][1])]
    assert ends == pytest.approx([1.8, 2.3, 2.3, 2.8, 3.3, 3.8])
