"""The explorers (aiayn.explorers, _ext/explorers.py) in a real browser, with the network blocked:
headless Chromium (tools/browser.py) on the book build (tests/book_fixtures.py) served on
127.0.0.1, every request to another host aborted and recorded (a test fails on any), and once
from file://.

Checked, in both languages: each explorer draws; moving its controls changes what is drawn to
the numbers the course computes in NumPy (read from the SVG marks' labels, which Vega writes from
the data it draws): the positional explorer's hands at pos and pos + k are rows of
sinusoidal_table and its marked dot product is offset_dot_product; the masks explorer's weights
are the course's masked softmax under the chosen lengths, blocked keys 0; the attention
explorer on the training chapter shows layer 2, head 3 of the page's committed weights and, on
hover, that query's row, then the heads' mean. Without a browser: only the pages with an explorer load the bundle.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from book_fixtures import LANGS, ROOT, book_html  # noqa: F401 (fixture)

import browser  # tools/browser.py, on sys.path via book_fixtures

sys.path.insert(0, str(ROOT / "_ext"))
import explorers as book_ext  # noqa: E402  (_ext/explorers.py)

from aiayn.explorers import masks as mask_module  # noqa: E402
from aiayn.lab.positional import offset_dot_product  # noqa: E402
from aiayn.np.embeddings import sinusoidal_table  # noqa: E402

TITLES = {"en": {"key": "key", "query": "query", "weight": "weight", "hand": "hand"},
          "zh": {"key": "键", "query": "查询", "weight": "权重", "hand": "指针"}}
READY_JS = """() => [...document.querySelectorAll('.aiayn-explorer')].every(
    e => e.dataset.ready === 'true' || e.dataset.error)"""
# The aria-label of every mark item of a kind ('rect', 'symbol', 'text') in an explorer,
# grouped by the mark's name, in document order.
MARKS_JS = """(box, kind) => [...box.querySelectorAll(`g.mark-${kind}.role-mark`)].map(
    g => [...g.querySelectorAll('path, text')].map(p => p.getAttribute('aria-label') || p.textContent))"""


class Tab:
    def __init__(self, page, external, errors):
        self.page, self.external, self.errors = page, external, errors

    def open(self, url: str) -> list:
        self.external.clear()
        response = self.page.goto(url)
        assert response is None or response.status == 200, (url, response and response.status)
        self.page.wait_for_function(READY_JS, timeout=30_000)
        boxes = self.page.locator(".aiayn-explorer").all()
        failed = [b.get_attribute("data-error") for b in boxes if b.get_attribute("data-error")]
        assert boxes and not failed, (url, failed, self.errors)
        assert self.external == [], f"{url}: requests that left the machine: {self.external}"
        return boxes


@pytest.fixture(scope="module")
def tab(book_html):
    choice = browser.find_browser.chosen()
    if choice.path is None:  # the rule of tests/test_browser.py
        message = f"no browser for the explorer test: {choice.detail}"
        if browser.find_browser.missing_browser_fails(dict(os.environ)):
            pytest.fail(message + " (CI=true: a missing browser is a failure, not a skip)")
        pytest.skip(message)
    with browser.serve(book_html) as site, browser.chromium((1280, 900)) as context:
        external, errors = [], []

        def offline(route):
            url = route.request.url
            if url.startswith(site) or url.startswith("file://") or url.startswith("http://127.0.0.1:"):
                route.continue_()
            else:
                external.append(url)
                route.abort()

        context.route("**/*", offline)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        result = Tab(page, external, errors)
        result.site = site
        yield result


def labels(text: str) -> dict[str, str]:
    """'key: 3; weight: 0.12' -> {'key': '3', 'weight': '0.12'}."""
    return dict(part.split(": ", 1) for part in text.split("; ") if ": " in part)


def move(box, name: str, value) -> None:
    """Set a bound control as a reader would: choose an option, or drag a slider to a value."""
    control = box.locator(f"[name='{name}']").first
    if control.evaluate("e => e.tagName") == "SELECT":
        control.select_option(str(value))
    else:
        control.fill(str(value))
    box.page.wait_for_timeout(50)  # Vega re-renders on its next frame


@pytest.mark.parametrize("lang", LANGS)
def test_positional_explorer_draws_the_table_and_the_dot_product(tab, lang):
    box = tab.open(f"{tab.site}{lang}/chapters/{lang}/positional_encoding.html")[0]
    pair, pos, k = 5, 10, 7
    for name, value in (("pair", pair), ("pos", pos), ("k", k)):
        move(box, name, value)
    hand = TITLES[lang]["hand"]
    hands = {labels(t)[hand]: labels(t) for group in box.evaluate(MARKS_JS, "symbol") for t in group
             if hand + ": " in t}
    pe = sinusoidal_table(pos + k + 1, 128)
    for name, at in (("pos", pos), ("pos + k", pos + k)):
        drawn = (float(hands[name]["sin"]), float(hands[name]["cos"]))
        assert drawn == (round(pe[at, 2 * pair], 3), round(pe[at, 2 * pair + 1], 3)), (name, drawn)
    dots = [labels(t) for group in box.evaluate(MARKS_JS, "symbol") for t in group
            if {"k", "PE[pos] · PE[pos+k]"} <= set(labels(t))]
    assert [(int(d["k"]), float(d["PE[pos] · PE[pos+k]"])) for d in dots] == [(k, round(float(offset_dot_product(k, 128)), 3))]
    turned = format(k * 10000 ** (-2 * pair / 128), ".3f")
    assert any(turned in t for group in box.evaluate(MARKS_JS, "text") for t in group), turned


@pytest.mark.parametrize("lang", LANGS)
def test_masks_explorer_blocks_the_padding_and_shares_each_row(tab, lang):
    box = tab.open(f"{tab.site}{lang}/chapters/{lang}/attention_in_the_model.html")[0]
    source_real, target_real = 2, 5
    move(box, "source_real", source_real)
    move(box, "target_real", target_real)
    rects = [g for g in box.evaluate(MARKS_JS, "rect") if g]
    assert len(rects) == 4, [len(g) for g in rects]
    scores = mask_module.scores(6, 7)
    t = TITLES[lang]
    for panel, group in zip(mask_module.PANELS, rects):
        drawn = {(int(labels(s)[t["query"]]), int(labels(s)[t["key"]])): labels(s)[t["weight"]] for s in group}
        expected = mask_module.weights(panel, source_real, target_real, scores[panel])
        assert drawn == {(q, k): f"{w:.2f}" for (q, k), w in np.ndenumerate(expected)}, panel
        assert (expected[:, source_real:] == 0).all() if panel in ("encoder", "cross") else True


def page_spec(book_html: Path, lang: str, name: str) -> dict:
    """The Vega-Lite specification of the first explorer on a built chapter page."""
    page = (book_html / lang / "chapters" / lang / f"{name}.html").read_text(encoding="utf8")
    return json.loads(page.split('class="aiayn-explorer-spec">')[1].split("</script>")[0].replace("<\\/", "</"))


def committed_heads(spec: dict, sentence: int, kind: str, layer: int) -> np.ndarray:
    """(H, queries, keys): the weights the page's explorer holds for one sentence, kind and layer
    (its rows: one per sentence, kind, layer and head, the matrix flattened in thousandths)."""
    rows = sorted((r for r in spec["data"]["values"]
                   if r["s"] == sentence and r["t"] == kind and r["l"] == layer and r["h"] > 0), key=lambda r: r["h"])
    return np.array([np.array(r["w"]).reshape(-1, r["n"]) / 1000 for r in rows])


@pytest.mark.parametrize("lang", LANGS)
def test_attention_explorer_layer_head_and_hover(tab, book_html, lang):
    """The training chapter's explorer (this run's model, 2 + 2 layers of 4 heads): layer 2 head 3
    of the encoder draws the committed weights; hovering a row shows that query's weights beside
    chance (1/S each); the heads' mean is the mean of the committed heads."""
    box = tab.open(f"{tab.site}{lang}/chapters/{lang}/training_multi30k.html")[0]
    t = TITLES[lang]
    move(box, "kind", "encoder")
    move(box, "layer", 2)
    move(box, "head", 3)
    heads = committed_heads(page_spec(book_html, lang, "training_multi30k"), 0, "encoder", 2)  # (H, S, S)
    S = heads.shape[-1]

    def drawn(group):
        return {(int(labels(s)[t["query"]]), int(labels(s)[t["key"]])): float(labels(s)[t["weight"]]) for s in group}

    heatmap = box.evaluate(MARKS_JS, "rect")[0]
    assert drawn(heatmap) == {(q, k): w for (q, k), w in np.ndenumerate(heads[2])}  # head 3
    # Hover the row of query 2: the bars show its weights, the ticks chance (1/S each).
    cells = box.locator("g.mark-rect.role-mark").first.locator("path")
    row = next(i for i, s in enumerate(heatmap) if (int(labels(s)[t["query"]]), int(labels(s)[t["key"]])) == (2, 0))
    cells.nth(row).hover()
    box.page.wait_for_timeout(100)
    bars = [labels(s) for s in box.evaluate(MARKS_JS, "rect")[1]]
    assert [(int(b[t["key"]]), float(b[t["weight"]])) for b in bars] == list(enumerate(heads[2, 2]))
    ticks = [labels(s) for s in box.evaluate(MARKS_JS, "rect")[2]]  # Vega draws ticks as rects
    assert len(ticks) == S and {float(list(x.values())[-1]) for x in ticks} == {round(1 / S, 3)}
    # The heads' mean, to three decimals.
    move(box, "head", 0)
    mean = drawn(box.evaluate(MARKS_JS, "rect")[0])
    expected = np.floor(np.mean(np.round(heads * 1000), axis=0) + 0.5) / 1000  # JavaScript rounds halves up
    assert max(abs(mean[q, k] - expected[q, k]) for q, k in mean) < 1e-9


