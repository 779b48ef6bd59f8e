"""Link every chapter page to the same page in the other language.

The book is two Sphinx builds of one source tree (tools/build_book.py): the English build
writes ``<out>/html/en/``, the Chinese one ``<out>/html/zh/``, and the page for
``chapters/en/X`` has the counterpart ``chapters/zh/X`` (and back). On ``html-page-context``
this extension puts the counterpart's relative URL in the template context;
``_templates/language-switch.html`` renders it. A page without a counterpart source file is
a warning, which the build's -W turns into an error.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

# Build folder (under <out>/html/) and chapters folder -> (link label, hreflang).
LANGUAGES = {"en": ("English", "en"), "zh": ("中文", "zh-CN")}


def _this_language(app) -> str:
    """'en' or 'zh' from the Sphinx `language` setting (en, zh_CN)."""
    lang = (app.config.language or "en").split("_")[0]
    if lang not in LANGUAGES:
        raise ValueError(f"bilingual: unsupported language {app.config.language!r}")
    return lang


def _source_exists(app, docname: str) -> bool:
    srcdir = Path(app.srcdir)
    return any((srcdir / f"{docname}{suffix}").is_file() for suffix in app.config.source_suffix)


def add_counterpart(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    context["bilingual_url"] = None
    lang = _this_language(app)
    prefix = f"chapters/{lang}/"
    if not pagename.startswith(prefix):
        return  # genindex, search, ...: no chapter counterpart
    (other,) = set(LANGUAGES) - {lang}
    counterpart = f"chapters/{other}/{pagename[len(prefix):]}"
    if not _source_exists(app, counterpart):
        logger.warning("bilingual: %s has no counterpart %s", pagename, counterpart, location=pagename)
        return
    # Both builds sit side by side: <out>/html/<lang>/<page>.html. Go from this page's
    # folder up to <out>/html/, then down into the other build.
    here = posixpath.dirname(f"{lang}/{app.builder.get_target_uri(pagename)}")
    there = f"{other}/{app.builder.get_target_uri(counterpart)}"
    label, hreflang = LANGUAGES[other]
    context["bilingual_url"] = posixpath.relpath(there, here)
    context["bilingual_label"] = label
    context["bilingual_hreflang"] = hreflang


def setup(app):
    app.connect("html-page-context", add_counterpart)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
