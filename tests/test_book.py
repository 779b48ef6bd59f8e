"""The HTML book: both languages build with -W, link to each other, render math offline,
search Chinese by words, and keep the terminology table and synced tabs.

Uses the build shared with tests/test_browser.py (tests/book_fixtures.py: tools/build_book.py
into a temporary folder, once per test run, about 25 s on 2 cores with _ext/zh_search.py)."""

import json
import re
from pathlib import Path

import pytest

from book_fixtures import OTHER, ROOT, TOCS, book_html, toc_docnames  # noqa: F401 (fixture)


@pytest.fixture
def html(book_html):
    return book_html


def page(html: Path, lang: str, docname: str) -> str:
    return (html / lang / f"{docname}.html").read_text(encoding="utf8")


def search_terms(html: Path, lang: str) -> set[str]:
    """Words in the Sphinx search index (body and title words; non-ASCII is \\u-escaped)."""
    js = (html / lang / "searchindex.js").read_text(encoding="utf8")
    index = json.loads(js[js.index("(") + 1 : js.rindex(")")])
    return set(index["terms"]) | set(index["titleterms"])


def all_pages(html: Path):
    for lang in TOCS:
        for docname in toc_docnames(lang):
            yield lang, docname, page(html, lang, docname)


def test_every_toc_entry_is_built_in_both_languages(html):
    en, zh = toc_docnames("en"), toc_docnames("zh")
    assert [d.replace("chapters/en/", "chapters/zh/") for d in en] == zh
    for lang in TOCS:
        for docname in toc_docnames(lang):
            assert (html / lang / f"{docname}.html").is_file(), (lang, docname)


def test_landing_page_links_both_languages(html):
    landing = (html / "index.html").read_text(encoding="utf8")
    for lang in TOCS:
        target = f"{lang}/{toc_docnames(lang)[0]}.html"
        assert f'href="{target}"' in landing
        assert (html / target).is_file()


def test_every_page_links_to_its_counterpart(html):
    for lang, docname, text in all_pages(html):
        links = re.findall(r'<a class="[^"]*aiayn-lang-switch[^"]*" href="([^"]+)"[^>]*>([^<]+)</a>', text)
        assert len(links) == 1, (lang, docname, links)
        href, label = links[0]
        assert label == {"en": "中文", "zh": "English"}[lang]
        target = (html / lang / docname).parent / href
        expected = html / OTHER[lang] / f"{docname.replace(f'/{lang}/', f'/{OTHER[lang]}/')}.html"
        assert target.resolve() == expected.resolve(), (lang, docname, href)
        assert expected.is_file()


def test_page_language_and_ui(html):
    for lang, docname, text in all_pages(html):
        html_tag = re.search(r"<html[^>]*>", text).group()
        if lang == "en":
            assert 'lang="en"' in html_tag
            assert "Search this book" in text
        else:
            assert re.search(r'lang="zh[-_]CN"', html_tag), html_tag
            # Theme UI strings translated: the search box and the download menu.
            assert "搜索本书" in text and "下载" in text
            assert "Search this book" not in text and "Download this page" not in text


def test_mathjax_is_bundled_not_fetched(html):
    for lang in TOCS:
        text = page(html, lang, toc_docnames(lang)[0])  # the preface has math
        scripts = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, flags=re.I)
        assert scripts, f"{lang}: no MathJax script on the preface"
        for src in scripts:
            assert not src.startswith(("http:", "https:", "//")), src
            assert (html / lang / toc_docnames(lang)[0]).parent.joinpath(src).resolve().is_file(), src
        assert "cdn.jsdelivr" not in text
        assert r"\sqrt{d_k}" in text  # the math is on the page for MathJax to typeset


def test_search_index_has_words(html):
    zh = search_terms(html, "zh")
    # jieba cuts the heading "掩码约定" into words; without segmentation (language: en)
    # the index holds the whole run "掩码约定" and searching "约定" finds nothing.
    assert {"注意力", "掩码", "约定"} <= zh
    assert "掩码约定" not in zh
    assert "mask" in search_terms(html, "en")


