"""What a chapter prints when it shows a check: a line a reader can read, which means the same
on every processor. The asserts that guard the exact numbers live in the chapter's hidden cells
and in the tests.

Why not print the measured size? Two implementations that agree differ by rounding noise, and
rounding noise changes from one processor to the next, and with the BLAS kernels one processor
picks: 2e-16 on one machine is 6e-16 on another, in its first digit. So ``difference`` prints
the size only when it is a real difference (above the bound); an agreement is printed as the
bound it keeps ("agree to float64 rounding (max |difference| below 1e-12)"), and the exact size is
returned for the hidden cell to assert.

What ``difference`` guarantees: for floating-point inputs, the printed line is one of two texts,
"agree ... below <bound>" when max |a - b| <= bound and "max |difference| <d>" (two significant
digits) otherwise; it never prints digits of a size below the bound. For integer or boolean
inputs it prints "identical" or how many entries differ, which are exact. The text follows the
page's language (``aiayn.language``); the label is the caller's (pass it through ``tr``).
"""

from __future__ import annotations

import unicodedata

import numpy as np

from aiayn.language import tr

# The default bounds: a float64 computation of a chapter's size (a whole small model, a backward
# pass) agrees with another implementation to a few 1e-15 on every processor seen; 1e-12 leaves
# a thousandfold margin and still tells a real mistake, which shows at 1e-3 or above. float32
# rounding is about 1e-7 per operation; 1e-4 covers a model's worth of them.
BOUNDS = {"float64": 1e-12, "float32": 1e-4}


def as_numpy(x) -> np.ndarray:
    """A NumPy array of ``x`` (a NumPy array, a torch tensor on any device, or a number), in its
    own dtype (torch's bfloat16 and float16 as float32)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if x.dtype.is_floating_point and x.element_size() < 4:
            x = x.float()
        x = x.numpy()
    return np.asarray(x)


def max_difference(a, b) -> float:
    """max |a - b| over every element, in float64; ``a`` and ``b`` must have the same shape."""
    a, b = as_numpy(a).astype(np.float64), as_numpy(b).astype(np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b: shapes differ, {a.shape} and {b.shape}")
    return float(np.abs(a - b).max()) if a.size else 0.0


def format_bound(bound: float) -> str:
    """1e-12 as '1e-12', 1e-06 as '1e-6', 5e-08 as '5e-8', 0.01 as '0.01'."""
    if bound >= 1e-3:
        return f"{bound:g}"
    mantissa, exponent = f"{bound:.0e}".split("e")
    return f"{mantissa}e-{int(exponent[1:])}"


def format_size(d: float) -> str:
    """A real difference, two significant digits: 0.7, 9.2, 11, 0.0031, 2.5e-5."""
    return f"{d:.2g}" if d >= 1e-3 else f"{d:.1e}".replace("e-0", "e-")


def precision(a, b) -> str | None:
    """'float64' or 'float32' (the less precise of the two), or None when both are exact
    (integers or booleans)."""
    kinds = [as_numpy(x).dtype for x in (a, b)]
    floats = [k for k in kinds if k.kind in "fc"]
    if not floats:
        return None
    return "float32" if any(k.itemsize < 8 or (k.kind == "c" and k.itemsize < 16) for k in floats) else "float64"


def difference(label: str, a, b, *, within: float | None = None) -> float:
    """Prints how ``a`` and ``b`` compare, in one line that reads the same on every processor,
    and returns max |a - b| (exact, for a hidden assert).

    Floating-point inputs: ``label: agree to float64 rounding (max |difference| below 1e-12)``
    when max |a - b| is within the bound of their precision (``BOUNDS``), or ``label: agree (max
    |difference| below 1e-6)`` for a bound ``within`` of the caller's (after a training run, say);
    above the bound, the size itself, a real difference: ``label: max |difference| 0.7``.
    Integer or boolean inputs: ``label: identical`` or ``label: 3 of 40 entries differ``.
    """
    if within is not None and not within > 0:
        raise ValueError(f"within must be a positive bound, got {within!r}")
    d = max_difference(a, b)
    kind = precision(a, b)
    if kind is None:
        if d == 0:
            text = tr("identical", "完全相同")
        else:
            x, y = as_numpy(a), as_numpy(b)
            n, total = int((x != y).sum()), x.size
            text = tr(f"{n} of {total} entries differ", f"{total} 个元素中有 {n} 个不同")
    else:
        bound = BOUNDS[kind] if within is None else within
        if d <= bound:
            shown = format_bound(bound)
            text = (tr(f"agree to {kind} rounding (max |difference| below {shown})",
                       f"在 {kind} 舍入误差内一致（最大 |差值| 低于 {shown}）") if within is None
                    else tr(f"agree (max |difference| below {shown})", f"一致（最大 |差值| 低于 {shown}）"))
        else:
            text = tr(f"max |difference| {format_size(d)}", f"最大 |差值| {format_size(d)}")
    print(f"{label}{tr(': ', '：')}{text}")
    return d


def markdown_table(headers, rows, align: str | None = None) -> str:
    """A Markdown (pipe) table: ``headers`` a list of column titles, ``rows`` lists of cells (each
    formatted by the caller: a number is printed with ``str``); ``align`` one letter per column,
    ``l``, ``r`` or ``c`` (default: numbers right, text left, from the first row)."""
    headers = [str(h) for h in headers]
    rows = [list(r) for r in rows]
    if any(len(r) != len(headers) for r in rows):
        raise ValueError(f"rows: every row needs {len(headers)} cells, one per header")
    if align is None:
        first = rows[0] if rows else [""] * len(headers)
        align = "".join("r" if isinstance(v, (int, float, np.number)) else "l" for v in first)
    if len(align) != len(headers) or set(align) - set("lrc"):
        raise ValueError(f"align: one of l, r, c per column ({len(headers)}), got {align!r}")

    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    rule = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "| " + " | ".join(rule[a] for a in align) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def table(headers, rows, align: str | None = None) -> None:
    """Shows a table as a rendered Markdown table (the book, JupyterLab and Colab render it, and
    columns align in any language, where text padded by hand does not once CJK is wide).
    Arguments as ``markdown_table``."""
    from IPython.display import Markdown, display

    display(Markdown(markdown_table(headers, rows, align)))


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospaced font (a terminal, a notebook's text output): an
    East Asian wide or full-width character (Chinese, ``，``, ``：``) takes two, a combining mark
    none, any other character one. The one measure the course pads text by; a table a page
    shows is better a rendered one (``table``), which aligns in any font."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` filled with spaces to ``width`` columns (``display_width``), on the right (text
    aligned left) or, with ``right=True``, on the left; text already as wide is returned as is."""
    fill = " " * max(width - display_width(text), 0)
    return fill + text if right else text + fill
