"""aiayn.plotting: Chinese plot labels render on Linux, and labels follow the notebook's language."""

import warnings

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from aiayn.plotting import current_language, heatmap, tr, use_course_style

WEIGHTS = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [-0.3, 0.3, 1.0]])


@pytest.fixture
def course_style():
    with matplotlib.rc_context():  # restores rcParams afterwards
        use_course_style()
        yield


def draw(title: str) -> Figure:
    """Render a heatmap with `title` and Chinese tick labels on an Agg canvas."""
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    heatmap(ax, WEIGHTS, xlabels=["键1", "键2", "键3"], ylabels=["查询1", "查询2", "查询3"], title=title)
    fig.canvas.draw()
    return fig


def test_chinese_labels_render_without_missing_glyphs(course_style, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "zh")
    title = tr("attention weights", "注意力权重")
    assert title == "注意力权重"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" would raise here
        draw(title)


def test_latin_only_font_list_misses_chinese_glyphs(course_style):
    # The control: without the CJK font in the list, the same figure warns. This is
    # what a Chinese notebook would print to stderr (and the book build would reject).
    matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
    with pytest.warns(UserWarning, match="missing from font"):
        draw("注意力权重")


def test_heatmap_draws_matrix_with_colorbar_and_labels(course_style):
    fig = draw("weights")
    ax, colorbar_ax = fig.axes
    np.testing.assert_array_equal(ax.images[0].get_array(), WEIGHTS)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["键1", "键2", "键3"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["查询1", "查询2", "查询3"]
    assert ax.get_title() == "weights"
    assert colorbar_ax is not ax


@pytest.mark.parametrize("folder, expected", [("zh", "注意力"), ("en", "attention"), ("work", "attention")])
def test_tr_follows_the_notebook_folder(tmp_path, monkeypatch, folder, expected):
    monkeypatch.delenv("AIAYN_LANG", raising=False)
    (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / folder)  # kernels run in the notebook's folder
    assert tr("attention", "注意力") == expected


def test_aiayn_lang_overrides_the_folder(tmp_path, monkeypatch):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    monkeypatch.setenv("AIAYN_LANG", "en")
    assert tr("attention", "注意力") == "attention"
    monkeypatch.setenv("AIAYN_LANG", "fr")
    with pytest.raises(ValueError, match="AIAYN_LANG"):
        current_language()
