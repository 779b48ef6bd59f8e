"""The book as a reader's browser shows it: headless Chromium (Playwright driving the system
Chromium, tools/browser.py) on the fresh build (tests/book_fixtures.py) served on 127.0.0.1,
with every request to any other host aborted and recorded, so the site must work offline.

Checked: every page of both tables of contents and the landing page loads with a title,
its figures and its typeset math; the landing page wears the book's look (its stylesheets,
fonts and colours) and a page shows one search box at 1280 px; the language switch leads to the same chapter in the
other language; NumPy/PyTorch tabs switch together and the choice survives navigation;
Chinese text renders with real glyphs, not boxes; the launch buttons open; and every
internal link and #fragment of the build resolves (external links are listed, not fetched).
Then, without a browser: the landing page's chapter map and results table, the launch
buttons' targets, Binder's set-up, the publishing workflows and the README's screenshots.
"""

from __future__ import annotations

import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from book_fixtures import LANGS, OTHER, ROOT, book_html, toc_docnames  # noqa: F401 (fixture)

import browser  # tools/browser.py and tools/landing.py, on sys.path via book_fixtures
import landing

TABS_PAGE = "scaled_dot_product_attention"  # has NumPy/PyTorch tab sets
SYNC_GROUP = "impl"
LANG_ATTRIBUTE = {"en": "en", "zh": "zh-CN"}  # <html lang> of each build
# The two tables of contents list the same chapters in the same order (tests/test_chapters.py).
CHAPTER_PAIRS = list(zip(toc_docnames("en"), toc_docnames("zh")))


class Reader:
    """One Chromium tab on the served book. Requests to any host but 127.0.0.1 are aborted
    and kept in `external`, which open() and follow() empty first."""

    def __init__(self, page, site: str):
        self.page, self.site, self.external = page, site, []

    def open(self, path: str, wait_until="load"):
        self.external.clear()
        response = self.page.goto(self.site + path, wait_until=wait_until)
        assert response is not None and response.status == 200, (path, response and response.status)

    def follow(self, locator, wait_until="load"):
        self.external.clear()
        with self.page.expect_navigation(wait_until=wait_until) as navigation:
            locator.click()
        assert navigation.value is not None and navigation.value.status == 200, self.page.url
        return self.page.url.removeprefix(self.site)


@pytest.fixture(scope="module")
def reader(book_html):
    choice = browser.find_browser.chosen()
    if choice.path is None:  # tools/find_browser.py explains the choice and the rule
        message = f"no browser for the browser test: {choice.detail}"
        if browser.find_browser.missing_browser_fails(dict(os.environ)):
            pytest.fail(message + " (CI=true: a missing browser is a failure, not a skip)")
        pytest.skip(message)
    with browser.serve(book_html) as site, browser.chromium() as context:
        reader = Reader(context.new_page(), site)

        def offline(route):
            if route.request.url.startswith(site):
                route.continue_()
            else:
                reader.external.append(route.request.url)
                route.abort()

        context.route("**/*", offline)
        reader.page.set_default_timeout(15_000)
        yield reader


# Resolves once MathJax has typeset the page, false if it never starts (10 s).
MATHJAX_DONE_JS = """() => new Promise(resolve => {
    const t0 = Date.now();
    (function poll() {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
            MathJax.startup.promise.then(() => resolve(true), () => resolve(false));
        } else if (Date.now() - t0 > 10000) { resolve(false); } else { setTimeout(poll, 50); }
    })();
})"""
BROKEN_IMAGES_JS = """() => [...document.images]
    .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"""
UNTYPESET_JS = """() => [...document.querySelectorAll('.math')]
    .filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60))"""
# The article's text outside code and outside MathJax's output: TeX left there was not typeset.
PROSE_JS = """() => {
    const clone = (document.querySelector('article') || document.body).cloneNode(true);
    clone.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
    return clone.textContent;
}"""
RAW_TEX = re.compile(r"\$\$|\\frac|\\sqrt|\\begin\{|\\\(|\\\[|\\mathrm|\\text\{")


