"""MyST inline syntax to plain Markdown (used by tools/myst_plain.py for every paragraph):

- ``{glue:text}`key:fmt```, ``{glue}`key```, ``{glue:md}`key```: the value the notebook glued,
  formatted as myst-nb formats it (its own format_plain_text);
- ``{doc}`page``` / ``{doc}`Text <page>``` and ``{ref}`label``` / ``{ref}`Text <label>```: links
  to the published book (tools/published.py), the text being the page's or section's title
  when none is given;
- links to another page (``[Text](page.ipynb)``, ``.md``, with or without ``#fragment``): to that
  page of the published book; links and images to other files of the repository: to GitHub;
- ``{math}`x```: ``$x$``; ``{sub}``/``{sup}``: HTML. Code spans stay as they are.
Any other role raises ValueError naming it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from myst_nb.core.variables import format_plain_text

import published

ROOT = Path(__file__).resolve().parents[1]
GLUE_MIME = "application/papermill.record/"
TOKEN = re.compile(
    r"(?P<code>(?<!`)(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`))"  # a code span
    r"|\{(?P<role>[\w:-]+)\}`(?P<content>[^`]*)`"  # a role
    r"|(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)",  # a link or image
    re.S)
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


@dataclass
class Page:
    """One chapter being converted, and what resolving its references needs."""
    config: dict  # _config.yml
    lang: str
    name: str
    glue: dict[str, dict] = field(default_factory=dict)  # key -> {mime type: data}, from its outputs
    title_of: Callable[[str, str], str] = lambda lang, name: name  # (lang, page) -> title
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (page, title)

    @property
    def where(self) -> str:
        return f"chapters/{self.lang}/{self.name}"

    def resolve(self, path: str) -> Path:
        """A path as a directive gives it: from the book's root with a leading /, else from
        the page's folder."""
        return ROOT / path.lstrip("/") if path.startswith("/") else ROOT / "chapters" / self.lang / path


def glued(content: str, role: str, page: Page) -> str:
    key, _, fmt = content.rpartition(":") if role == "glue:text" and ":" in content else (content, "", "")
    if key not in page.glue:
        raise ValueError(f"{page.where}: {{{role}}}`{content}`: no glue output named {key!r} in the notebook")
    data = page.glue[key]
    if role == "glue:md" and "text/markdown" in data:
        return data["text/markdown"]
    return format_plain_text(data["text/plain"], fmt)


def file_url(target: str, page: Page, raw: bool = False) -> str:
    """Where a relative link or image of the page points, once it is out of the book."""
    if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target, re.I):
        return target  # absolute, or within the page
    path, _, fragment = target.partition("#")
    repo_path = posixpath.normpath(posixpath.join("chapters", page.lang, path))
    folder, _, file = repo_path.rpartition("/")
    stem, _, suffix = file.rpartition(".")
    if re.fullmatch(r"chapters/(en|zh)", folder) and suffix in ("ipynb", "md") and (ROOT / repo_path).is_file():
        return published.page_url(page.config, folder[-2:], stem, fragment)
    if repo_path.startswith("../") or not (ROOT / repo_path).exists():
        raise ValueError(f"{page.where}: the link {target!r} points at no file of the repository")
    return published.github_file_url(page.config, repo_path, raw=raw) + (f"#{fragment}" if fragment else "")


def _reference(role: str, content: str, page: Page) -> str:
    explicit = EXPLICIT.match(content)
    text, target = (explicit["text"], explicit["target"]) if explicit else ("", content)
    if role == "doc":
        if target.startswith("/"):
            lang, name = target.strip("/").split("/")[-2:]
        else:
            lang, name = posixpath.normpath(posixpath.join("chapters", page.lang, target)).split("/")[-2:]
        return f"[{text or page.title_of(lang, name)}]({published.page_url(page.config, lang, name)})"
    if target not in page.labels:
        raise ValueError(f"{page.where}: {{ref}}`{content}`: no target ({target})= in chapters/{page.lang}")
    name, title = page.labels[target]
    return f"[{text or title}]({published.page_url(page.config, page.lang, name, target)})"


def convert_inline(text: str, page: Page) -> str:
    def one(m: re.Match) -> str:
        if m["code"]:
            return m["code"]
        if m["role"] is None:  # a link or an image
            inner = m["text"] if m["bang"] else convert_inline(m["text"], page)
            return f"{m['bang']}[{inner}]({file_url(m['target'], page, raw=bool(m['bang']))}{m['title'] or ''})"
        role, content = m["role"], m["content"]
        if role in ("glue", "glue:", "glue:any", "glue:text", "glue:md"):
            return glued(content, role, page)
        if role in ("doc", "ref"):
            return _reference(role, content, page)
        if role == "math":
            return f"${content}$"
        if role in ("sub", "sup"):
            return f"<{role}>{content}</{role}>"
        raise ValueError(f"{page.where}: no plain-Markdown rule for the {{{role}}} role "
                         "(add one to tools/myst_inline.py)")

    return TOKEN.sub(one, text)
