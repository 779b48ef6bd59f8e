"""aiayn.lab.positional: the sinusoidal encoding shifted by a rotation (§3.5)."""

import math

import numpy as np
import pytest

from aiayn.lab.positional import (frequencies, offset_dot_product, shift_error, shift_matrix,
                                  wavelengths)
from aiayn.np.embeddings import sinusoidal_table
from aiayn.pt.embeddings import sinusoidal_table as torch_sinusoidal_table


@pytest.mark.parametrize("d_model", [2, 16, 64, 512])
@pytest.mark.parametrize("k", [1, 2, 7, 50, 333, -1, -20])
def test_one_matrix_shifts_every_position(k, d_model):
    assert shift_error(k, d_model, num_positions=600) < 1e-10


def test_shift_matrix_acts_on_column_vectors():
    table = sinusoidal_table(40, 16)
    m = shift_matrix(3, 16)
    for pos in (0, 11, 36):
        np.testing.assert_allclose(m @ table[pos], table[pos + 3], atol=1e-12)


def test_transposed_blocks_do_not_shift():
    # The sign layout matters: the transpose rotates the other way (it is M_{-k}).
    k, d = 5, 32
    table = sinusoidal_table(100, d)
    wrong = table[:-k] @ shift_matrix(k, d)  # (M_k^T PE_pos) as rows
    assert np.abs(wrong - table[k:]).max() > 0.5


@pytest.mark.parametrize("k", [0, 1, 9, -4, 1234])
def test_shift_matrix_is_orthogonal_and_composes(k):
    d = 24
    m = shift_matrix(k, d)
    np.testing.assert_allclose(m @ m.T, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(shift_matrix(-k, d), m.T, atol=1e-12)
    np.testing.assert_allclose(shift_matrix(3, d) @ m, shift_matrix(k + 3, d), atol=1e-10)
    if k == 0:
        np.testing.assert_array_equal(m, np.eye(d))


def test_shift_matrix_is_block_diagonal():
    m = shift_matrix(4, 12)
    blocks = np.kron(np.eye(6), np.ones((2, 2)))
    assert np.all(m[blocks == 0] == 0)


def test_frequencies_are_the_tables():
    d = 64
    table = sinusoidal_table(2, d)
    np.testing.assert_allclose(np.sin(frequencies(d)), table[1, 0::2], atol=1e-15)
    np.testing.assert_allclose(frequencies(d), 1 / 10000 ** (np.arange(0, d, 2) / d), rtol=1e-12)


def test_wavelengths_form_a_geometric_progression():
    d = 512
    lam = wavelengths(d)
    assert lam[0] == pytest.approx(2 * math.pi)
    ratios = lam[1:] / lam[:-1]
    np.testing.assert_allclose(ratios, 10000 ** (2 / d), rtol=1e-12)
    # The last pair has i = d/2 - 1: 2 pi * 10000^((d - 2)/d), just short of 10000 * 2 pi.
    assert lam[-1] == pytest.approx(2 * math.pi * 10000 ** ((d - 2) / d))
    assert lam[-1] < 10000 * 2 * math.pi


@pytest.mark.parametrize("d_model", [8, 128])
def test_dot_products_depend_on_the_offset_only(d_model):
    table = sinusoidal_table(80, d_model)
    gram = table @ table.T
    offsets = np.arange(80)[None, :] - np.arange(80)[:, None]
    np.testing.assert_allclose(gram, offset_dot_product(offsets, d_model), atol=1e-10)
    assert offset_dot_product(0, d_model) == pytest.approx(d_model / 2)


def test_numpy_and_torch_tables_agree():
    np.testing.assert_allclose(torch_sinusoidal_table(300, 64).numpy(), sinusoidal_table(300, 64),
                               atol=1e-12)


@pytest.mark.parametrize("bad", [
    lambda: shift_matrix(1, 7),
    lambda: shift_matrix(1.5, 8),
    lambda: shift_matrix(True, 8),
    lambda: frequencies(0),
    lambda: shift_error(1, 8, num_positions=0),
])
def test_bad_arguments_raise(bad):
    with pytest.raises(ValueError):
        bad()