def check_page(reader: Reader, path: str):
    """The loaded page has a title, its images and its typeset math, and needed nothing external."""
    page = reader.page
    assert page.title().strip(), f"{path}: empty <title>"
    broken = page.evaluate(BROKEN_IMAGES_JS)
    assert broken == [], f"{path}: images that did not load: {broken}"
    if page.locator(".math").count():
        typeset = page.evaluate(MATHJAX_DONE_JS)
        assert typeset, f"{path}: MathJax did not start; requests blocked on the way: {reader.external}"
        untypeset = page.evaluate(UNTYPESET_JS)
        assert untypeset == [], f"{path}: math not typeset: {untypeset[:5]}"
        raw = RAW_TEX.findall(page.evaluate(PROSE_JS))
        assert raw == [], f"{path}: raw TeX visible in the text: {raw[:10]}"
    assert reader.external == [], f"{path}: needed resources from outside: {reader.external}"


def switch_language(reader: Reader, lang: str, docname: str, wait_until="load") -> str:
    """Click the page's language link: it must open the same chapter in the other language."""
    switch = reader.page.locator("a.aiayn-lang-switch")
    assert switch.count() == 1, f"{lang}/{docname}: {switch.count()} language switches"
    other = OTHER[lang]
    expected = f"{other}/{docname.replace(f'chapters/{lang}/', f'chapters/{other}/')}.html"
    opened = reader.follow(switch, wait_until)
    assert opened == expected, f"{lang}/{docname}: the language switch opened {opened}"
    assert reader.page.evaluate("document.documentElement.lang") == LANG_ATTRIBUTE[other], opened
    return opened


# Each chapter in both languages: open the English page, switch to the Chinese one (which
# must be the Chinese toc's entry), check it, switch back.
@pytest.mark.parametrize("en_doc,zh_doc", CHAPTER_PAIRS, ids=[en.rsplit("/")[-1] for en, _ in CHAPTER_PAIRS])
def test_chapter_in_both_languages_and_the_language_switch(reader, en_doc, zh_doc):
    reader.open(f"en/{en_doc}.html")
    check_page(reader, f"en/{en_doc}.html")
    assert switch_language(reader, "en", en_doc) == f"zh/{zh_doc}.html"
    check_page(reader, f"zh/{zh_doc}.html")
    switch_language(reader, "zh", zh_doc, wait_until="domcontentloaded")


def test_landing_page(reader):
    reader.open("index.html")
    check_page(reader, "index.html")
    for lang in LANGS:  # the language links at the top lead to the two books
        link = reader.page.locator(f'nav.languages a[hreflang^="{lang}"]')
        assert reader.follow(link, "domcontentloaded") == f"{lang}/{toc_docnames(lang)[0]}.html"
        reader.page.go_back()


TABLE_SCROLL_JS = """() => [...document.querySelectorAll('article table.table')].map(t => {
    const box = t.closest('.pst-scrollable-table-container') || t.parentElement;
    return {cls: t.className, scroll: box.scrollWidth, width: box.clientWidth,
            left: t.getBoundingClientRect().left, right: t.getBoundingClientRect().right,
            view: document.documentElement.clientWidth};
})"""


def test_landing_tables_need_no_sideways_scrolling(reader):
    """At 1280 px the results table (790 px) used to scroll inside a 624 px column, its third
    column starting out of view, while half the window stayed empty; on a phone the chapter
    map's 中文 column started out of view. Now no table scrolls at 1280 px, and the chapter map
    fits a phone (the results table may scroll there: four columns of numbers and sources)."""
    try:
        for width, height, must_fit in ((1280, 800, ("table",)), (390, 844, ("chapter-map",))):
            reader.page.set_viewport_size({"width": width, "height": height})
            reader.open("index.html")
            tables = reader.page.evaluate(TABLE_SCROLL_JS)
            assert len(tables) == 2, tables
            for t in tables:
                if any(c in t["cls"].split() for c in must_fit):
                    assert t["scroll"] <= t["width"] + 1, (width, t)
                    assert 0 <= t["left"] and t["right"] <= t["view"] + 1, (width, t)
    finally:
        reader.page.set_viewport_size({"width": 1280, "height": 800})


