"""aiayn.figures.figure1 and aiayn.figures.recurrence: the drawings of the first chapters, in
both languages, deterministic."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from aiayn.figures.figure1 import figure1
from aiayn.figures.recurrence import earliest_steps, recurrence_and_attention
from figure_helpers import png, texts


@pytest.mark.parametrize("lang, boxes", [
    ("en", {"Add & Norm": 5, "Multi-Head\nAttention": 2, "Masked\nMulti-Head Attention": 1,
            "Feed\nForward": 2, "Linear": 1, "Softmax": 1, "Outputs (shifted right)": 1}),
    ("zh", {"残差相加 & 层归一化": 5, "多头注意力": 2, "掩码多头注意力": 1, "前馈网络": 2,
            "线性层": 1, "Softmax": 1, "输出（右移一位）": 1}),
])
def test_figure1_has_every_box_of_the_paper_in_the_page_language(lang, boxes, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    fig = figure1()
    drawn = texts(fig)
    assert {label: drawn.count(label) for label in boxes} == boxes
    plt.close(fig)


pytestmark = pytest.mark.usefixtures("style")


def test_earliest_steps_of_a_chain_and_of_independent_outputs():
    assert earliest_steps(4, lambda t: [t - 1] if t else []) == [1, 2, 3, 4]
    assert earliest_steps(4, lambda t: []) == [1, 1, 1, 1]
    assert earliest_steps(4, lambda t: list(range(t))) == [1, 2, 3, 4]


@pytest.mark.parametrize("lang, titles", [
    ("en", ["recurrent layer: 6 steps in a row", "self-attention: 1 step for all positions"]),
    ("zh", ["循环层：依次 6 步", "自注意力：所有位置 1 步完成"]),
])
def test_recurrence_figure_counts_the_steps_it_draws(lang, titles, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    fig = recurrence_and_attention(length=6)
    assert [ax.get_title() for ax in fig.axes] == titles
    step = "step {}" if lang == "en" else "第 {} 步"
    left, right = ([t.get_text() for t in ax.texts] for ax in fig.axes)
    assert [t for t in left if t.startswith(step[:2])] == [step.format(i) for i in range(1, 7)]
    assert [t for t in right if t.startswith(step[:2])] == [step.format(1)] * 6
    plt.close(fig)


def test_figures_are_deterministic():
    for draw in (figure1, recurrence_and_attention):
        first, second = draw(), draw()
        assert png(first) == png(second)
        plt.close(first)
        plt.close(second)
    with pytest.raises(ValueError, match="^length"):
        recurrence_and_attention(length=0)
