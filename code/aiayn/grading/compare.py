"""Comparisons that fail with a lesson instead of a bare ``AssertionError``.

Every ``expect_*`` raises ``CheckFailed`` showing the expected and the received values at the
place where they differ most. ``mistakes`` is a list of ``(value, hint)``: what a known wrong
implementation would have returned on the same inputs, and what to tell a reader whose result
matches it. That is how a grader recognises "forgot the scale" or "wrong axis" and says so.

Every comparison that passes is also kept as evidence (``evidence.py``): the grader's parent
process does it again on the plain arrays, with its own NumPy.
"""

from __future__ import annotations

import re

import numpy as np

from . import evidence
from .core import CheckFailed
from .language import Text, text, tr

NUMBER_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex numbers


def as_numpy(x) -> np.ndarray:
    """A plain NumPy array of numbers from an array or a tensor (detached, on the CPU). Anything
    else fails the check: an array of Python objects, a generator, an object that only claims to
    be an array; so no comparison runs methods the reader wrote (an ``__eq__`` that says yes)."""
    given = type(x).__name__
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if x.dtype.is_floating_point:
            x = x.double()  # NumPy has no bfloat16; float64 shows every digit that matters
        x = x.numpy()
    x = np.asarray(x)  # an ndarray subclass becomes a plain ndarray (its methods are gone)
    if type(x) is not np.ndarray or x.dtype.kind not in NUMBER_KINDS:
        dtype = getattr(x, "dtype", "?")
        raise CheckFailed(tr("numbers: a NumPy array or a torch.Tensor",
                             "数值：一个 NumPy 数组或 torch.Tensor"),
                          tr(f"{given} (as an array: dtype {dtype})",
                             f"{given}（转成数组后 dtype 为 {dtype}）"),
                          tr("return an array or a tensor of numbers, not a list of objects, a "
                             "generator or a class of your own",
                             "返回由数值组成的数组或张量，不要返回对象列表、生成器或你自己定义的类"))
    return x


def fmt(x, items: int = 6) -> str:
    """A short, rounded rendering of a 1-D row."""
    x = np.asarray(x).ravel()
    more = tr(f" ... ({x.size} values)", f" ……（共 {x.size} 个值）") if x.size > items else ""
    with np.printoptions(precision=4, suppress=True, floatmode="maxprec"):
        return np.array2string(x[:items], separator=" ") + more


def shape_str(x) -> str:
    return str(tuple(int(s) for s in np.shape(x)))


def expect_array(got, kind: str, what: str | Text) -> None:
    """``kind`` is "numpy" or "torch": the type the exercise asks for."""
    ok = isinstance(got, np.ndarray) if kind == "numpy" else hasattr(got, "detach")
    if not ok:
        want = tr("a NumPy array", "NumPy 数组") if kind == "numpy" else "torch.Tensor"
        library = "NumPy" if kind == "numpy" else "PyTorch"
        raise CheckFailed(tr(f"{what} as {'a ' if kind == 'torch' else ''}{want}",
                             f"{what} 是 {want}"), f"{type(got).__name__}",
                          tr(f"return {'a ' if kind == 'torch' else ''}{want}; stay in {library} "
                             "from input to output",
                             f"返回 {want}；从输入到输出都留在 {library} 里"))


def of_shape(what, shape) -> str:
    """"weights of shape (2, 3)", in the current language."""
    return tr(f"{what} of shape {shape}", f"{what}，形状为 {shape}")


def expect_shape(got, shape: tuple, what: str | Text, hint: str | Text) -> None:
    got_shape, want_shape = tuple(int(s) for s in np.shape(got)), tuple(int(s) for s in shape)
    what, hint = text(what), text(hint)
    if got_shape != want_shape:
        raise CheckFailed(of_shape(what, tuple(shape)), tr(f"shape {got_shape}",
                                                           f"形状为 {got_shape}"), hint)
    evidence.keep("shape", got_shape, want_shape, what, hint)


def _close(a, b, atol, rtol) -> bool:
    if a.shape != b.shape:
        return False
    if atol == rtol == 0.0 or a.dtype == bool or b.dtype == bool:
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=False))


def _where_worst(got: np.ndarray, want: np.ndarray) -> tuple:
    """Index (all axes but the last) of the row where ``got`` and ``want`` differ most."""
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    diff = np.where(np.isnan(diff), np.inf, diff)
    if got.ndim == 0:
        return ()
    return np.unravel_index(np.argmax(diff.max(axis=-1)), got.shape[:-1])


