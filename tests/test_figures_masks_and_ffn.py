"""aiayn.figures.attention_uses and aiayn.figures.feed_forward: the drawings of the chapters
attention_in_the_model and feed_forward_and_embeddings, in both languages, deterministic."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from aiayn.figures.attention_uses import heatmap_row
from aiayn.figures.feed_forward import T, positionwise_diagram
from figure_helpers import png


CAUSAL = np.tril(np.ones((3, 3), dtype=bool))
WORDS = ["<s>", "ein", "hund"]


@pytest.mark.parametrize("lang, key, query", [("en", "key", "query"), ("zh", "键", "查询")])
def test_heatmap_row_draws_one_panel_per_matrix_with_labels_in_the_page_language(lang, key, query, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    fig = heatmap_row([(CAUSAL, WORDS, WORDS, "causal"), (CAUSAL[:, :2], WORDS[:2], WORDS, "two keys")],
                      suptitle="masks", binary=True)
    assert len(fig.axes) == 2  # masks: no colour bar
    assert [ax.get_title() for ax in fig.axes] == ["causal", "two keys"]
    assert [ax.get_xlabel() for ax in fig.axes] == [key, key]
    assert fig.axes[0].get_ylabel() == query
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == WORDS[:2]
    assert np.array_equal(fig.axes[0].images[0].get_array(), CAUSAL.astype(float))
    plt.close(fig)
    weights = heatmap_row([(np.full((3, 3), 1 / 3), WORDS, WORDS, "weights")])
    assert len(weights.axes) == 2  # the panel and its colour bar
    plt.close(weights)


pytestmark = pytest.mark.usefixtures("style")


def test_heatmap_row_refuses_a_matrix_that_does_not_fit_its_labels():
    with pytest.raises(ValueError, match="^panels: a \\(3, 3\\) matrix for 3 queries and 2 keys"):
        heatmap_row([(CAUSAL, WORDS[:2], WORDS, "x")])
    with pytest.raises(ValueError, match="^panels"):
        heatmap_row([])


@pytest.mark.parametrize("lang, titles", [
    ("en", ["attention: output 3 reads every position", "feed-forward: each position alone, same weights"]),
    ("zh", ["注意力：输出 3 读取所有位置", "前馈网络：逐位置，权重相同"]),
])
def test_positionwise_diagram_connects_what_its_titles_say(lang, titles, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    fig, edges = positionwise_diagram()
    assert [ax.get_title() for ax in fig.axes] == titles
    assert sorted(edges["attention"]) == [(i, o) for i in range(T) for o in range(T)]
    assert edges["feed-forward"] == [(t, t) for t in range(T)]  # nothing crosses between positions
    assert sum(t.get_text() == "FFN" for t in fig.axes[1].texts) == T  # one identical box per position
    plt.close(fig)


def test_figures_are_deterministic():
    masks = [(CAUSAL, WORDS, WORDS, "causal")]
    for draw in (lambda: heatmap_row(masks, binary=True), lambda: positionwise_diagram()[0]):
        first, second = draw(), draw()
        assert png(first) == png(second)
        plt.close(first)
        plt.close(second)
