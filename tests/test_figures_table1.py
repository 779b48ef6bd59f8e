"""aiayn.figures.table1: the time-and-memory plot and the dependency grid of the chapter "Why
self-attention" draw in both languages without missing glyphs or warnings, show what the chapter
says they show, and are deterministic."""

import warnings

import numpy as np
import pytest

from aiayn.figures.table1 import GRID_STACKS, draw_dependency_grid, plot_time_and_memory
from aiayn.lab.complexity import KINDS, table1_term
from aiayn.lab.path_length import dependency_pattern
from figure_helpers import png


def values(ns=(16, 64, 256)) -> dict:
    """A results file's values as aiayn.experiments.table1 writes them, times made up."""
    rows = [{"n": n, "kind": kind, "peak_bytes": 1000 * n * (i + 1), "cpu_q1_s": 0.9e-6 * n * (i + 1),
             "cpu_median_s": 1e-6 * n * (i + 1), "cpu_q3_s": 1.1e-6 * n * (i + 1)}
            for n in ns for i, kind in enumerate(KINDS)]
    return {"d": 32, "k": 3, "r": 5, "heads": 2, "complexity": rows}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_time_and_memory_draw_every_layer_with_its_band_and_table1_term(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        fig = plot_time_and_memory(values())
        fig.canvas.draw()
    time_ax, memory_ax = fig.axes
    assert len(fig.legends[0].get_texts()) == len(KINDS)
    assert ("torch.nn.RNN" in fig.legends[0].get_texts()[KINDS.index("torch_rnn")].get_text())
    assert len(time_ax.collections) == len(KINDS)  # one band per layer
    assert len(memory_ax.lines) == len(KINDS)
    # each dashed line is Table 1's term through the last median
    dashed = [line for line in time_ax.lines if line.get_linestyle() == "--"]
    assert len(dashed) == len(KINDS)
    kind = KINDS.index("attention_alone")
    law = np.array([table1_term("attention_alone", n, 32, 3, 5) for n in (16, 64, 256)], dtype=float)
    assert np.allclose(dashed[kind].get_ydata(), law / law[-1] * 1e-3 * 256 * (kind + 1))
    if lang == "zh":
        assert "序列长度" in time_ax.get_xlabel()


def test_time_and_memory_is_deterministic(style):
    assert png(plot_time_and_memory(values())) == png(plot_time_and_memory(values()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dependency_grid_shows_each_stacks_jacobian_pattern(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = draw_dependency_grid(n=8, layers=(1, 2))
        fig.canvas.draw()
    assert len(fig.axes) == 2 * len(GRID_STACKS)
    for col, (kind, width) in enumerate(GRID_STACKS):
        for row, depth in enumerate((1, 2)):
            image = fig.axes[row * len(GRID_STACKS) + col].get_images()[0].get_array()
            assert np.array_equal(np.asarray(image), dependency_pattern(kind, 8, depth, width).numpy())
    assert png(draw_dependency_grid(n=8, layers=(1,))) == png(draw_dependency_grid(n=8, layers=(1,)))


def test_time_and_memory_can_draw_a_few_layers_without_bands(style):
    # The lesson draws Table 1's rows without bands; the lab notebook every layer with them.
    kinds = ("self_attention", "torch_rnn", "convolution", "restricted")
    fig = plot_time_and_memory(values(), kinds=kinds, bands=False)
    time_ax, memory_ax = fig.axes
    assert len(fig.legends[0].get_texts()) == len(kinds) and not time_ax.collections
    assert len(memory_ax.lines) == len(kinds)
    with pytest.raises(ValueError, match="kinds:"):
        plot_time_and_memory(values(), kinds=("lstm",))


def test_the_grid_uses_the_chapters_one_kernel_width():
    assert dict(GRID_STACKS)["convolution"] == dict(GRID_STACKS)["dilated"] == 3
