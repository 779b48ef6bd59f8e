"""Evidence: what each passing comparison compared, as plain data, for the parent to redo.

While a check runs in the grader's child process (runner.py), ``compare.expect_*`` append every
comparison that passes to the list ``start_recording`` returned: the arrays, tolerances and
texts. ``to_plain`` turns each array into (dtype string, shape, raw bytes); the parent's
``recheck`` accepts arrays of numbers only, checks that the bytes fit the shape, and runs the
same ``expect_*`` with its own NumPy, which the reader's code never touched. A reader's file that made the child's NumPy,
PyTorch or comparison functions lie still fails there.
"""

from __future__ import annotations

import math

import numpy as np

from . import compare
from .core import CheckFailed
from .language import tr

_recording: list | None = None  # a list while a check runs in the child


def start_recording() -> list:
    """In the child: from now on, passing comparisons are appended to the returned list."""
    global _recording
    _recording = []
    return _recording


def stop_recording() -> None:
    global _recording
    _recording = None


def keep(*entry) -> None:
    """Appends ``entry`` while recording, its arrays copied (the reader's code may change the
    arrays it returned after the comparison); does nothing otherwise."""
    if _recording is not None:
        _recording.append(tuple(x.copy() if isinstance(x, np.ndarray) else x for x in entry))


def to_plain(entries: list) -> list:
    """Arrays as (dtype string, shape, bytes): plain data the parent can check and load."""
    def plain(item):
        if not isinstance(item, np.ndarray):
            return item
        return (item.dtype.str, tuple(int(n) for n in item.shape), item.tobytes())
    return [tuple(plain(item) for item in entry) for entry in entries]


def recheck(entries: list) -> CheckFailed | None:
    """In the parent: each comparison the child says passed, done again here; the first that
    fails, or None. ValueError for anything that is not evidence as ``to_plain`` writes it."""
    for entry in entries:
        kind, *args = entry if isinstance(entry, tuple) and entry else ("?",)
        try:
            if kind == "close" and len(args) == 6:
                got, want, atol, rtol, what, hint = args
                compare.expect_close(_array(got), _array(want), _text(what), _text(hint),
                                     atol=_number(atol), rtol=_number(rtol))
            elif kind == "finite" and len(args) == 3:
                compare.expect_finite(_array(args[0]), _text(args[1]), _text(args[2]))
            elif kind == "shape" and len(args) == 4:
                got, want, what, hint = args
                if _shape(got) != _shape(want):
                    raise CheckFailed(compare.of_shape(_text(what), want),
                                      tr(f"shape {got}", f"形状为 {got}"), _text(hint))
            else:
                raise ValueError(f"not a comparison: a {type(entry).__name__}")
        except CheckFailed as failure:
            return failure
    return None


def _array(data) -> np.ndarray:
    """The array ``to_plain`` described, if it is one of numbers whose bytes fit its shape."""
    if not (isinstance(data, tuple) and len(data) == 3 and isinstance(data[0], str)
            and isinstance(data[2], bytes)):
        raise ValueError(f"expected (dtype, shape, bytes), got a {type(data).__name__}")
    dtype, shape, raw = np.dtype(data[0]), _shape(data[1]), data[2]
    if dtype.kind not in compare.NUMBER_KINDS or dtype.fields is not None:
        raise ValueError(f"not an array of numbers: dtype {dtype}")
    if min(shape, default=0) < 0 or math.prod(shape) * dtype.itemsize != len(raw):
        raise ValueError(f"{len(raw)} bytes do not hold {shape} of {dtype}")
    return np.frombuffer(raw, dtype).reshape(shape)


def _text(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return value


def _number(value) -> float:
    if type(value) is not float:
        raise ValueError(f"expected a float, got {type(value).__name__}")
    return value


def _shape(value) -> tuple:
    if not (isinstance(value, tuple) and all(type(s) is int for s in value)):
        raise ValueError(f"expected a shape, got a {type(value).__name__}")
    return value