def test_landing_chapter_map_shows_the_parts_in_reading_order(book_html):
    text = (book_html / "index.html").read_text(encoding="utf8")
    captions = re.findall(r'<tr class="part"><th colspan="3">([^<]+) <span', text)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    assert captions == [p["caption"] for p in toc["parts"]]
    assert captions.index("Build it yourself") < captions.index("Training and results (§5–§6)")


# What the theme decides of a page's look: fonts, colours, the stylesheets loaded.
LOOK_JS = """() => {
    const style = (sel, prop) => { const e = document.querySelector(sel); return e ? getComputedStyle(e)[prop] : null; };
    return {body_font: style('body', 'fontFamily'), body_color: style('body', 'color'),
            h1_font: style('h1', 'fontFamily'), h1_weight: style('h1', 'fontWeight'),
            link_color: style('article p a[href]', 'color'),
            sheets: [...document.styleSheets].map(s => (s.href || '').split('/').pop().split('?')[0])};
}"""
# Every search field a reader can see: the theme's sidebar field, its top-bar field, the form.
SEARCH_BOXES_JS = """() => [...document.querySelectorAll('.search-button-field, form.bd-search, button.search-button')]
    .filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
                   return r.width > 0 && r.height > 0 && s.visibility !== 'hidden'; })
    .map(e => e.className.toString())"""


def test_landing_page_wears_the_books_look(reader):
    reader.open(f"en/chapters/en/{TABS_PAGE}.html")
    book = reader.page.evaluate(LOOK_JS)
    reader.open("index.html")
    landing_look = reader.page.evaluate(LOOK_JS)
    assert {"pydata-sphinx-theme.css", "sphinx-book-theme.css", "aiayn.css"} <= set(landing_look["sheets"]), landing_look["sheets"]
    for key in ("body_font", "body_color", "h1_font", "h1_weight", "link_color"):
        assert landing_look[key] == book[key], (key, landing_look[key], book[key])
    assert reader.page.locator("article table.table").count() == 2  # chapter map, results


@pytest.mark.parametrize("lang", LANGS)
def test_a_page_shows_one_search_box_at_1280_px(reader, lang):
    for doc in (toc_docnames(lang)[0], f"chapters/{lang}/{TABS_PAGE}"):
        reader.open(f"{lang}/{doc}.html")
        boxes = reader.page.evaluate(SEARCH_BOXES_JS)
        assert len(boxes) == 1, f"{lang}/{doc}: {len(boxes)} search boxes: {boxes}"


# The selected tab of every tab set of the sync group, in page order, as "<sync id>:visible"
# when its content shows.
CHOSEN_TABS_JS = """(group) => [...document.querySelectorAll('.sd-tab-set')]
    .filter(set => set.querySelector(`:scope > label[data-sync-group="${group}"]`))
    .map(set => {
        const input = set.querySelector(':scope > input:checked');
        const label = input && set.querySelector(`:scope > label[for="${input.id}"]`);
        const content = input && input.nextElementSibling.nextElementSibling;
        const shown = content && content.offsetParent !== null ? 'visible' : 'hidden';
        return label ? `${label.dataset.syncId}:${shown}` : 'none';
    })"""


def pages_with_tabs(html: Path, lang: str) -> list[str]:
    return [f"{lang}/{doc}.html" for doc in toc_docnames(lang)
            if f'data-sync-group="{SYNC_GROUP}"' in (html / lang / f"{doc}.html").read_text(encoding="utf8")]


