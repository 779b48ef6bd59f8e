"""What a chapter prints when it shows a check: an error size a reader can read, not a bare
True. The asserts that guard the same numbers live in the chapter's hidden cells and the tests."""

from __future__ import annotations

import numpy as np


def as_numpy(x) -> np.ndarray:
    """A NumPy array of ``x`` (a NumPy array, a torch tensor on any device, or a number)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def max_difference(a, b) -> float:
    """max |a - b| over every element; ``a`` and ``b`` must have the same shape."""
    a, b = as_numpy(a), as_numpy(b)
    if a.shape != b.shape:
        raise ValueError(f"a and b: shapes differ, {a.shape} and {b.shape}")
    return float(np.abs(a - b).max()) if a.size else 0.0


def difference(label: str, a, b) -> float:
    """Prints ``label: max |difference| 2e-16`` (one significant digit, so the line does not
    change with the last bits of a BLAS) and returns the exact value for a hidden assert."""
    d = max_difference(a, b)
    print(f"{label}: max |difference| {'0 (identical)' if d == 0 else f'{d:.0e}'}")
    return d
