"""The drawings of the copy-task and constituency-parsing chapters: they draw in both languages
without missing glyphs or warnings, show what the chapters say they show, and are deterministic."""

import warnings

import pytest

from aiayn.figures.copy_task import plot_plateaus, plot_spikes
from aiayn.figures.parsing import PARSERS, plot_f1_by_length
from aiayn.lab.copy_training import loss_levels
from figure_helpers import png


def spike_values():
    losses = [2.0 - 0.005 * i for i in range(290)] + [0.6] * 310
    losses[400:405] = [1.8, 1.7, 1.5, 1.2, 0.9]
    run = {"seed": 0, "loss": losses, "grad_norm": [0.5] * 400 + [20.0] * 5 + [0.5] * 195,
           "exact_match": {str(s): 0.5 if s == 500 else 1.0 for s in range(100, 601, 100)}, "spikes": [401]}
    calm = {**run, "loss": [max(x, 0.6) for x in losses[:400]] + [0.6] * 200, "grad_norm": [0.5] * 600, "spikes": [],
            "exact_match": {str(s): 1.0 for s in range(100, 601, 100)}}
    return {"recipe": {"warmup_steps": 200}, "runs": {"none": [run], "1.0": [calm]}}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_copy_task_plots_draw_in_both_languages(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        levels = loss_levels(10, 1, 10, vocab_size=14, label_smoothing=0.1)
        ax = plot_plateaus({"a": [2.6, 2.5, 2.46], "b": [2.6, 1.5, 0.9, 0.7]}, levels)
        ax.figure.canvas.draw()
        assert len(ax.lines) == 2 + len(levels) and len(ax.texts) == len(levels)
        assert ax.get_xlim() == (0, 4) and ax.get_ylim()[1] > levels["uniform"]  # every run, every level
        fig = plot_spikes(spike_values())
        fig.canvas.draw()
    top, bottom = fig.axes
    assert len(top.lines) == 3 and len(bottom.lines) == 2  # two runs, the warm-up's end
    assert [t.get_text() for t in top.texts].count("50%") == 1  # the check that fell in the spike
    assert [t.get_text() for t in top.texts].count("spike" if lang == "en" else "尖峰") == 1  # the one spike, marked
    # The legend is the lower panel's, not the upper one's, where it covered a spike's label.
    assert top.get_legend() is None and len(bottom.get_legend().get_texts()) == 2
    assert png(fig) == png(plot_spikes(spike_values()))  # deterministic


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_f1_by_length_draws_every_parser_in_every_bin(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    bins = {"1-10": {"f1": 99.0, "sentences": 3}, "11-20": {"f1": 90.0, "sentences": 2}}
    scores = {key: {"by_length": bins} for key in PARSERS}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot_f1_by_length(scores)
        ax.figure.canvas.draw()
    assert len(ax.lines) == len(PARSERS) and all(len(line.get_xdata()) == 2 for line in ax.lines)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1-10\n(3)", "11-20\n(2)"]