def test_choosing_pytorch_switches_every_tab_set_and_persists(reader, book_html):
    # The English page with the most synced tab sets (two at least): choosing in one switches all.
    first = max(pages_with_tabs(book_html, "en"),
                key=lambda p: (book_html / p).read_text(encoding="utf8").count(f'data-sync-group="{SYNC_GROUP}"'))
    reader.open(first)
    reader.page.evaluate("localStorage.clear()")  # sphinx-design keeps the choice there
    reader.open(first)
    before = reader.page.evaluate(CHOSEN_TABS_JS, SYNC_GROUP)
    assert len(before) >= 2 and set(before) == {"numpy:visible"}, before
    torch_tab = f'label.sd-tab-label[data-sync-group="{SYNC_GROUP}"][data-sync-id="torch"]'
    reader.page.locator(torch_tab).first.click()
    after = reader.page.evaluate(CHOSEN_TABS_JS, SYNC_GROUP)
    assert after == ["torch:visible"] * len(before), f"{first}: tab sets after choosing PyTorch: {after}"
    # The choice holds on the next page with tabs, and in the other language.
    others = [p for p in pages_with_tabs(book_html, "en") if p != first][:1]
    others += pages_with_tabs(book_html, "zh")[:1]
    assert len(others) == 2, others
    for path in others:
        reader.open(path)
        shown = reader.page.evaluate(CHOSEN_TABS_JS, SYNC_GROUP)
        assert shown and set(shown) == {"torch:visible"}, f"{path}: tab sets after navigating: {shown}"


# Draws each distinct Han character of an element, in the element's own font, on a canvas,
# and U+10FFFD (a private-use code point no font draws: the "tofu" box). With a CJK font
# every character differs from the box and from the others; without one, all are the box.
GLYPHS_JS = """(el) => {
    const chars = [...new Set([...el.textContent].filter(c => /\\p{Script=Han}/u.test(c)))];
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    ctx.font = `48px ${getComputedStyle(el).fontFamily}`;
    const draw = (c) => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.fillText(c, 4, 52);
        return ctx.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3).join(',');
    };
    const tofu = draw('\\u{10FFFD}');
    const drawn = chars.map(draw);
    return {chars: chars.join(''), tofu: chars.filter((c, i) => drawn[i] === tofu).join(''),
            distinct: new Set(drawn).size};
}"""


def cjk_font_families() -> set[str]:
    """Every family name (all spellings) of the fonts fontconfig knows for Chinese."""
    listed = subprocess.run(["fc-list", ":lang=zh-cn", "family"], capture_output=True, text=True).stdout
    return {name.strip() for line in listed.splitlines() for name in line.split(",") if name.strip()}