def test_an_explorer_works_from_file_urls(tab, book_html):
    boxes = tab.open((book_html / "zh" / "chapters" / "zh" / "attention_in_the_model.html").as_uri())
    assert boxes[0].locator("svg").count() == 1


def test_only_pages_with_an_explorer_load_the_bundle(book_html):
    with_bundle, with_explorer = set(), set()
    for page in book_html.rglob("*.html"):
        text = page.read_text(encoding="utf8")
        if f"_static/{book_ext.BUNDLE}" in text:
            with_bundle.add(page.relative_to(book_html).as_posix())
        if book_ext.MARK in text:
            with_explorer.add(page.relative_to(book_html).as_posix())
    assert with_bundle == with_explorer and {f"{lang}/chapters/{lang}/positional_encoding.html"
                                             for lang in LANGS} <= with_explorer
    for lang in LANGS:
        page = (book_html / lang / "chapters" / lang / "positional_encoding.html").read_text(encoding="utf8")
        spec = json.loads(page.split('class="aiayn-explorer-spec">')[1].split("</script>")[0].replace("<\\/", "</"))
        assert spec["$schema"].endswith("vega-lite/v5.json")
        size = len(page.encode()) + sum((book_html / lang / "chapters" / lang / img).stat().st_size
                                        for img in set(__import__("re").findall(r'src="([^"]+\.png)"', page)))
        assert size < 2_000_000 - (book_html / lang / "_static" / book_ext.BUNDLE).stat().st_size, size