def test_the_chinese_search_speed_up_indexes_the_same_words(monkeypatch):
    """_ext/zh_search.py keeps Sphinx's Latin words in a set instead of a list (the list made the
    Chinese build quadratic). Fed the same text, Sphinx's class and ours must split and stem every
    word alike, or the Chinese search index would change. The text: one Chinese chapter's
    Markdown cells, whose Latin words (d_model, softmax, ...) are what the list held."""
    from sphinx.search.zh import SearchChinese

    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    from zh_search import SearchChineseSet

    notebook = json.loads((ROOT / "chapters" / "zh" / "multi_head_attention.ipynb").read_text(encoding="utf8"))
    text = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    monkeypatch.setattr(SearchChinese, "latin_terms", [])  # Sphinx's class-level list, empty as in a fresh build
    sphinx_zh, ours = SearchChinese({}), SearchChineseSet({})
    words = []
    for line in text.splitlines():
        split = ours.split(line)
        assert split == sphinx_zh.split(line)
        words += split
    assert len(words) > 1000 and isinstance(ours.latin_terms, set)
    assert set(ours.latin_terms) == set(sphinx_zh.latin_terms)
    assert [ours.stem(w) for w in words] == [sphinx_zh.stem(w) for w in words]
    assert {w for w in words if ours.stem(w) != w.lower()}  # some words are stemmed at all


def test_the_chinese_build_uses_the_speed_up():
    config = (ROOT / "_config.yml").read_text(encoding="utf8")
    assert re.search(r"local_extensions:\n(\s+\w+: _ext\n)*\s+zh_search: _ext\n", config)


def test_chinese_line_breaks_are_dropped_where_chinese_reads_no_space(monkeypatch):
    """_ext/zh_line_breaks.py: a wrapped line of Chinese markdown must not become a space in the
    page (HTML shows a soft break as one), but a break next to Latin text, and every break in code,
    must stay."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    from zh_line_breaks import join_soft_breaks

    source = ("注意力\n机制，\nGPU 上的\n`code`\n（括号）\n\n- **填充。** 内容。\n  **掩码** 的形状\n\n"
              "平均\n$x$ 和 English\nwords\n\n```\n代码\n行\n```\n")
    document = publish_doctree(source, parser=Parser(), settings_overrides={
        "report_level": 5, "myst_enable_extensions": ["dollarmath"]})
    join_soft_breaks(document)
    assert [p.astext() for p in document.findall(nodes.paragraph)] == [
        "注意力机制，GPU 上的\ncode（括号）", "填充。 内容。掩码 的形状", "平均\nx 和 English\nwords"]
    assert [b.astext() for b in document.findall(nodes.literal_block)] == ["代码\n行\n"]


def test_chinese_pages_have_no_line_break_inside_a_sentence(html):
    """On the built Chinese pages, outside code: no line break between two Chinese characters or
    next to full-width punctuation (each would show as a space), on every page."""
    broken = re.compile(r"[\u4e00-\u9fff]\n[\u4e00-\u9fff]|[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]\n|"
                        r"\n[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]")
    config = (ROOT / "_config.yml").read_text(encoding="utf8")
    assert re.search(r"local_extensions:\n(\s+\w+: _ext\n)*\s+zh_line_breaks: _ext\n", config)
    for lang, docname, text in all_pages(html):
        if lang == "zh":
            prose = re.sub(r"<(pre|script|style)\b.*?</\1>", "", text, flags=re.S)
            found = [prose[max(0, m.start() - 15):m.end() + 15] for m in broken.finditer(prose)]
            assert not found, (docname, found[:3])


def test_preface_renders_the_terminology_table(html):
    rows = (ROOT / "terminology.csv").read_text(encoding="utf8").splitlines()
    for lang in TOCS:
        text = page(html, lang, toc_docnames(lang)[0])
        for term in ("scaled dot-product attention", "缩放点积注意力", "因果掩码", "label smoothing"):
            assert f"<p>{term}</p>" in text, (lang, term)
        assert text.count("<tr") >= len(rows)


def test_tab_sets_are_synced(html):
    # Every NumPy/PyTorch tab must carry a sync key, so one click switches every set.
    for lang, docname, text in all_pages(html):
        for label in re.findall(r'<label[^>]*class="sd-tab-label"[^>]*>', text):
            assert "data-sync-group=" in label and "data-sync-id=" in label, (lang, docname, label)
