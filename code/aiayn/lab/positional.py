"""The sinusoidal positional encoding as rotations (§3.5): checks of the paper's claims.

"For any fixed offset k, PE_{pos+k} can be represented as a linear function of PE_pos."
Dimensions 2i and 2i+1 hold (sin(pos w_i), cos(pos w_i)), a point on a circle; moving k
positions on turns that point by the angle k w_i. So PE_{pos+k} = M_k PE_pos, with M_k
block-diagonal, one 2x2 rotation per frequency, and M_k depends on k only, never on pos.

Column-vector convention throughout: ``M_k @ pe`` for one vector; a table whose rows are
positions is moved with ``table @ M_k.T``.
"""

import math

import numpy as np

from .._checks import check_positive
from ..np.embeddings import sinusoidal_table


def frequencies(d_model: int) -> np.ndarray:
    """w_i = 1 / 10000^(2i / d_model), i = 0 .. d_model/2 - 1: the angular frequency of pair i.

    Computed with the same expression as ``sinusoidal_table``, so the rotation below and the
    table agree to the last bits rather than to ~1e-16 relative."""
    check_positive("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model={d_model} must be even: sin and cos fill dimensions in pairs")
    return np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)


def wavelengths(d_model: int) -> np.ndarray:
    """2 pi / w_i: the number of positions after which pair i repeats (2 pi ... 10000 * 2 pi)."""
    return 2 * math.pi / frequencies(d_model)


def shift_matrix(k: int, d_model: int) -> np.ndarray:
    """M_k (d_model, d_model) with PE_{pos+k} = M_k @ PE_pos for every pos.

    Block i sits on rows/columns (2i, 2i+1), the course's interleaved (sin, cos) layout:
        [[ cos(k w_i), sin(k w_i)],
         [-sin(k w_i), cos(k w_i)]]
    which is sin(a+b) = sin a cos b + cos a sin b and cos(a+b) = cos a cos b - sin a sin b
    with a = pos w_i, b = k w_i. Any integer k works, negative ones too (M_{-k} = M_k^T)."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise ValueError(f"k must be an int offset, got {k!r}")
    angle = k * frequencies(d_model)
    cos, sin = np.cos(angle), np.sin(angle)
    m = np.zeros((d_model, d_model))
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    m[even, even], m[even, odd] = cos, sin
    m[odd, even], m[odd, odd] = -sin, cos
    return m


def shift_error(k: int, d_model: int, num_positions: int = 1000) -> float:
    """max over pos in [0, num_positions) and over dimensions of |PE_{pos+k} - M_k PE_pos|.

    One matrix for all positions: if the claim were false, the error would be O(1)."""
    check_positive("num_positions", num_positions)
    lo = max(0, -k)  # with k < 0 start where pos + k >= 0
    table = sinusoidal_table(lo + num_positions + max(k, 0), d_model)
    before = table[lo: lo + num_positions]
    after = table[lo + k: lo + k + num_positions]
    return float(np.abs(after - before @ shift_matrix(k, d_model).T).max())


def offset_dot_product(k, d_model: int) -> np.ndarray:
    """PE_pos . PE_{pos+k} = sum_i cos(k w_i), whatever pos is (``k`` may be an array).

    sin(a) sin(a+b) + cos(a) cos(a+b) = cos(b) for each pair: the similarity of two
    positions depends on their distance only, so PE PE^T is a Toeplitz matrix."""
    k = np.asarray(k, dtype=np.float64)
    return np.cos(k[..., None] * frequencies(d_model)).sum(axis=-1)
