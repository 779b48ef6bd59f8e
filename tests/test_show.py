"""aiayn.show: the error sizes chapters print."""

import numpy as np
import pytest
import torch

from aiayn.show import difference, max_difference


def test_difference_prints_one_significant_digit_and_returns_the_exact_size(capsys):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    d = difference("NumPy vs PyTorch", a, torch.tensor(a + 2.3e-16 * np.array([[1, 0], [0, 0]])))
    assert d == pytest.approx(2.220446049250313e-16)
    assert capsys.readouterr().out == "NumPy vs PyTorch: max |difference| 2e-16\n"
    assert difference("same", a, a.copy()) == 0.0
    assert capsys.readouterr().out == "same: max |difference| 0 (identical)\n"


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="a and b: shapes differ"):
        max_difference(np.zeros(3), np.zeros(4))
