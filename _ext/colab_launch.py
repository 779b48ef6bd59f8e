"""Point every page's Colab launch button at the page's plain copy on the Colab branch.

Colab renders no MyST, so sphinx-book-theme's Colab button, which opens the chapter as it is on
the book's branch, would show raw tab sets and roles. tools/export_colab.py writes a plain
copy of every chapter at the same path, and .github/workflows/book.yml pushes the copies to the
branch named by the Sphinx setting ``colab_branch`` (_config.yml). This extension runs after the
theme has built its launch buttons (``html-page-context``, priority 501) and swaps the branch in
the Colab button's URL. A page whose Colab button is not where the theme puts it is a warning,
which the build's -W turns into an error.
"""

from __future__ import annotations

from sphinx.util import logging

logger = logging.getLogger(__name__)
COLAB = "https://colab.research.google.com/github/"


def colab_url(url: str, branch: str, colab_branch: str) -> str:
    """.../github/<org>/<repo>/blob/<branch>/<path> -> the same path on colab_branch."""
    head, sep, path = url.partition(f"/blob/{branch}/")
    if not url.startswith(COLAB) or not sep:
        raise ValueError(f"not a Colab URL on branch {branch!r}: {url}")
    return f"{head}/blob/{colab_branch}/{path}"


def point_colab_button(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    groups = [b for b in context.get("header_buttons", []) if b.get("label") == "launch-buttons"]
    if not groups:
        return  # a page without launch buttons (not a notebook)
    colab = [b for b in groups[0]["buttons"] if b.get("text") == "Colab"]
    if len(colab) != 1:
        logger.warning("colab_launch: %s has %d Colab buttons", pagename, len(colab), location=pagename)
        return
    branch = app.config.html_theme_options.get("repository_branch", "main")
    colab[0]["url"] = colab_url(colab[0]["url"], branch, app.config.colab_branch)


def setup(app):
    app.add_config_value("colab_branch", "colab", "html")
    app.connect("html-page-context", point_colab_button, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
