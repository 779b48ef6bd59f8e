"""Graders of the chapter "Positional encoding": the sinusoidal table (checked against
``aiayn.np.embeddings.sinusoidal_table``) and the shift matrix M_k (against
``aiayn.lab.positional.shift_matrix``, and by the property PE_{pos+k} = M_k PE_pos itself)."""

import numpy as np

from ...lab.positional import shift_matrix as course_shift
from ...np.embeddings import sinusoidal_table as course_table
from ..compare import expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

SWAPPED = Text("sin and cos are swapped: even columns 2i hold sin(pos w_i), odd columns 2i+1 hold "
               "cos(pos w_i) (at pos = 0 the even columns are 0 and the odd ones 1)",
               "正弦和余弦对调了：偶数列 2i 放 sin(pos w_i)，奇数列 2i+1 放 cos(pos w_i)"
               "（pos = 0 时偶数列为 0，奇数列为 1）")
EXPONENT_I = Text("your frequencies use the exponent i/d_model with i = 0 .. d_model/2 - 1: the "
                  "paper writes 10000^(2i/d_model), i.e. the even column index 2i = 0, 2, 4, ... "
                  "over d_model, so the wavelengths reach 10000 * 2 pi, not only 100 * 2 pi",
                  "你的频率用的指数是 i/d_model，i = 0 .. d_model/2 - 1：论文写的是 "
                  "10000^(2i/d_model)，也就是偶数列的编号 2i = 0, 2, 4, ... 除以 d_model，所以波长"
                  "能到 10000 * 2 pi，而不是只到 100 * 2 pi")
EXPONENT_COLUMN = Text("every column got its own frequency 10000^(-j/d_model): columns 2i and "
                       "2i+1 must share the same w_i = 10000^(-2i/d_model) (a sin and a cos of "
                       "one angle)",
                       "每一列都用了自己的频率 10000^(-j/d_model)：第 2i 列和第 2i+1 列必须共用同一个 "
                       "w_i = 10000^(-2i/d_model)（同一个角度的正弦和余弦）")
HALVES = Text("you stored all sines first, then all cosines (the tensor2tensor layout): the "
              "paper interleaves them, sin in column 2i and cos in column 2i+1 "
              "(table[:, 0::2], table[:, 1::2])",
              "你先放全部正弦，再放全部余弦（tensor2tensor 的布局）：论文是交错排列的，第 2i 列"
              "放正弦，第 2i+1 列放余弦（table[:, 0::2]，table[:, 1::2]）")
TABLE = Text("the table", "位置编码表")


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
                 "the sinusoidal positional encoding table, sin on even and cos on odd columns",
                 zh="正弦位置编码表：偶数列是正弦，奇数列是余弦")


@table.check("shape (max_len, d_model), float64, row 0 is (0, 1, 0, 1, ...)",
             zh="形状为 (max_len, d_model)，float64，第 0 行是 (0, 1, 0, 1, ...)")
def _(mod, rng):
    max_len, d = int(rng.integers(5, 30)), 2 * int(rng.integers(3, 9))
    got = need(mod, "sinusoidal_table")(max_len, d)
    expect_array(got, "numpy", TABLE)
    expect_shape(got, (max_len, d), TABLE, tr(
        "one row per position, one column per dimension: (max_len, d_model), not its transpose",
        "每个位置一行，每个维度一列：(max_len, d_model)，不是它的转置"))
    if got.dtype != np.float64:
        raise CheckFailed(tr("dtype float64", "dtype 为 float64"), str(got.dtype), tr(
            "build the table in float64 (the NumPy default): float32 loses the slow sinusoids' "
            "digits", "用 float64（NumPy 的默认类型）构造这张表：float32 会丢掉缓慢变化的正弦的"
            "有效数字"))
    expect_close(got[0], course_table(max_len, d)[0], tr("row 0 (position 0)", "第 0 行（位置 0）"),
                 SWAPPED, table_mistakes(max_len, d)[:1])


@table.check("equals the paper's sinusoids, PE(pos, 2i) = sin, PE(pos, 2i+1) = cos",
             zh="与论文的正弦编码相同：PE(pos, 2i) 是正弦，PE(pos, 2i+1) 是余弦")
def _(mod, rng):
    max_len, d = int(rng.integers(20, 60)), 2 * int(rng.integers(4, 17))
    expect_close(need(mod, "sinusoidal_table")(max_len, d), course_table(max_len, d), TABLE, tr(
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same)",
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model))，PE(pos, 2i+1) 是同一角度的 cos"),
        table_mistakes(max_len, d))


@table.check("stays exact at distant positions (max_len in the thousands)",
             zh="在很远的位置上依然精确（max_len 达到几千）")
