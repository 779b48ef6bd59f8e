"""The Colab copies (tools/export_colab.py, myst_plain.py, myst_inline.py): every chapter in
both languages exports to a notebook with no MyST left in its markdown and with the chapter's
own code cells, same sources in the same order, the Colab set-up cell first, an explorer's
output as a note and a still image; and each rule of
the conversion on a small example. The publishing side (the workflow pushing the copies to the
Colab branch, the book's Colab button pointing there) is in tests/test_browser.py."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import colab_cell  # noqa: E402
import export_colab  # noqa: E402
import published  # noqa: E402
from myst_inline import Page  # noqa: E402
from myst_plain import to_markdown  # noqa: E402

CONFIG = published.book_config()
SITE = published.site_url(CONFIG)
# What a renderer without MyST would show raw: directive fences, roles, targets, colon fences,
# and links to notebooks or files that only exist next to the chapter.
LEFT_OVER = re.compile(r"```+\{|~~~+\{|^\s*:{3,}|\{[\w:-]+\}`|^\s*\([\w:.-]+\)=\s*$|^\s*:[\w-]+:\s"
                       r"|\]\((?!https?://|#|mailto:)[^)]*\)", re.M)


@functools.lru_cache(maxsize=None)
def labels(lang: str):
    return export_colab.targets(lang)


@pytest.mark.parametrize("path", export_colab.chapter_notebooks(), ids=lambda p: p.relative_to(ROOT / "chapters").as_posix())
def test_a_chapter_exports_to_a_plain_notebook_with_its_own_code(path):
    source = nbformat.read(path, as_version=4)
    plain = export_colab.export(path, CONFIG, labels(path.parent.name))
    lang, name = path.parent.name, path.stem
    note = export_colab.EXPLORER_NOTE[lang].format(title=export_colab._title_of(lang, name),
                                                   url=published.page_url(CONFIG, lang, name))
    # The chapter's own code; outputs kept, but an explorer's (Vega-Lite) as a note and its still.
    code = [(c.source, export_colab.plain_outputs(c.outputs, note)) for c in source.cells if c.cell_type == "code"]
    assert [(c.source, c.outputs) for c in plain.cells if c.cell_type == "code"] == code
    assert plain.cells[0].cell_type == "markdown" and published.page_url(
        CONFIG, path.parent.name, path.stem) in plain.cells[0].source
    assert plain.cells[1].id == colab_cell.CELL_ID and "source_hidden" not in plain.cells[1].metadata.get("jupyter", {})
    assert plain.metadata["aiayn"]["lang"] == path.parent.name  # the set-up reads the labels' language
    for cell in plain.cells:
        if cell.cell_type == "markdown":
            left = [m.group(0) for m in LEFT_OVER.finditer(_outside_code(cell.source))]
            assert left == [], f"{path.name}: MyST left in a markdown cell: {left[:5]}"
    nbformat.validate(plain)


def test_an_explorer_exports_as_a_note_and_its_still():
    """Colab does not draw the Vega-Lite specification offline: the page's link and the still."""
    path = ROOT / "chapters" / "zh" / "attention_in_the_model.ipynb"
    source = nbformat.read(path, as_version=4)
    plain = export_colab.export(path, CONFIG, labels("zh"))
    explorers = [i for i, c in enumerate(source.cells) if c.cell_type == "code"
                 and any(export_colab.EXPLORER_MIME in o.get("data", {}) for o in c.outputs)]
    assert explorers, "attention_in_the_model has an explorer"
    code = [c for c in plain.cells if c.cell_type == "code"]
    cell = code[[i for i, c in enumerate(source.cells) if c.cell_type == "code"].index(explorers[0])]
    note, still = cell.outputs
    assert published.page_url(CONFIG, "zh", "attention_in_the_model") in note.data["text/markdown"]
    assert "静态图" in note.data["text/markdown"] and still.data["image/png"]
    assert not any(export_colab.EXPLORER_MIME in o.get("data", {}) for c in code for o in c.get("outputs", []))
    assert export_colab.plain_outputs([nbformat.v4.new_output("display_data", data={
        export_colab.EXPLORER_MIME: {}, "text/plain": "x"})], "n")[0].data == {"text/markdown": "n", "text/plain": "n"}


def _outside_code(markdown: str) -> str:
    """The markdown without its fenced code blocks and code spans (code may show anything)."""
    text = re.sub(r"^(\s*>?\s*)(`{3,}|~{3,}).*?^\1\2\s*$", "", markdown, flags=re.M | re.S)
    return re.sub(r"(`+).*?\1", "", text, flags=re.S)


def test_the_command_writes_every_chapter_and_the_branch_readme(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["export_colab.py", str(tmp_path)])
    assert export_colab.main() == 0  # in this process: a fresh one spends seconds importing nbformat
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.ipynb"))
    assert written == sorted(p.relative_to(ROOT) for p in export_colab.chapter_notebooks())
    readme = (tmp_path / "README.md").read_text(encoding="utf8")
    assert SITE in readme
    # The branch's README lists the chapters in reading order (the folder lists them alphabetically),
    # each link opening its Colab copy.
    for lang in ("en", "zh"):
        section = readme.split("## English")[1].split("## 中文")[0] if lang == "en" else readme.split("## 中文")[1]
        opened = re.findall(r"blob/colab/(chapters/[a-z]{2}/\w+)\.ipynb\)", section)
        assert opened == [str(p.relative_to(ROOT).with_suffix("")) for p in export_colab.chapter_notebooks()
                          if p.parent.name == lang]
        assert all(u.startswith("https://colab.research.google.com/github/") for u in re.findall(r"\]\((https://[^)]+)\)", section))
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["export_colab.py", str(ROOT)])
    assert export_colab.main() == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds the repository" in err


