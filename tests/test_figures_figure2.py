"""aiayn.figures.figure2: the paper's Figure 2, both panels, in both languages."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from aiayn.figures.figure2 import (draw_multi_head_attention, draw_scaled_dot_product_attention,
                                   figure2)
from figure_helpers import png

LEFT = {"en": ["MatMul", "Scale", "Mask (opt.)", "SoftMax", "MatMul", "Q", "K", "V"],
        "zh": ["矩阵乘法", "缩放", "掩码（可选）", "SoftMax", "矩阵乘法", "Q", "K", "V"]}
RIGHT = {"en": ["Linear", "Scaled dot-product attention", "Concat"],
         "zh": ["线性层", "缩放点积注意力", "拼接"]}

pytestmark = pytest.mark.usefixtures("style")  # figures closed after each test


def texts(ax):
    return [t.get_text() for t in ax.texts]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_box_of_the_paper_is_labelled_in_the_page_language(lang, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    fig, (left, right) = plt.subplots(1, 2)
    draw_scaled_dot_product_attention(left)
    draw_multi_head_attention(right, heads=8)
    for label in set(LEFT[lang]):
        assert texts(left).count(label) == LEFT[lang].count(label), label
    assert texts(right).count(RIGHT[lang][0]) == 4  # W^Q, W^K, W^V and W^O
    assert all(label in texts(right) for label in RIGHT[lang]) and "h = 8" in texts(right)
    assert left.get_title() == ("Scaled dot-product attention" if lang == "en" else "缩放点积注意力")
    plt.close(fig)


def fed_from_below(diagram, role):
    """The arrows whose head touches the bottom edge of box ``role``."""
    x, y, width, _ = diagram.boxes[role]
    return [(tail, head) for tail, head in diagram.arrows
            if abs(head[1] - y) < 1e-9 and x <= head[0] <= x + width and tail[1] < head[1]]


def test_the_left_panel_is_the_equation_in_order():
    fig, ax = plt.subplots()
    d = draw_scaled_dot_product_attention(ax)
    order = ["scores", "scale", "mask", "softmax", "weighted_sum"]
    bottoms = [d.boxes[role][1] for role in order]
    assert bottoms == sorted(bottoms)  # drawn bottom to top, as the computation runs
    assert len(fed_from_below(d, "scores")) == 2  # Q and K
    assert len(fed_from_below(d, "weighted_sum")) == 2  # the weights and V
    for role in ("scale", "mask", "softmax"):
        assert len(fed_from_below(d, role)) == 1, role
    plt.close(fig)


def test_the_right_panel_feeds_three_projections_into_one_attention():
    fig, ax = plt.subplots()
    d = draw_multi_head_attention(ax)
    for name in "QKV":
        assert len(fed_from_below(d, f"linear_{name}")) == 1
    assert len(fed_from_below(d, "attention")) == 3
    assert len(fed_from_below(d, "concat")) == 1 and len(fed_from_below(d, "output")) == 1
    plt.close(fig)


def test_the_figure_is_deterministic_and_has_the_panels_asked_for():
    assert png(figure2()) == png(figure2())
    assert [len(figure2(p).axes) for p in ("left", "right", "both")] == [1, 1, 2]
    plt.close("all")


def test_a_wrong_panel_is_named():
    with pytest.raises(ValueError, match="panels='middle'"):
        figure2("middle")
