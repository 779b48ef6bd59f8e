"""aiayn.show: the comparison lines chapters print, the same text on every processor."""

import numpy as np
import pytest
import torch

from aiayn.show import BOUNDS, difference, format_bound, max_difference


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "en")


def test_an_agreement_prints_the_bound_and_returns_the_exact_size(capsys):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    d = difference("NumPy vs PyTorch", a, torch.tensor(a + 2.3e-16 * np.array([[1, 0], [0, 0]])))
    assert d == pytest.approx(2.220446049250313e-16)
    assert capsys.readouterr().out == "NumPy vs PyTorch: agree to float64 rounding (max |difference| below 1e-12)\n"


@pytest.mark.parametrize("noise", [0.0, 2e-16, 6e-16, 3e-15, 9e-13])
def test_rounding_noise_of_any_size_below_the_bound_prints_one_line(capsys, noise):
    """The point of the helper: 2e-16 on one processor, 6e-16 on another, 0 on a third print alike."""
    a = np.linspace(-1, 1, 7)
    difference("x", a, a + noise)
    assert capsys.readouterr().out == "x: agree to float64 rounding (max |difference| below 1e-12)\n"


def test_float32_has_its_own_bound(capsys):
    a = torch.ones(3)
    difference("f32", a, a + 1e-6)
    assert capsys.readouterr().out == f"f32: agree to float32 rounding (max |difference| below {format_bound(BOUNDS['float32'])})\n"
    difference("mixed", a.double(), a + 1e-6)  # the less precise argument decides
    assert "float32" in capsys.readouterr().out


def test_a_bound_of_the_callers_own(capsys):
    a = np.zeros(3)
    assert difference("after 50 updates", a, a + 3e-9, within=1e-6) == pytest.approx(3e-9)
    assert capsys.readouterr().out == "after 50 updates: agree (max |difference| below 1e-6)\n"
    with pytest.raises(ValueError, match="within"):
        difference("x", a, a, within=0)


@pytest.mark.parametrize("size, shown", [(0.7, "0.7"), (9.24, "9.2"), (11.3, "11"), (0.00314, "0.0031"), (2.5e-5, "2.5e-5")])
def test_a_real_difference_prints_its_size(capsys, size, shown):
    a = np.zeros(4)
    difference("wrong", a, a + size)
    assert capsys.readouterr().out == f"wrong: max |difference| {shown}\n"


def test_integers_are_exact(capsys):
    difference("ids", np.arange(5), torch.arange(5))
    assert capsys.readouterr().out == "ids: identical\n"
    difference("ids", np.arange(5), np.array([0, 1, 2, 9, 9]))
    assert capsys.readouterr().out == "ids: 2 of 5 entries differ\n"


def test_chinese_pages_get_a_whole_chinese_line(capsys, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "zh")
    a = np.ones(3)
    difference("NumPy 与 PyTorch", a, a + 1e-16)
    assert capsys.readouterr().out == "NumPy 与 PyTorch：在 float64 舍入误差内一致（最大 |差值| 低于 1e-12）\n"
    difference("错误的实现", a, a + 0.7)
    assert capsys.readouterr().out == "错误的实现：最大 |差值| 0.7\n"
    difference("编号", np.arange(3), np.arange(3))
    assert capsys.readouterr().out == "编号：完全相同\n"


def test_bounds_are_written_short():
    assert [format_bound(b) for b in (1e-12, 1e-6, 5e-8, 1e-4, 0.01)] == ["1e-12", "1e-6", "5e-8", "1e-4", "0.01"]


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="a and b: shapes differ"):
        max_difference(np.zeros(3), np.zeros(4))


def test_a_table_is_markdown_with_one_row_per_line():
    from aiayn.show import markdown_table

    text = markdown_table(["束宽", "BLEU"], [["1", 38.9], ["a|b", 39.2]])
    assert text.splitlines() == ["| 束宽 | BLEU |", "| :--- | ---: |", "| 1 | 38.9 |", "| a\\|b | 39.2 |"]
    with pytest.raises(ValueError, match="rows"):
        markdown_table(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="align"):
        markdown_table(["a"], [[1]], align="x")
