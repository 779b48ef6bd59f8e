"""Grader of the chapter "Rotary positions": ``rotate``, RoPE in NumPy, checked against
``aiayn.np.rotary.rotate`` and by the properties that make it a position code: pairs keep their
lengths, position 0 is left alone, q_m . k_n depends on m - n only, and an offset ``start`` is
the same as slicing a longer sequence. Shapes have B, H, T and d_k all different; the classic
slips (the other direction, the halves layout, frequencies i/d_k, positions from 1, a pair
updated from its own overwritten half, cos and sin of one layout with the partner of the other,
``start`` ignored) are recomputed here so that a failure names them."""

import numpy as np

from ...np.rotary import rotate as course_rotate
from ..calls import calls_made
from ..compare import as_numpy, call_on_read_only, expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("rotary_positions/rotate", "rotary_positions/rotate.py",
              "rotary positions: turn pair (2i, 2i+1) of a query or key at position m by m theta_i",
              zh="旋转位置编码：把位置 m 上查询或键的第 i 对特征 (2i, 2i+1) 旋转 m theta_i")

BACKWARDS = Text("you turned the pairs the other way, by -m theta_i: out_2i = x_2i cos + x_2i+1 "
                 "sin. The rotation by +m theta_i is [[cos, -sin], [sin, cos]]: out_2i = x_2i cos "
                 "- x_2i+1 sin, out_2i+1 = x_2i sin + x_2i+1 cos",
                 "你把每一对特征往反方向转了 -m theta_i：`out_2i = x_2i cos + x_2i+1 sin`。转 "
                 "+m theta_i 的旋转矩阵是 `[[cos, -sin], [sin, cos]]`："
                 "`out_2i = x_2i cos - x_2i+1 sin`，`out_2i+1 = x_2i sin + x_2i+1 cos`")
HALVES = Text("you paired feature i with feature i + d_k/2 (the rotate_half layout of GPT-NeoX "
              "and of Hugging Face's Llama): this course pairs neighbours, (2i, 2i+1), "
              "x[..., 0::2] with x[..., 1::2], as the RoPE paper writes it",
              "你把第 i 个特征和第 i + d_k/2 个特征配成了一对（GPT-NeoX 和 Hugging Face 的 Llama "
              "用的 rotate_half 布局）：本课程和 RoPE 论文一样，把相邻的 (2i, 2i+1) 配成一对，即 "
              "x[..., 0::2] 与 x[..., 1::2]")
EXPONENT_I = Text("your frequencies use the exponent i/d_k with i = 0 .. d_k/2 - 1: theta_i = "
                  "10000^(-2i/d_k), the even feature index 2i over d_k, as in the sinusoidal "
                  "table, np.arange(0, d_k, 2) / d_k",
                  "你的频率用的指数是 i/d_k，i = 0 .. d_k/2 - 1：应是 theta_i = 10000^(-2i/d_k)，"
                  "也就是偶数特征的编号 2i 除以 d_k，和正弦位置编码表一样，即 "
                  "np.arange(0, d_k, 2) / d_k")
GROWING = Text("your frequencies grow with i, 10000^(+2i/d_k): theta_i = 10000^(-2i/d_k) "
               "shrinks from 1 (pair 0 turns fastest) to about 1/10000 (the last pair, slowest)",
               "你的频率随 i 增大，是 10000^(+2i/d_k)：theta_i = 10000^(-2i/d_k) 应从 1（第 0 对"
               "转得最快）减小到约 1/10000（最后一对，最慢）")
FROM_ONE = Text("you counted the positions from 1: x[..., t, :] stands at position start + t, "
                "so the first vector of a sequence (start = 0) is at position 0 and is not turned",
                "你的位置从 1 开始数：x[..., t, :] 位于位置 start + t，所以序列的第一个向量"
                "（start = 0）位于位置 0，不旋转")
OVERWRITTEN = Text("the second line read the pair's first feature after the first line had "
                   "already replaced it: out_2i+1 = x_2i sin + x_2i+1 cos needs the old x_2i. "
                   "Take even, odd = x[..., 0::2], x[..., 1::2] before writing anything, and write "
                   "into a new array",
                   "第二行读到的是第一行已经改写过的第一个特征：out_2i+1 = x_2i sin + x_2i+1 cos "
                   "要用原来的 x_2i。先取出 even, odd = x[..., 0::2], x[..., 1::2]，再写入，而且写到"
                   "一个新数组里")