def platform_fonts(page, selector: str) -> list[dict]:
    """The fonts Chromium really drew the element's text with (DevTools protocol)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()


@pytest.mark.parametrize("path,selector", [
    ("zh/chapters/zh/preface.html", "article h1"),
    (f"zh/chapters/zh/{TABS_PAGE}.html", "article h1"),
    ("index.html", 'h1 span[lang="zh-CN"]'),
])
def test_chinese_text_renders_with_real_glyphs(reader, path, selector):
    reader.open(path)
    element = reader.page.locator(selector).first
    glyphs = element.evaluate(GLYPHS_JS)
    assert len(glyphs["chars"]) >= 2, f"{path} {selector}: no Chinese text: {element.text_content()!r}"
    assert glyphs["tofu"] == "", f"{path}: drawn as empty boxes (no CJK font?): {glyphs['tofu']}"
    assert glyphs["distinct"] == len(glyphs["chars"]), f"{path}: identical glyphs for {glyphs['chars']}"
    # And the Han characters came from a font that fontconfig lists for Chinese.
    fonts, cjk = platform_fonts(reader.page, selector), cjk_font_families()
    han = len(re.findall(r"[\u3400-\u9fff]", element.text_content()))
    drawn_by_cjk = sum(f["glyphCount"] for f in fonts if f["familyName"] in cjk)
    assert drawn_by_cjk >= han, f"{path}: {han} Han characters drawn with {fonts}; Chinese fonts: {sorted(cjk)}"


@pytest.mark.parametrize("lang", LANGS)
def test_launch_buttons_open_binder_and_colab(reader, lang):
    reader.open(f"{lang}/chapters/{lang}/{TABS_PAGE}.html")
    reader.page.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
    links = reader.page.locator(".dropdown-launch-buttons a.dropdown-item")
    links.first.wait_for(state="visible")
    shown = {link.inner_text().strip(): link.get_attribute("href") for link in links.all()}
    notebook = f"chapters/{lang}/{TABS_PAGE}.ipynb"
    assert (ROOT / notebook).is_file()
    assert set(shown) == {"Binder", "Colab"}, shown
    assert shown["Binder"].endswith(f"?urlpath=lab/tree/{notebook}"), shown
    colab = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["sphinx"]["config"]["colab_branch"]
    assert shown["Colab"].endswith(f"/blob/{colab}/{notebook}"), shown  # the plain copy (export_colab.py)


# ---------------------------------------------------------------- links (no browser needed)

class _Links(HTMLParser):
    """The ids/names of a page and the URLs it points at (href and src attributes)."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag in ("a", "area", "link", "img", "script", "iframe", "source"):
            self.urls += [attrs[key] for key in ("href", "src") if attrs.get(key) is not None]


EXTERNAL = re.compile(r"^([a-z][a-z0-9+.-]*:|//)", re.I)  # http:, https:, mailto:, data:, //host


def test_every_internal_link_and_anchor_resolves(book_html):
    # Every HTML page of the build; _static/ holds the theme's template fragments, not pages.
    pages = sorted(p for p in book_html.rglob("*.html") if "_static" not in p.relative_to(book_html).parts)
    parsed = {}
    for p in pages:
        parsed[p] = _Links()
        parsed[p].feed(p.read_text(encoding="utf8"))
    broken, external, checked = [], set(), 0
    for p, links in parsed.items():
        for url in links.urls:
            if EXTERNAL.match(url):
                external.add(url)
                continue
            checked += 1
            parts = urlsplit(url)
            target = (p.parent / unquote(parts.path)).resolve() if parts.path else p
            if target.is_dir():
                target = target / "index.html"
            where = f"{p.relative_to(book_html)}: {url}"
            if not target.is_file():
                broken.append(f"{where} (no file {target})")
            elif parts.fragment and target.suffix == ".html":
                if target not in parsed:
                    parsed[target] = _Links()
                    parsed[target].feed(target.read_text(encoding="utf8"))
                if unquote(parts.fragment) not in parsed[target].ids:
                    broken.append(f"{where} (no id {parts.fragment!r} in {target.name})")
    print(f"{len(pages)} pages, {checked} internal links checked, "
          f"{len(external)} external links (not fetched):")
    print("\n".join(f"  {url}" for url in sorted(external)))
    assert len(pages) >= 2 * len(toc_docnames("en")) + 1
    assert broken == [], f"{len(broken)} broken links:\n" + "\n".join(broken[:30])


# ------------------------------------------- landing page, launch buttons, publishing (static)

# Chapters that record numbers for the results table (myst_nb.glue in a code cell).
GLUING_CHAPTERS = ["scaled_dot_product_attention", "positional_encoding",
                   "residual_and_layer_norm", "putting_it_together", "copy_task", "training_multi30k"]


def landing_rows(html: Path) -> dict[str, str]:
    text = (html / "index.html").read_text(encoding="utf8")
    return dict(re.findall(r'<tr data-key="([^"]+)">(.*?)</tr>', text, flags=re.S))


def test_landing_page_does_not_redirect(book_html):
    text = (book_html / "index.html").read_text(encoding="utf8").lower()
    assert 'http-equiv="refresh"' not in text and "location.replace" not in text
    assert "<script" not in text