def _(mod, rng):
    max_len, d = int(rng.integers(2000, 5000)), 2 * int(rng.integers(8, 33))
    expect_close(need(mod, "sinusoidal_table")(max_len, d), course_table(max_len, d), TABLE, tr(
        "compute pos * w_i in float64 from integer positions; the table must match at every "
        "position, not only the first few",
        "用整数位置在 float64 下计算 pos * w_i；整张表每个位置都要对得上，不能只对前几个"),
        table_mistakes(max_len, d))


shift = exercise("positional_encoding/shift_matrix", "positional_encoding/shift_matrix.py",
                 "the shift matrix M_k: PE_{pos+k} = M_k PE_pos for every position",
                 zh="平移矩阵 M_k：对每个位置都有 PE_{pos+k} = M_k PE_pos")

IDENTITY = Text("your M_k for a negative k is the identity, as a product over range(k) (empty "
                "for k < 0) gives: build the rotation by the angle k w_i directly, which works "
                "for any integer k (M_{-k} = M_k^T)",
                "k 为负数时，你的 M_k 是单位矩阵，对 range(k) 连乘（k < 0 时 range 为空）就会得到"
                "这个结果：直接构造转过角度 k w_i 的旋转，它对任何整数 k 都成立（M_{-k} = M_k^T）")
TRANSPOSED = Text("you built M_{-k} = M_k^T: it moves back by k positions. With column vectors, "
                  "row 2i of M_k gives sin(a + b) = sin a cos b + cos a sin b, so the block is "
                  "[[cos(k w_i), sin(k w_i)], [-sin(k w_i), cos(k w_i)]]",
                  "你构造的是 M_{-k} = M_k^T：它往回移 k 个位置。按列向量计算，M_k 的第 2i 行给出 "
                  "sin(a + b) = sin a cos b + cos a sin b，所以这个块是 "
                  "[[cos(k w_i), sin(k w_i)], [-sin(k w_i), cos(k w_i)]]")


@shift.check("shape (d_model, d_model): moves every row of the table by k positions",
             zh="形状为 (d_model, d_model)：把表的每一行都移动 k 个位置")
def _(mod, rng):
    k, d = int(rng.integers(1, 50)), 2 * int(rng.integers(3, 17))
    m = need(mod, "shift_matrix")(k, d)
    expect_array(m, "numpy", "M_k")
    expect_shape(m, (d, d), "M_k", tr("one row and one column per dimension of the encoding",
                                      "编码的每个维度对应一行一列"))
    if m.dtype != np.float64:
        raise CheckFailed(tr("dtype float64", "dtype 为 float64"), str(m.dtype), tr(
            "build M_k in float64 (np.zeros((d, d)) is float64): float32 keeps about 7 digits, "
            "and the table's slow sinusoids at large positions need more",
            "用 float64 构造 M_k（np.zeros((d, d)) 就是 float64）：float32 只有约 7 位有效数字，"
            "而表中缓慢变化的正弦在大位置上需要更多位"))
    pe = course_table(200 + k, d)
    expect_close(pe[:-k] @ np.asarray(m).T, pe[k:], tr(
        f"PE_(pos+{k}) = M_k PE_pos, all positions", f"对所有位置，PE_(pos+{k}) = M_k PE_pos"), tr(
        "M_k rotates each pair (2i, 2i+1) by the angle k w_i; build it from cos(k w_i) and "
        "sin(k w_i), the same for every position",
        "M_k 把每一对 (2i, 2i+1) 旋转角度 k w_i；用 cos(k w_i) 和 sin(k w_i) 构造它，对每个位置都"
        "一样"), [(pe[:-k] @ course_shift(k, d), TRANSPOSED)], atol=1e-9)


@shift.check("equals the course's M_k, for negative offsets too",
             zh="与课程的 M_k 相同，偏移为负数时也一样")
def _(mod, rng):
    d = 2 * int(rng.integers(3, 17))
    for k in (int(rng.integers(1, 1000)), -int(rng.integers(1, 1000))):
        expect_close(need(mod, "shift_matrix")(k, d), course_shift(k, d),
                     tr(f"M_k for k = {k}", f"k = {k} 时的 M_k"), tr(
                         "block i on rows/columns (2i, 2i+1): [[cos(k w_i), sin(k w_i)], "
                         "[-sin(k w_i), cos(k w_i)]], w_i = 10000^(-2i/d_model), zeros elsewhere",
                         "第 i 个块位于第 (2i, 2i+1) 行和列：[[cos(k w_i), sin(k w_i)], "
                         "[-sin(k w_i), cos(k w_i)]]，w_i = 10000^(-2i/d_model)，其余位置为 0"),
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