MIXED = Text("you mixed two layouts: cos and sin laid out per neighbouring pair (angle of pair "
             "j // 2 at feature j) but the partner taken from the other half (rotate_half, "
             "feature j + d_k/2). Then the two features of a pair turn by different angles, "
             "which is no rotation. Pair x[..., 0::2] with x[..., 1::2] and give both the angle "
             "m * theta_i",
             "你混用了两种布局：余弦和正弦按相邻的一对排列（第 j 个特征用第 j // 2 对的角度），"
             "搭档却取自另一半（rotate_half，第 j + d_k/2 个特征）。这样一对里的两个特征转过的"
             "角度不同，就不是旋转了。把 x[..., 0::2] 和 x[..., 1::2] 配成一对，两者都用角度 "
             "m * theta_i")
NO_START = Text("you ignored start: every call turned its first vector as position 0. A "
                "decoder with a cache rotates one new vector per step, at position start: use "
                "the positions start, start + 1, ..., start + T - 1",
                "你忽略了 start：每次调用都把第一个向量当成位置 0 来旋转。带缓存的解码器每一步"
                "只旋转一个新向量，它位于位置 start：位置要用 start, start + 1, ..., start + T - 1")
TURNED = Text("the turned vectors", "旋转后的向量")


def theta(d_k: int, exponent: float = -2.0) -> np.ndarray:
    """10000^(exponent * i / d_k) for i = 0 .. d_k/2 - 1 (the paper's: exponent -2)."""
    return 10000.0 ** (exponent * np.arange(d_k // 2) / d_k)


def turn_pairs(x, angle, layout="neighbours"):
    """x turned by ``angle`` (T, d_k/2) per pair in one of three layouts: "neighbours" (the
    course's), "halves" (rotate_half) or "mixed" (neighbours' angles, halves' partner)."""
    d = x.shape[-1]
    cos, sin = np.cos(angle), np.sin(angle)
    if layout == "neighbours":
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty(x.shape)
        out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
        return out
    if layout == "halves":
        first, second = x[..., :d // 2], x[..., d // 2:]
        return np.concatenate([first * cos - second * sin, first * sin + second * cos], -1)
    cos, sin = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)
    partner = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * cos + partner * sin


def mistakes(x, start=0):
    """(what each classic slip returns for ``rotate(x, start)``, its hint)."""
    T, d = x.shape[-2:]
    positions = np.arange(start, start + T)[:, None]
    even, odd = x[..., 0::2], x[..., 1::2]
    angle = positions * theta(d)
    cos, sin = np.cos(angle), np.sin(angle)
    overwritten = np.array(x, dtype=np.float64)
    overwritten[..., 0::2] = even * cos - odd * sin
    overwritten[..., 1::2] = overwritten[..., 0::2] * sin + odd * cos
    found = [(course_rotate(x, start, inverse=True), BACKWARDS),
             (turn_pairs(x, angle, "halves"), HALVES),
             (turn_pairs(x, positions * theta(d, -1.0)), EXPONENT_I),
             (turn_pairs(x, positions * theta(d, 2.0)), GROWING),
             (course_rotate(x, start + 1), FROM_ONE),
             (overwritten, OVERWRITTEN),
             (turn_pairs(x, angle, "mixed"), MIXED)]
    if start:
        found.append((course_rotate(x, 0), NO_START))
    return found


def sizes(rng):
    """B, H, T, d_k all different: a slip along the wrong axis cannot hide."""
    B, H = int(rng.integers(2, 4)), int(rng.integers(4, 6))
    T = H + int(rng.integers(2, 5))
    d_k = 2 * int(rng.integers(T // 2 + 1, T // 2 + 5))  # even, and more than T
    return B, H, T, d_k


def turned(mod, x, start=0, what=TURNED):
    """The reader's rotate(x, start) on a copy of x, as a plain NumPy array of x's shape."""
    got = need(mod, "rotate")(x.copy(), start)
    expect_array(got, "numpy", what)
    expect_shape(got, x.shape, what, SAME_SHAPE)
    return as_numpy(got)


SAME_SHAPE = Text("return one turned vector per input vector: the shape of x, (..., T, d_k)",
                  "每个输入向量对应一个旋转后的向量：形状与 x 相同，(..., T, d_k)")
SHAPE = "returns x's shape (..., T, d_k) for inputs of 2, 3 and 4 axes"
DTYPE = "keeps the dtype: float32 in, float32 out; float64 in, float64 out"
VALUE = "equals the course's rotation: pair i at position m turned by m theta_i"
LENGTHS = "every pair (x_2i, x_2i+1) keeps its length"
POSITION_0 = "start = 0: the vector at position 0 comes back unchanged"
RELATIVE = "q_m . k_n depends on m - n only, at positions into the thousands"
START = "rotate(x[..., s:, :], start=s) equals rotate(x)[..., s:, :], one new position too"
UNCHANGED = "leaves x unchanged"
OWN = "turns the pairs itself, with nothing from aiayn's rotary modules"


@ex.check(SHAPE, zh="对 2、3、4 维的输入都返回与 x 相同的形状 (..., T, d_k)")
def _(mod, rng):
    B, H, T, d_k = sizes(rng)
    for shape in ((T, d_k), (B, T, d_k), (B, H, T, d_k)):
        x = rng.standard_normal(shape)
        got = need(mod, "rotate")(x.copy(), 0)
        expect_array(got, "numpy", TURNED)
        hint = SAME_SHAPE
        if np.shape(got) == (*shape[:-1], d_k // 2, 2):
            hint = tr("you stacked the two features of each pair on a new last axis: reshape it "
                      "back to (..., T, d_k), or write into np.empty_like(x) at [..., 0::2] and "
                      "[..., 1::2]",
                      "你把每一对的两个特征叠在了新的最后一维上：要 reshape 回 (..., T, d_k)，"
                      "或者写进 np.empty_like(x) 的 [..., 0::2] 和 [..., 1::2]")
        expect_shape(got, shape, TURNED, hint)


@ex.check(DTYPE, zh="保持 dtype：输入 float32 则输出 float32，输入 float64 则输出 float64")
def _(mod, rng):
    B, H, T, d_k = sizes(rng)
    for dtype in (np.float32, np.float64):
        got = turned(mod, rng.standard_normal((B, T, d_k)).astype(dtype), int(rng.integers(0, 50)))
        if got.dtype != dtype:
            raise CheckFailed(tr(f"dtype {np.dtype(dtype)} for {np.dtype(dtype)} input",
                                 f"输入为 {np.dtype(dtype)} 时 dtype 为 {np.dtype(dtype)}"),
                              str(got.dtype), tr(
                "np.zeros(x.shape) and np.empty(x.shape) are float64 whatever x is, and cos and "
                "sin computed in float64 turn a float32 product into float64: write into "
                "np.empty_like(x), or cast them with .astype(x.dtype)",
                "np.zeros(x.shape) 和 np.empty(x.shape) 不管 x 是什么类型都是 float64，而用 "
                "float64 算出的余弦和正弦也会把 float32 的乘积变成 float64：写进 "
                "np.empty_like(x)，或者用 .astype(x.dtype) 转换它们"))


@ex.check(VALUE, zh="与课程的旋转相同：位置 m 上的第 i 对转过 m theta_i")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    expect_close(turned(mod, x), course_rotate(x), TURNED, tr(
        "out_2i = x_2i cos(m theta_i) - x_2i+1 sin(m theta_i), out_2i+1 = x_2i sin(m theta_i) + "
        "x_2i+1 cos(m theta_i), theta_i = 10000^(-2i/d_k), m = start + t",
        "out_2i = x_2i cos(m theta_i) - x_2i+1 sin(m theta_i)，out_2i+1 = x_2i sin(m theta_i) + "
        "x_2i+1 cos(m theta_i)，theta_i = 10000^(-2i/d_k)，m = start + t"), mistakes(x))


def pair_lengths(x):
    x = np.asarray(x, dtype=np.float64)
    return np.hypot(x[..., 0::2], x[..., 1::2])


@ex.check(LENGTHS, zh="每一对 (x_2i, x_2i+1) 的长度都不变")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    start = int(rng.integers(0, 100))
    expect_close(pair_lengths(turned(mod, x, start)), pair_lengths(x),
                 tr("the lengths of the pairs", "各对特征的长度"), tr(
                     "a rotation keeps lengths: both features of a pair turn by the same angle, "
                     "through [[cos, -sin], [sin, cos]], computed from the pair as it was",
                     "旋转不改变长度：一对里的两个特征转过同一个角度，用 "
                     "`[[cos, -sin], [sin, cos]]`，并且从这一对原来的值算起"),
                 [(pair_lengths(value), hint) for value, hint in mistakes(x, start)], atol=1e-10)


@ex.check(POSITION_0, zh="start = 0 时，位置 0 的向量原样返回")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    expect_close(turned(mod, x)[..., 0, :], x[..., 0, :], tr(
        "position 0 after the rotation", "旋转之后的位置 0"), tr(
        "at position m = 0 every angle m theta_i is 0: cos = 1, sin = 0, nothing turns",
        "在位置 m = 0，每个角度 m theta_i 都是 0：cos = 1，sin = 0，什么都不转"),
        [(value[..., 0, :], hint) for value, hint in mistakes(x)], atol=1e-12, rtol=0.0)


@ex.check(RELATIVE, zh="q_m . k_n 只取决于 m - n，位置到几千也一样")
def _(mod, rng):
    d_k, T = 2 * int(rng.integers(4, 9)), int(rng.integers(24, 40))
    q, k = rng.standard_normal(d_k), rng.standard_normal(d_k)
    queries, keys = np.tile(q, (T, 1)), np.tile(k, (T, 1))  # one query and one key, T positions
    for start in (0, int(rng.integers(1000, 3000))):
        scores = turned(mod, queries, start) @ turned(mod, keys, start).T  # [m, n] = q_m . k_n
        slips = [((a @ b.T)[1:, 1:], hint) for (a, hint), (b, _) in
                 zip(mistakes(queries, start), mistakes(keys, start))]
        expect_close(scores[1:, 1:], scores[:-1, :-1], "S[1:, 1:]", tr(
            f"S[m, n] = q_m . k_n, one query and one key turned to the positions {start} + m and "
            f"{start} + n: every diagonal of S is constant, S[m + 1, n + 1] = S[m, n]. Turning q "
            "by m theta and k by n theta changes q . k only through the angle between them, "
            "(m - n) theta, when both features of a pair turn by one angle m * theta_i",
            f"S[m, n] = q_m . k_n，即同一个查询和同一个键分别转到位置 {start} + m 和 {start} + n："
            "S 的每条对角线都是常数，S[m + 1, n + 1] = S[m, n]。一对里的两个特征转过同一个角度 "
            "m * theta_i 时，把 q 转 m theta、k 转 n theta，q . k 只通过两者之间的角度 "
            "(m - n) theta 变化"), slips, atol=1e-9)


@ex.check(START, zh="rotate(x[..., s:, :], start=s) 等于 rotate(x)[..., s:, :]，只有一个新位置时也一样")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    T = x.shape[-2]
    whole = turned(mod, x)
    for s, stop in ((int(rng.integers(1, T - 1)), T), (T - 1, T)):
        tail = x[..., s:stop, :]
        expect_close(turned(mod, tail, s), whole[..., s:stop, :],
                     f"rotate(x)[..., {s}:, :]", tr(
                         f"x[..., {s}:, :] with start = {s} stands at the positions {s}, "
                         f"{s + 1}, ...: turn it exactly as rotate(x) turns those rows",
                         f"start = {s} 时，x[..., {s}:, :] 位于位置 {s}, {s + 1}, ...：要像 "
                         "rotate(x) 旋转这几行那样旋转它"),
                     [(course_rotate(tail, 0), NO_START)], atol=1e-10)


@ex.check(UNCHANGED, zh="不修改 x")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    start = int(rng.integers(0, 20))
    got = call_on_read_only(need(mod, "rotate"), {"x": x, "start": start}, tr(
        "the caller still needs x: x[..., 0::2] = ... writes into the caller's array. Take "
        "even, odd = x[..., 0::2], x[..., 1::2] and write the result into a new array, "
        "np.empty_like(x)",
        "调用者还要用 x：x[..., 0::2] = ... 会写进调用者的数组。先取出 even, odd = "
        "x[..., 0::2], x[..., 1::2]，再把结果写进一个新数组 np.empty_like(x)"))
    expect_array(got, "numpy", TURNED)  # the values are the other checks' business


@ex.check(OWN, zh="自己旋转每一对特征，不调用课程的 aiayn.np.rotary 或 aiayn.pt.rotary")
def _(mod, rng):
    x = rng.standard_normal(sizes(rng))
    _, course_calls, _ = calls_made(need(mod, "rotate"), x, int(rng.integers(0, 20)))
    used = [c for c in course_calls if c.split(":")[0] in ("aiayn/np/rotary.py",
                                                          "aiayn/pt/rotary.py")]
    if used:
        raise CheckFailed(tr("no call into the course's rotary modules",
                             "不调用课程的 rotary 模块"),
                          tr(", ", "、").join(list(dict.fromkeys(used))[:3]), tr(
                              "write the rotation here: the angles m * theta_i, their cos and "
                              "sin, and the two lines for each pair. aiayn.np.rotary is what "
                              "your code is compared with",
                              "在这里自己写出旋转：角度 m * theta_i、它们的余弦和正弦，以及每一对"
                              "的两行公式。aiayn.np.rotary 正是评分时用来对照的答案"))


ex.keeps({
    "rotate: shape": SHAPE,
    "rotate: dtype": DTYPE,
    "rotate: value": VALUE,
    "rotate: lengths": LENGTHS,
    "rotate: position-0": POSITION_0,
    "rotate: relative": RELATIVE,
    "rotate: start": START,
    "rotate: input-unchanged": UNCHANGED,
    "rotate: own": OWN,
})