def test_landing_chapter_map_lists_every_chapter_in_both_languages(book_html):
    text = (book_html / "index.html").read_text(encoding="utf8")
    rows = re.findall(r"<tr><td>([^<]*)</td><td>(.*?)</td><td>(.*?)</td></tr>", text)
    assert len(rows) == len(CHAPTER_PAIRS)
    for (section, en, zh), (en_doc, zh_doc) in zip(rows, CHAPTER_PAIRS):
        assert section, en_doc
        assert f'href="en/{en_doc}.html"' in en and f'href="zh/{zh_doc}.html"' in zh
        # The link text is the page's own title, read from the built page.
        for lang, doc, cell in (("en", en_doc, en), ("zh", zh_doc, zh)):
            assert f">{landing.page_title(book_html / lang / f'{doc}.html')}</a>" in cell


def test_landing_results_are_the_numbers_the_notebooks_glued(book_html):
    rows = landing_rows(book_html)
    assert set(rows) == {r.key for r in landing.RESULTS}
    glued = {}
    for lang in LANGS:
        for doc in toc_docnames(lang):
            if (ROOT / f"{doc}.ipynb").is_file():
                glued[lang, doc.rsplit("/", 1)[-1]] = landing.glued_values(ROOT / f"{doc}.ipynb")
    for name in GLUING_CHAPTERS:  # identical code cells: the same numbers in both languages
        assert glued["en", name] and glued["en", name] == glued["zh", name], name
    values = {key: value for found in glued.values() for key, value in found.items()}
    for result in landing.RESULTS:
        if result.key in values:
            assert f'<td class="num">{result.fmt(values[result.key])}</td>' in rows[result.key]
        else:
            assert ">pending" in rows[result.key], result.key
    # The finished chapters' numbers are measured, not pending.
    for key in ("sdpa_var_qk_dk1024", "pe_shift_error_magnitude",
                "ln_xavier_postln_decoder_grad_ratio", "params_base", "params_big",
                "copy_task_exact_match", "multi30k_bleu"):
        assert ">pending" not in rows[key], key
    assert "63,082,496" in rows["params_base"]  # Table 3's base model, counted
    assert values["copy_task_exact_match"] >= 0.99  # the chapter's assert: near-perfect on unseen sequences
    assert "multi30k-" in rows["multi30k_bleu"]  # the configuration that produced the BLEU is named


def test_launch_buttons_point_at_the_notebooks_in_the_repository(book_html):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    colab = config["sphinx"]["config"]["colab_branch"]  # where the workflow pushes the plain copies
    assert colab != branch
    checked = 0
    for lang in LANGS:
        for docname in toc_docnames(lang):
            if not (ROOT / f"{docname}.ipynb").is_file():
                continue  # markdown pages have no notebook to launch
            text = (book_html / lang / f"{docname}.html").read_text(encoding="utf8")
            notebook = f"{docname}.ipynb"
            assert f'href="https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{notebook}"' in text
            assert f'href="https://colab.research.google.com/github/{repo}/blob/{colab}/{notebook}"' in text
            assert f'colab.research.google.com/github/{repo}/blob/{branch}/' not in text
            assert f'href="../../_sources/{notebook}"' in text  # the .ipynb download
            checked += 1
    assert checked >= 2 * len(GLUING_CHAPTERS)


