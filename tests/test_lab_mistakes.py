"""The instruments of the common-mistakes chapter (aiayn.lab.mistakes) and its drawing
(aiayn.figures.mask_axes): each measures what its docstring says, and refuses bad input by name."""

import io
import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from aiayn.figures.mask_axes import broadcast_masks, draw_mask_axes
from aiayn.lab.mistakes import MatrixProductCounter, attention_sharpness, nan_positions, output_change
from aiayn.plotting import use_course_style
from aiayn.pt.attention import MultiHeadAttention
from aiayn.pt.masks import causal_mask, padding_mask


def test_the_counter_counts_each_matrix_product_once():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with MatrixProductCounter() as counter:
        a @ b
        torch.matmul(a, b)
        torch.nn.functional.linear(a, b.T)
        a + a  # not a product
    assert counter.count == 3


def test_a_batched_multi_head_attention_asks_for_six_products():
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 3, 16)
    with torch.no_grad(), MatrixProductCounter() as counter:
        mha(x, x, x)
    assert counter.count == 6  # four projections, scores, weights @ V


def test_sharpness_of_uniform_and_one_hot_rows():
    uniform = torch.full((2, 3, 5), 0.2)
    assert attention_sharpness(uniform) == pytest.approx((0.2, math.log(5)))
    one_hot = torch.eye(4)[None]
    assert attention_sharpness(one_hot) == pytest.approx((1.0, 0.0), abs=1e-12)
    with pytest.raises(ValueError, match="weights must be"):
        attention_sharpness(torch.ones(3))


def test_nan_positions_names_the_positions_over_every_leading_axis():
    x = torch.zeros(2, 3, 4, 5)  # (B, H, T, d)
    x[1, 2, 3, 0] = float("nan")
    x[0, 0, 1, 4] = float("nan")
    assert nan_positions(x) == [1, 3]
    assert nan_positions(torch.zeros(4, 2)) == []
    with pytest.raises(ValueError, match="x must be"):
        nan_positions(torch.zeros(3))


def test_output_change_sees_the_future_only_without_a_causal_mask():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).double().eval()
    y = torch.randn(1, 4, 8, dtype=torch.float64)
    y_future = y.clone()
    y_future[:, 3] += 1.0
    with_mask = output_change(lambda s: mha(s, s, s, causal_mask(4))[0], y, y_future)
    without = output_change(lambda s: mha(s, s, s)[0], y, y_future)
    assert with_mask == 0.0 and without > 1e-3
    with pytest.raises(ValueError, match="run must return"):
        output_change(lambda s: s.sum(), y, y_future)


def test_the_broadcast_grids_hide_columns_or_rows():
    on_keys, on_queries = broadcast_masks([5, 7, 0])
    np.testing.assert_array_equal(on_keys, [[1, 1, 0]] * 3)
    np.testing.assert_array_equal(on_queries, np.array([[1, 1, 0]] * 3).T)
    # The right one is the course's padding mask, broadcast.
    ids = torch.tensor([[5, 7, 0]])
    np.testing.assert_array_equal(on_keys, np.broadcast_to(padding_mask(ids, 0)[0, 0].numpy(), (3, 3)))
    with pytest.raises(ValueError, match="tokens must be one sentence"):
        broadcast_masks([[1, 2]])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_drawing_is_labelled_in_the_language_and_deterministic(lang, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with matplotlib.rc_context():
        use_course_style()
        images = []
        for _ in range(2):
            fig = draw_mask_axes()
            out = io.BytesIO()
            fig.savefig(out, format="png", metadata={"Software": None})
            images.append(out.getvalue())
            titles = [ax.get_title() for ax in fig.axes]
            plt.close(fig)
    assert images[0] == images[1]
    assert ("屏蔽填充的键" in titles[0]) == (lang == "zh")
    with pytest.raises(ValueError, match="words must label every position"):
        draw_mask_axes(words=["a"])
