"""A chapter as `bash tools/lab.sh` shows it: JupyterLab with jupyterlab-myst, in Chromium.

tools/lab_session.py starts lab.sh on 127.0.0.1 (a free port, a token, no browser, autosave
off); Playwright drives the Chromium tools/find_browser.py chose, as tests/test_browser.py does.
For one chapter per language: every markdown cell is rendered by jupyterlab-myst; no raw MyST
shows ("```{", ":::{", "{glue", "{doc}", ...) and no cross-reference is left unresolved; the tab
sets are tabs, and choosing PyTorch in one switches every synced set; the cells the book hides
open collapsed; and a code cell runs: its output, cleared first, comes back as committed.
Without a browser: every hidden cell of every chapter is collapsed (tools/lab_view.py), and
that tool's rules.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import browser  # noqa: E402  (tools/browser.py)
import export_colab  # noqa: E402
import lab_session  # noqa: E402
import lab_view  # noqa: E402
import published  # noqa: E402

# The chapter opened in each language: it has synced NumPy/PyTorch tab sets and hidden cells.
CHAPTERS = ["scaled_dot_product_attention"]
# To try a change to a chapter on a copy first: AIAYN_LAB_NOTEBOOK_DIR=<a copy of the checkout>.
NOTEBOOK_DIR = Path(os.environ["AIAYN_LAB_NOTEBOOK_DIR"]) if os.environ.get("AIAYN_LAB_NOTEBOOK_DIR") else None
LANGS = ("en", "zh")
GLUE_ROLE = re.compile(r"\{glue(?::\w*)?\}`([^`]*)`")
RAW_MYST = re.compile(r"```\{|:::\{|\{glue|\{doc\}|\{ref\}|\{literalinclude\}|\{tab-|\{dropdown\}|:sync-group:")
# The rendered text of every markdown cell (hidden tab contents included) and whether each tab
# set shows PyTorch.
MARKDOWN_TEXT_JS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell div.myst')].map(e => e.textContent).join('\\n')"""
TAB_SETS_JS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .myst-tab-set')]
    .map(set => {
        const headers = [...set.querySelectorAll(':scope > .myst-tab-set-row > .myst-tab-item-header')];
        const active = headers.find(h => h.classList.contains('myst-tab-item-header-active'));
        return {labels: headers.map(h => h.textContent.trim()), active: active ? active.textContent.trim() : null};
    })"""


@pytest.fixture(scope="module")
def lab_page():
    choice = browser.find_browser.chosen()
    if choice.path is None:
        message = f"no browser for the JupyterLab test: {choice.detail}"
        if browser.find_browser.missing_browser_fails(dict(os.environ)):
            pytest.fail(message + " (CI=true: a missing browser is a failure, not a skip)")
        pytest.skip(message)
    with lab_session.jupyterlab(NOTEBOOK_DIR) as lab, browser.chromium(viewport=(1280, 900)) as context:
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        yield lab, page, errors


def markdown_source(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def code_blocks(path: Path) -> int:
    """How many code blocks the page shows: those of its plain-Markdown export (listings and
    included source, in every tab)."""
    plain = export_colab.export(path, published.book_config(), export_colab.targets(path.parent.name))
    count, fence = 0, None
    for cell in plain.cells:
        for line in cell.source.splitlines() if cell.cell_type == "markdown" else []:
            bare = line.strip().lstrip("> ").strip()
            m = re.match(r"^(`{3,}|~{3,})", bare)
            if m and fence is None:
                count, fence = count + 1, m.group(1)
            elif m and set(bare) == {fence[0]} and len(bare) >= len(fence):
                fence = None
    return count


def first_checkable_cell(nb) -> int:
    """The first visible code cell whose committed output is printed text."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and not lab_view.is_hidden(cell) and \
                any(o.output_type == "stream" and o.name == "stdout" for o in cell.outputs):
            return i
    raise AssertionError("the chapter has no visible code cell that prints")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_renders_as_in_the_book_and_runs(lab_page, chapter, lang, tmp_path):
    lab, page, errors = lab_page
    notebook = f"chapters/{lang}/{chapter}.ipynb"
    nb = nbformat.read(lab.notebook_dir / notebook, as_version=4)
    errors.clear()
    counts = lab_session.open_notebook(page, lab, notebook)
    assert counts["cells"] == counts["expected"] and counts["myst"] == counts["expected"], (
        f"{notebook}: {counts} (markdown cells, rendered by jupyterlab-myst, by the plain renderer)")
    text = page.evaluate(MARKDOWN_TEXT_JS)
    raw = sorted(set(RAW_MYST.findall(text)))
    assert raw == [], f"{notebook}: raw MyST in the rendered page: {raw}"
    # jupyterlab-myst shows a glue role as its key and a {literalinclude} as nothing at all.
    keys = sorted({m.split(":")[0] for m in GLUE_ROLE.findall(markdown_source(nb))} & set(re.findall(r"\w+", text)))
    assert keys == [], f"{notebook}: glue keys shown instead of numbers: {keys[:8]}"
    blocks = code_blocks(lab.notebook_dir / notebook)
    shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell div.myst pre").count()
    assert shown == blocks, f"{notebook}: {blocks} code listings in the markdown, {shown} shown"
    unresolved = [e for e in errors if "target was not found" in e]
    assert unresolved == [], f"{notebook}: references jupyterlab-myst could not resolve: {unresolved}"

    # Tab sets are tabs, and choosing PyTorch in the first switches every synced set.
    expected_sets = markdown_source(nb).count("{tab-set}")
    tabs = page.evaluate(TAB_SETS_JS)
    assert len(tabs) == expected_sets >= 1, f"{notebook}: {len(tabs)} tab sets rendered, {expected_sets} in the source"
    assert all(t["labels"] == ["NumPy", "PyTorch"] and t["active"] == "NumPy" for t in tabs), tabs
    page.locator(".myst-tab-set .myst-tab-item-header", has_text="PyTorch").first.click()
    chosen = page.evaluate(TAB_SETS_JS)
    assert [t["active"] for t in chosen] == ["PyTorch"] * len(tabs), chosen
    page.screenshot(path=str(tmp_path / f"{lang}.png"))

    # The cells the book hides open collapsed, the others do not.
    hidden = sum(c.cell_type == "code" and lab_view.is_hidden(c) for c in nb.cells)
    collapsed = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPlaceholder").count()
    assert collapsed == hidden >= 1, f"{notebook}: {collapsed} collapsed code cells, {hidden} hidden in the book"

    # A code cell runs: outputs cleared, then the cells from the title down to it, in order,
    # with Shift+Enter (the Colab set-up cell above the title does nothing outside Colab).
    target = first_checkable_cell(nb)
    expected = "".join(o.text for o in nb.cells[target].outputs if o.output_type == "stream" and o.name == "stdout")
    page.get_by_role("menuitem", name="Edit").click()
    page.get_by_role("menuitem", name="Clear Outputs of All Cells").click()
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Notebook-cell")
    assert cells.count() == len(nb.cells)
    output = cells.nth(target).locator(".jp-OutputArea-output")
    assert output.count() == 0
    title = 1 if nb.cells[0].get("id") == "colab-setup" else 0
    cells.nth(title).locator("div.myst h1").click()  # selects the cell
    page.keyboard.press("Escape")  # command mode
    for _ in range(title, target + 1):
        page.keyboard.press("Shift+Enter")
    output.first.wait_for(timeout=120_000)
    shown = output.first.inner_text()
    assert shown.strip() == expected.strip(), f"{notebook}: cell {target} printed {shown!r}, committed {expected!r}"


