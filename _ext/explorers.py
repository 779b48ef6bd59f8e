"""The course's explorers (aiayn.explorers) in the HTML book, working offline and from file://.

A notebook output of mime type ``application/vnd.vegalite.v5+json`` (an explorer's Vega-Lite
specification) becomes, in the page, a ``<div class="aiayn-explorer">`` holding the
specification as JSON; two scripts draw it there with vega-embed:

- ``_static/aiayn-vega.js``: Vega, Vega-Lite and vega-embed in one file, bundled at build time
  by vl-convert-python (``javascript_bundle``: the libraries ship inside its wheel, nothing is
  downloaded), wrapped in a function so that its top-level names stay out of the page's scope;
  a classic script, not a module, because Chromium refuses modules from file://;
- ``_static/aiayn-explorers.js``: finds the explorers of the page and embeds each (SVG, no
  action menu, which would link the online editor).

Both are written into the build's _static only when a page has an explorer, and only the pages
with one load them (Sphinx adds a script to one page when ``add_js_file`` is called from
``html-page-context``); the other pages stay as light as before. The still image the output also
carries is for viewers that cannot run the explorer (the Colab copy, GitHub).

myst-nb renders a mime type it does not know only through a plugin found by the entry-point
group ``myst_nb.mime_renderers``, which a local extension cannot declare; so this extension adds
its renderer to the list that myst-nb loads from there (``load_mime_renders``).
"""

from __future__ import annotations

import functools
import html
import json
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

MIME = "application/vnd.vegalite.v5+json"
VEGA_LITE = "5.21"  # as aiayn.explorers.core.VEGA_LITE: the stills and JupyterLab's renderer speak v5
BUNDLE, LOADER = "aiayn-vega.js", "aiayn-explorers.js"
MARK = 'class="aiayn-explorer"'

LOADER_JS = """// Draws every explorer of the page (_ext/explorers.py) with the bundled vega-embed.
(function () {
  function draw(box) {
    var view = box.querySelector('.aiayn-explorer-view');
    var spec = JSON.parse(box.querySelector('script.aiayn-explorer-spec').textContent);
    window.vegaEmbed(view, spec, {actions: false, renderer: 'svg'}).then(function (result) {
      box.aiaynView = result.view;  // for tests and the curious: the live Vega view
      box.setAttribute('data-ready', 'true');
    }).catch(function (error) {
      box.setAttribute('data-error', String(error));
      view.textContent = 'The explorer could not be drawn: ' + error;
    });
  }
  function start() { document.querySelectorAll('.aiayn-explorer').forEach(draw); }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', start); } else { start(); }
})();
"""


def explorer_html(spec) -> str:
    """The page's markup for one explorer: an empty view and the specification as JSON."""
    text = spec if isinstance(spec, str) else json.dumps(spec, ensure_ascii=False, separators=(",", ":"))
    json.loads(text)  # a malformed output fails the build here, not in the reader's browser
    text = text.replace("</", "<\\/")  # a "</script>" inside a string must not close the tag
    description = spec.get("description", "") if isinstance(spec, dict) else ""
    return (f'<div {MARK} data-ready="false" style="overflow-x: auto">'
            f'<div class="aiayn-explorer-view" role="figure" aria-label="{html.escape(description)}"></div>'
            f'<script type="application/json" class="aiayn-explorer-spec">{text}</script></div>')


class VegaLiteRenderer:
    """A myst-nb mime renderer plugin (myst_nb.core.render.MimeRenderPlugin): the explorer's
    specification before any other representation of its output in HTML builds."""

    mime_priority_overrides = [(builder, MIME, 1) for builder in ("html", "dirhtml", "singlehtml")]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if inline or data.mime_type != MIME:
            return None
        return [nodes.raw("", explorer_html(data.content), format="html", classes=["output", "aiayn-explorer-output"])]


def _add_renderer() -> None:
    from myst_nb.core import render

    if getattr(render.load_mime_renders, "aiayn_explorers", False):
        return
    from_entry_points = render.load_mime_renders

    @functools.lru_cache(maxsize=None)
    def load_mime_renders():
        return [*from_entry_points(), VegaLiteRenderer]

    load_mime_renders.aiayn_explorers = True
    render.load_mime_renders = load_mime_renders


def bundle_js() -> str:
    """Vega, Vega-Lite and vega-embed as one classic script that defines window.vegaEmbed."""
    import vl_convert

    return (f"/* Vega {vl_convert.get_vega_version()}, Vega-Lite {VEGA_LITE}, vega-embed "
            f"{vl_convert.get_vega_embed_version()}: bundled by vl-convert-python (_ext/explorers.py); "
            f"BSD-3-Clause licences. */\n(function () {{\n{vl_convert.javascript_bundle(vl_version=VEGA_LITE)}\n}})();\n")


def add_scripts(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The two scripts, on the pages that have an explorer only."""
    if MARK not in context.get("body", ""):
        return
    app.add_js_file(BUNDLE, defer="defer")
    app.add_js_file(LOADER, defer="defer")
    app.env.aiayn_explorer_pages = getattr(app.env, "aiayn_explorer_pages", set()) | {pagename}


def write_scripts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    pages = getattr(app.env, "aiayn_explorer_pages", set())
    if not pages:
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / BUNDLE).write_text(bundle_js(), encoding="utf8")
    (static / LOADER).write_text(LOADER_JS, encoding="utf8")
    logger.info("explorers: %d page(s) with an explorer; wrote _static/%s and _static/%s",
                len(pages), BUNDLE, LOADER)


def setup(app):
    _add_renderer()
    app.connect("html-page-context", add_scripts)
    app.connect("build-finished", write_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