# The article header's controls: the language switch and every other visible button or link.
HEADER_BOXES_JS = """() => {
    const box = e => { const r = e.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, what: e.className.toString()}; };
    const header = document.querySelector('.bd-header-article');
    const switcher = header.querySelector('a.aiayn-lang-switch');
    const shown = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
    const others = [...header.querySelectorAll('button, a.btn')].filter(e => e !== switcher && shown(e));
    return {header: box(header), switcher: switcher && box(switcher), others: others.map(box),
            width: document.documentElement.clientWidth};
}"""
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_sits_on_the_header_line_without_overlap(reader, lang, viewport):
    """At 1280 px the switch used to wrap under the icons; on a phone the icons rose above the
    header. Now: inside the header bar, centred on the icons' line, inside the viewport, and
    overlapping no other control."""
    width, height = VIEWPORTS[viewport]
    reader.page.set_viewport_size({"width": width, "height": height})
    try:
        reader.open(f"{lang}/chapters/{lang}/{TABS_PAGE}.html")
        boxes = reader.page.evaluate(HEADER_BOXES_JS)
    finally:
        reader.page.set_viewport_size({"width": 1280, "height": 800})
    header, switch, others = boxes["header"], boxes["switcher"], boxes["others"]
    assert switch is not None and len(others) >= 4, boxes
    where = f"{lang} at {width} px"
    for control in others + [switch]:  # nothing pushed out of the header bar
        assert header["top"] - 1 <= control["top"] and control["bottom"] <= header["bottom"] + 1, (where, control, header)
    middle = lambda b: (b["top"] + b["bottom"]) / 2
    icons = sorted(middle(b) for b in others)
    assert abs(middle(switch) - icons[len(icons) // 2]) <= 4, (where, switch, others)  # one line
    assert 0 <= switch["left"] and switch["right"] <= boxes["width"], (where, switch)
    for other in others:
        apart = (switch["right"] <= other["left"] or other["right"] <= switch["left"]
                 or switch["bottom"] <= other["top"] or other["bottom"] <= switch["top"])
        assert apart, (where, "the switch overlaps", other)


def workflow(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf8"))


def test_publishing_workflow_builds_and_deploys_pages():
    book = workflow("book.yml")
    assert book[True]["push"]["branches"] == ["main"]  # YAML reads the key `on` as True
    build, deploy = book["jobs"]["build"], book["jobs"]["deploy"]
    steps = [step.get("uses", step.get("run", "")) for step in build["steps"]]
    names = [s.split("@")[0] for s in steps]
    assert names.index("actions/checkout") < steps.index("bash tools/book.sh")
    order = [steps.index("bash tools/book.sh"), names.index("actions/configure-pages"),
             names.index("actions/upload-pages-artifact")]
    assert order == sorted(order), steps
    upload = build["steps"][names.index("actions/upload-pages-artifact")]
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert book["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    # The Colab copies: exported after the build, pushed by the one job that may write, to the
    # branch the book's Colab buttons open.
    export = steps.index(".venv/bin/python tools/export_colab.py _build/colab")
    assert steps.index("bash tools/book.sh") < export
    artifact = build["steps"][names.index("actions/upload-artifact")]["with"]
    assert artifact["path"] == "_build/colab"
    colab = book["jobs"]["colab"]
    assert colab["needs"] == "build" and colab["permissions"] == {"contents": "write"}
    assert colab["steps"][0]["uses"].split("@")[0] == "actions/download-artifact"
    assert colab["steps"][0]["with"]["name"] == artifact["name"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    assert colab["env"]["COLAB_BRANCH"] == config["sphinx"]["config"]["colab_branch"]
    push = colab["steps"][1]["run"]
    assert 'git init -q -b "$COLAB_BRANCH"' in push and push.rstrip().endswith('"$COLAB_BRANCH"')


def test_ci_workflow_runs_the_ci_script():
    runs = [step["run"] for step in workflow("ci.yml")["jobs"]["test"]["steps"] if "run" in step]
    assert runs == ["bash .ci/run"]
    assert "bash tools/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf8")


def test_readme_screenshots_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    for shot in [ROOT / "docs" / "screenshots" / f"{what}-{lang}.png"
                 for what in ("attention", "jupyterlab", "explorer-positional", "explorer-masks") for lang in LANGS]:
        assert f"({shot.relative_to(ROOT).as_posix()})" in readme
        header = shot.read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")) == (1280, 800)
