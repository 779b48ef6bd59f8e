"""Graders of the chapter "Positional encoding": the sinusoidal table (checked against
``aiayn.np.embeddings.sinusoidal_table``) and the shift matrix M_k (against
``aiayn.lab.positional.shift_matrix``, and by the property PE_{pos+k} = M_k PE_pos itself)."""

import numpy as np

from ...lab.positional import shift_matrix as course_shift
from ...np.embeddings import sinusoidal_table as course_table
from ..compare import expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import tr

SWAPPED = ("sin and cos are swapped: even columns 2i hold sin(pos w_i), odd columns 2i+1 hold "
           "cos(pos w_i) (at pos = 0 the even columns are 0 and the odd ones 1)")
EXPONENT_I = ("your frequencies use the exponent i/d_model with i = 0 .. d_model/2 - 1: the paper "
              "writes 10000^(2i/d_model), i.e. the even column index 2i = 0, 2, 4, ... over "
              "d_model, so the wavelengths reach 10000 * 2 pi, not only 100 * 2 pi")
EXPONENT_COLUMN = ("every column got its own frequency 10000^(-j/d_model): columns 2i and 2i+1 "
                   "must share the same w_i = 10000^(-2i/d_model) (a sin and a cos of one angle)")
HALVES = ("you stored all sines first, then all cosines (the tensor2tensor layout): the paper "
          "interleaves them, sin in column 2i and cos in column 2i+1 "
          "(table[:, 0::2], table[:, 1::2])")


def table_mistakes(max_len, d):
    pos = np.arange(max_len)[:, None]

    def interleave(sin, cos):
        t = np.empty((max_len, d))
        t[:, 0::2], t[:, 1::2] = sin, cos
        return t

    w = 10000.0 ** (-np.arange(0, d, 2) / d)
    w_i = 10000.0 ** (-np.arange(d // 2) / d)
    w_col = 10000.0 ** (-np.arange(d) / d)
    by_column = np.where(np.arange(d) % 2 == 0, np.sin(pos * w_col), np.cos(pos * w_col))
    return [(interleave(np.cos(pos * w), np.sin(pos * w)), SWAPPED),
            (interleave(np.sin(pos * w_i), np.cos(pos * w_i)), EXPONENT_I),
            (by_column, EXPONENT_COLUMN),
            (np.concatenate([np.sin(pos * w), np.cos(pos * w)], axis=1), HALVES)]


table = exercise("positional_encoding/sinusoidal_table", "positional_encoding/sinusoidal_table.py",
                 "the sinusoidal positional encoding table, sin on even and cos on odd columns")


@table.check("shape (max_len, d_model), float64, row 0 is (0, 1, 0, 1, ...)")
def _(mod, rng):
    max_len, d = int(rng.integers(5, 30)), 2 * int(rng.integers(3, 9))
    got = need(mod, "sinusoidal_table")(max_len, d)
    expect_array(got, "numpy", "the table")
    expect_shape(got, (max_len, d), "the table", "one row per position, one column per "
                 "dimension: (max_len, d_model), not its transpose")
    if got.dtype != np.float64:
        raise CheckFailed("dtype float64", str(got.dtype), "build the table in float64 (the "
                          "NumPy default): float32 loses the slow sinusoids' digits")
    expect_close(got[0], course_table(max_len, d)[0], "row 0 (position 0)", SWAPPED,
                 table_mistakes(max_len, d)[:1])


@table.check("equals the paper's sinusoids, PE(pos, 2i) = sin, PE(pos, 2i+1) = cos")
def _(mod, rng):
    max_len, d = int(rng.integers(20, 60)), 2 * int(rng.integers(4, 17))
    expect_close(need(mod, "sinusoidal_table")(max_len, d), course_table(max_len, d), "the table",
                 "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same)",
                 table_mistakes(max_len, d))


@table.check("stays exact at distant positions (max_len in the thousands)")
def _(mod, rng):
    max_len, d = int(rng.integers(2000, 5000)), 2 * int(rng.integers(8, 33))
    expect_close(need(mod, "sinusoidal_table")(max_len, d), course_table(max_len, d), "the table",
                 "compute pos * w_i in float64 from integer positions; the table must match "
                 "at every position, not only the first few", table_mistakes(max_len, d))


shift = exercise("positional_encoding/shift_matrix", "positional_encoding/shift_matrix.py",
                 "the shift matrix M_k: PE_{pos+k} = M_k PE_pos for every position")

IDENTITY = ("your M_k for a negative k is the identity, as a product over range(k) (empty for "
            "k < 0) gives: build the rotation by the angle k w_i directly, which works for any "
            "integer k (M_{-k} = M_k^T)")
TRANSPOSED = ("you built M_{-k} = M_k^T: it moves back by k positions. With column vectors, "
              "row 2i of M_k gives sin(a + b) = sin a cos b + cos a sin b, so the block is "
              "[[cos(k w_i), sin(k w_i)], [-sin(k w_i), cos(k w_i)]]")


@shift.check("shape (d_model, d_model): moves every row of the table by k positions")
def _(mod, rng):
    k, d = int(rng.integers(1, 50)), 2 * int(rng.integers(3, 17))
    m = need(mod, "shift_matrix")(k, d)
    expect_array(m, "numpy", "M_k")
    expect_shape(m, (d, d), "M_k", "one row and one column per dimension of the encoding")
    if m.dtype != np.float64:
        raise CheckFailed("dtype float64", str(m.dtype), tr(
            "build M_k in float64 (np.zeros((d, d)) is float64): float32 keeps about 7 digits, "
            "and the table's slow sinusoids at large positions need more",
            "用 float64 构造 M_k（np.zeros((d, d)) 就是 float64）：float32 只有约 7 位有效数字，"
            "而表中缓慢变化的正弦在大位置上需要更多位"))
    pe = course_table(200 + k, d)
    expect_close(pe[:-k] @ np.asarray(m).T, pe[k:], f"PE_(pos+{k}) = M_k PE_pos, all positions",
                 "M_k rotates each pair (2i, 2i+1) by the angle k w_i; build it from "
                 "cos(k w_i) and sin(k w_i), the same for every position",
                 [(pe[:-k] @ course_shift(k, d), TRANSPOSED)], atol=1e-9)


@shift.check("equals the course's M_k, for negative offsets too")
def _(mod, rng):
    d = 2 * int(rng.integers(3, 17))
    for k in (int(rng.integers(1, 1000)), -int(rng.integers(1, 1000))):
        expect_close(need(mod, "shift_matrix")(k, d), course_shift(k, d), f"M_k for k = {k}",
                     "block i on rows/columns (2i, 2i+1): [[cos(k w_i), sin(k w_i)], "
                     "[-sin(k w_i), cos(k w_i)]], w_i = 10000^(-2i/d_model), zeros elsewhere",
                     [(course_shift(-k, d), TRANSPOSED), (np.eye(d), IDENTITY)], atol=1e-10)


table.keeps({
    "sinusoidal_table: shape": "shape (max_len, d_model), float64, row 0 is (0, 1, 0, 1, ...)",
    "sinusoidal_table: value": ("equals the paper's sinusoids, PE(pos, 2i) = sin, PE(pos, 2i+1) "
                                "= cos", "stays exact at distant positions (max_len in the "
                                "thousands)"),
})
shift.keeps({
    "shift_matrix: shift": "shape (d_model, d_model): moves every row of the table by k positions",
    "shift_matrix: negative": "equals the course's M_k, for negative offsets too",
    "shift_matrix: float64": "shape (d_model, d_model): moves every row of the table by k "
                             "positions",
})
