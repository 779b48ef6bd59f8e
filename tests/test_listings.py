"""Library code shown on a page (tools/listings.py) equals the library's code."""

import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("listings", ROOT / "tools" / "listings.py")
listings = importlib.util.module_from_spec(spec)
spec.loader.exec_module(listings)


@pytest.mark.parametrize("page", listings.pages(), ids=lambda p: p.relative_to(ROOT / "chapters").as_posix())
def test_every_listing_on_a_page_is_the_library_code(page):
    stale = listings.process(page, write=False)
    assert not stale, (f"{page.name}: these listings differ from the library; run "
                       f".venv/bin/python tools/listings.py --write {page.relative_to(ROOT)}: {stale}")


def test_a_function_listing_is_its_source_and_can_leave_out_the_argument_checks():
    full = listings.listing("# aiayn/np/attention.py: scaled_dot_product_attention")
    short = listings.listing("# aiayn/np/attention.py: scaled_dot_product_attention, without argument checks")
    assert full.startswith("def scaled_dot_product_attention(q, k, v, mask=None):")
    assert "check_qkv" in full and "check_mask" in full
    # The checks (one assignment, one `if` holding only a check) are gone; the rest is untouched.
    assert "check_" not in short and "if mask is not None" not in short
    assert [l for l in full.splitlines() if "check" not in l and "if mask is not None" not in l] == short.splitlines()


def test_a_class_listing_keeps_its_first_line_docstring_and_the_methods_named():
    text = listings.listing("# aiayn/np/attention.py: MultiHeadAttention (__init__, forward)")
    assert text.startswith("class MultiHeadAttention(Module):")
    assert "def __init__" in text and "def forward" in text and "def backward" not in text
    method = listings.listing("# aiayn/np/attention.py: MultiHeadAttention.forward")
    assert method.startswith("def forward(self") and textwrap.indent(method, "    ") in text


def test_refresh_fills_a_block_and_leaves_other_code_alone(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\n# aiayn/np/attention.py: masked_softmax\nstale\n```\n\n```python\nprint(1)\n```\n")
    assert listings.process(page, write=False) == ["# aiayn/np/attention.py: masked_softmax"]
    assert listings.process(page, write=True)
    text = page.read_text()
    assert "def masked_softmax" in text and "stale" not in text and "print(1)" in text
    assert listings.process(page, write=False) == []


@pytest.mark.parametrize("header, message", [
    ("# aiayn/np/nowhere.py: f", "no such file"),
    ("# aiayn/np/attention.py: no_such_function", "defines no 'no_such_function'"),
    ("# aiayn/np/attention.py: masked_softmax (forward)", "only be chosen from a class"),
])
def test_a_wrong_header_is_named(header, message):
    with pytest.raises(listings.ListingError, match=message):
        listings.listing(header)


def test_a_loop_that_only_checks_goes_with_its_checks(tmp_path, monkeypatch):
    module = tmp_path / "aiayn" / "m.py"
    module.parent.mkdir()
    module.write_text("def f(xs, k):\n    for x in xs:\n        check_rank('x', x, 2)\n"
                      "    if k:\n        check_k(k)\n    else:\n        k = 1\n    return k\n")
    monkeypatch.setattr(listings, "ROOT", tmp_path)
    monkeypatch.setattr(listings, "source_file", lambda path: tmp_path / path)
    assert listings.listing("# aiayn/m.py: f, without argument checks").splitlines() == [
        "def f(xs, k):", "    if k:", "        check_k(k)", "    else:", "        k = 1", "    return k"]