def expect_close(got, want, what: str | Text, hint: str | Text, mistakes=(), atol=1e-8,
                 rtol=1e-6) -> None:
    """``got`` equals ``want`` to tolerance, else the hint of the first matching mistake.
    ``what``, ``hint`` and the mistakes' hints: strings or ``Text``."""
    got, want = as_numpy(got), as_numpy(want)
    what, hint = text(what), text(hint)
    if got.shape != want.shape:
        raise CheckFailed(of_shape(what, shape_str(want)),
                          tr(f"shape {shape_str(got)}", f"形状为 {shape_str(got)}"), hint)
    if _close(got, want, atol, rtol):
        evidence.keep("close", got, want, float(atol), float(rtol), what, hint)
        return
    for value, mistake_hint in mistakes:
        if _close(got, as_numpy(value), atol, rtol):
            hint = text(mistake_hint)
            break
    else:
        if np.isnan(got).any():
            hint = tr(f"your result contains NaN. {hint}", f"你的结果里有 NaN。{hint}")
    idx = _where_worst(got, want)
    at = f"[{', '.join(map(str, idx))}]" if idx else ""
    if at and re.search("[\u4e00-\u9fff]", what):  # a name in words: say which row it is
        at = tr(at, f"中 {at} 处的一行")
    if got.dtype.kind in "biu":  # masks and token ids: count, do not measure
        differ = int((got != want).sum())
        how = tr(f"{differ} of {got.size} entries differ", f"{got.size} 个元素中有 {differ} 个不同")
    else:
        size = f"{np.abs(got[idx] - want[idx]).max():.3g}"
        how = tr(f"largest difference {size}", f"最大差值 {size}")
    raise CheckFailed(f"{what}{at} = {fmt(want[idx])}", tr(f"{fmt(got[idx])} ({how})",
                                                           f"{fmt(got[idx])}（{how}）"), hint)


def expect_equal(got, want, what: str | Text, hint: str | Text, mistakes=()) -> None:
    """Exact equality (booleans, integer ids), with the same mistake recognition."""
    expect_close(got, want, what, hint, mistakes, atol=0.0, rtol=0.0)


def expect_finite(got, what: str | Text, hint: str | Text) -> None:
    got = as_numpy(got)
    what, hint = text(what), text(hint)
    bad = ~np.isfinite(got)
    if bad.any():
        idx = tuple(int(i[0]) for i in np.nonzero(bad))
        raise CheckFailed(tr(f"finite {what}", f"{what} 全是有限值"),
                          tr(f"{got[idx]} at index {list(idx)}", f"下标 {list(idx)} 处为 {got[idx]}"),
                          hint)
    evidence.keep("finite", got, what, hint)


def raised(error: BaseException) -> str:
    """"ValueError: <the first line of its message>", short, for a failure's "got" line (in
    Chinese on a line of its own: the message is the library's English)."""
    lines = str(error).splitlines() or [""]
    message = f"{type(error).__name__}: {lines[0][:80]}"
    return tr(message, "抛出了异常：\n" + " " * 10 + message)


def call_on_read_only(fn, inputs: dict, hint: str | Text):
    """``fn(*inputs.values())`` with read-only copies of the arrays, then each compared with
    what it was: a write into an input (``x -= mean``, ``out=x``, ``x.shape = ...``) fails with
    ``hint`` instead of surprising the caller later. Returns what ``fn`` returned."""
    hint = text(hint)
    given = {name: np.array(value) if isinstance(value, np.ndarray) else value
             for name, value in inputs.items()}
    before = {name: value.copy() for name, value in given.items()
              if isinstance(value, np.ndarray)}
    for name in before:
        given[name].flags.writeable = False
    try:
        result = fn(*given.values())
    except ValueError as error:
        if "read-only" not in str(error):
            raise
        raise CheckFailed(tr("your code to leave its inputs as they were",
                             "你的代码不改动它的输入"), raised(error), hint) from None
    for name, value in before.items():
        after = tr(f"{name} after the call", f"调用之后的 {name}")
        expect_shape(given[name], value.shape, after, hint)
        expect_close(given[name], value, after, hint, atol=0.0, rtol=0.0)
    return result