# ------------------------------------------------------------------ the rules, one by one

def page(lang="en", **glue) -> Page:
    return Page(CONFIG, lang, "scaled_dot_product_attention",
                {k: {"text/plain": repr(v)} for k, v in glue.items()},
                lambda lang, name: f"Title of {name}", {"masks": ("attention_in_the_model", "Masks")})


def test_tab_sets_become_both_versions_in_sequence_with_their_labels():
    myst = ("::::{tab-set}\n:sync-group: impl\n\n:::{tab-item} NumPy\n:sync: numpy\n```python\nx = 1\n```\n:::\n\n"
            ":::{tab-item} PyTorch\n:sync: torch\n```python\n:::\n```\n:::\n::::")
    plain = to_markdown(myst, page())
    assert plain == "**NumPy**\n\n```python\nx = 1\n```\n\n**PyTorch**\n\n```python\n:::\n```"


def test_dropdowns_and_admonitions_become_titled_quotes():
    assert to_markdown(":::{dropdown} Going deeper\nText $x$.\n:::", page()) == "> **▸ Going deeper**\n>\n> Text $x$."
    assert to_markdown("```{admonition} Why\n:class: dropdown\nBecause.\n```", page()) == "> **Why**\n>\n> Because."
    assert to_markdown(":::{note}\nMind it.\n:::", page("zh")) == "> **备注**\n>\n> Mind it."
    assert to_markdown(":::{important} First line.\nMore.\n:::", page()) == "> **Important**\n>\n> First line.\n>\n> More."
    nested = to_markdown("::::{dropdown} Out\n:::{note}\nIn\n:::\n::::", page())
    assert nested == "> **▸ Out**\n>\n> > **Note**\n> >\n> > In"


def test_included_source_is_shown_as_the_book_shows_it():
    plain = to_markdown("```{literalinclude} /code/aiayn/np/attention.py\n:language: python\n"
                        ":pyobject: scaled_dot_product_attention\n```", page())
    source = (ROOT / "code/aiayn/np/attention.py").read_text(encoding="utf8")
    body = plain.removeprefix("```python\n").removesuffix("\n```")
    assert plain.startswith("```python\ndef scaled_dot_product_attention(") and body in source
    lines = to_markdown("```{literalinclude} ../../code/aiayn/np/attention.py\n:lines: 1-2\n```", page())
    assert lines == "```python\n" + "".join(source.splitlines(True)[:2]).rstrip("\n") + "\n```"


def test_glued_values_are_filled_in_as_myst_nb_formats_them():
    assert to_markdown("Var {glue:text}`v:.1f`, n {glue:text}`n:,`, {glue}`s`.", page(v=1023.96, n=63082496, s="x")) \
        == "Var 1024.0, n 63,082,496, x."
    with pytest.raises(ValueError, match="no glue output named 'w'"):
        to_markdown("{glue:text}`w:.2f`", page())


def test_references_and_page_links_point_at_the_published_book():
    url = published.page_url(CONFIG, "en", "multi_head_attention")
    assert to_markdown("See {doc}`multi_head_attention`.", page()) == f"See [Title of multi_head_attention]({url})."
    assert to_markdown("See {doc}`heads <multi_head_attention>`.", page()) == f"See [heads]({url})."
    assert to_markdown("[Multi-head\nattention](multi_head_attention.ipynb)", page()) == f"[Multi-head\nattention]({url})"
    assert to_markdown("{ref}`masks`", page()) == f"[Masks]({published.page_url(CONFIG, 'en', 'attention_in_the_model', 'masks')})"
    assert to_markdown("[zh](../zh/preface.md)", page()) == f"[zh]({published.page_url(CONFIG, 'zh', 'preface')})"
    readme = published.github_file_url(CONFIG, "README.md")
    assert to_markdown("[README](../../README.md), [arXiv](https://arxiv.org), [up](#top)", page()) \
        == f"[README]({readme}), [arXiv](https://arxiv.org), [up](#top)"
    with pytest.raises(ValueError, match="points at no file"):
        to_markdown("[gone](no_such_page.ipynb)", page())


def test_figures_tables_math_and_targets():
    figure = to_markdown("```{figure} ../../docs/screenshots/attention-en.png\n:width: 80%\n\nThe page.\n```", page())
    raw = published.github_file_url(CONFIG, "docs/screenshots/attention-en.png", raw=True)
    assert figure == f"![The page.]({raw})\n\n*The page.*"
    table = to_markdown('```{csv-table}\n:header: "a", "b"\n\n"$x$", "`y|z`"\n1, 2\n```', page())
    assert table == "| a | b |\n|---|---|\n| $x$ | `y\\|z` |\n| 1 | 2 |"
    assert to_markdown("(sec-x)=\n## Section\n% a comment\n$$\nx\n$$ (eq-x)", page()) == "## Section\n$$\nx\n$$"
    assert to_markdown("Code `{glue}` stays, {math}`a^2` too.", page()) == "Code `{glue}` stays, $a^2$ too."


def test_an_unknown_construct_is_named_not_passed_through():
    with pytest.raises(ValueError, match=r"\{margin\} directive"):
        to_markdown("```{margin}\nx\n```", page())
    with pytest.raises(ValueError, match=r"\{numref\} role"):
        to_markdown("{numref}`fig-x`", page())
    with pytest.raises(ValueError, match="never closed"):
        to_markdown(":::{note}\nopen", page())