# ------------------------------------------------------------------ without a browser

@pytest.mark.parametrize("path", lab_view.notebooks(), ids=lambda p: p.relative_to(ROOT / "chapters").as_posix())
def test_hidden_cells_open_collapsed_and_glue_pages_carry_the_note(path):
    nb = nbformat.read(path, as_version=4)
    assert not lab_view.apply(nb, path, published.book_config()), (
        f"run `.venv/bin/python tools/lab_view.py --write {path.relative_to(ROOT)}`: a hidden cell is "
        "not collapsed in JupyterLab, or the note on glue roles is missing or stale")


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def test_lab_view_collapses_hidden_code_cells_only():
    hidden = nbformat.v4.new_code_cell("assert x", metadata={"tags": ["remove-cell"]})
    shown = nbformat.v4.new_code_cell("x = 1", metadata={"jupyter": {"source_hidden": True}})
    text = nbformat.v4.new_markdown_cell("# T", metadata={"tags": ["remove-cell"]})
    nb = _notebook(hidden, shown, text)
    assert lab_view.collapse_hidden_cells(nb)
    assert hidden.metadata["jupyter"] == {"source_hidden": True}
    assert "jupyter" not in shown.metadata and "jupyter" not in text.metadata
    assert not lab_view.collapse_hidden_cells(nb)  # idempotent


def test_lab_view_puts_the_note_after_the_set_up_cell_of_an_appendix_page_with_glue_roles(monkeypatch):
    config = published.book_config()
    path = ROOT / "chapters" / "zh" / "some_page.ipynb"
    setup = nbformat.v4.new_code_cell("pass", id="colab-setup",
                                      metadata={"tags": ["remove-cell"], "jupyter": {"source_hidden": True}})
    nb = _notebook(setup, nbformat.v4.new_markdown_cell("# 标题\n\n值为 {glue:text}`k:.2f`。"))
    before = nbformat.writes(nb)
    assert not lab_view.apply(nb, path, config) and nbformat.writes(nb) == before  # a lesson: no note
    monkeypatch.setattr(lab_view, "appendix_pages", lambda lang: {"some_page"})
    assert lab_view.apply(nb, path, config)
    note = nb.cells[1]
    assert note.id == lab_view.NOTE_ID and note.metadata["tags"] == ["remove-cell"]
    assert published.page_url(config, "zh", "some_page") in note.source and "JupyterLab" in note.source
    assert not lab_view.apply(nb, path, config)
    nb.cells[2].source = "# 标题\n\n值为 3.14。"  # the roles gone: so is the note
    assert lab_view.apply(nb, path, config) and [c.get("id") for c in nb.cells][:1] == ["colab-setup"]
    assert all(c.get("id") != lab_view.NOTE_ID for c in nb.cells)


def test_appendix_pages_are_read_from_the_toc_captions():
    for lang in LANGS:
        pages = lab_view.appendix_pages(lang)
        assert "preface" not in pages and "scaled_dot_product_attention" not in pages


def test_published_urls_follow_github_pages():
    config = {"repository": {"url": "https://github.com/Some-Org/the-book", "branch": "main"}}
    assert published.site_url(config) == "https://some-org.github.io/the-book/"
    assert published.page_url(config, "en", "x", "y") == "https://some-org.github.io/the-book/en/chapters/en/x.html#y"
    assert published.site_url({"repository": {"url": "https://github.com/me/me.github.io"}}) == "https://me.github.io/"
    with pytest.raises(ValueError, match="repository.url"):
        published.site_url({"repository": {"url": "https://gitlab.com/a/b"}})
