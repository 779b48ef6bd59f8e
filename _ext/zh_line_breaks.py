"""Line breaks inside Chinese sentences, removed from the Chinese build.

The chapters' markdown is wrapped at about a hundred columns, and MyST keeps each wrap of a
paragraph as a soft break (a text node "\\n"). HTML shows a soft break as a space, which is
right between English words and wrong in Chinese, which puts no spaces between words or after
its full-width punctuation: "注意力\\n机制" would read "注意力 机制", "，\\n第二" would read "， 第二".
This transform drops a soft break, in the Chinese build only, where it has a Chinese character on
both sides, or full-width punctuation (，。：；（） and the like) on either side. A break between
a Chinese character and Latin text or a number stays a space, as the book writes them anyway
("在 GPU 上"). Code, math and raw output keep their line breaks.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform

HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PUNCTUATION = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"  # 、。「」 （），：；！？ ...
_BREAK = re.compile(rf"(?<=[{PUNCTUATION}])[ \t]*\n[ \t]*|[ \t]*\n[ \t]*(?=[{PUNCTUATION}])"
                    rf"|(?<=[{HAN}])[ \t]*\n[ \t]*(?=[{HAN}])")
_KEEP = (nodes.FixedTextElement, nodes.literal, nodes.math, nodes.raw, nodes.comment)


def join_lines(text: str) -> str:
    """``text`` without the line breaks that Chinese does not read as spaces."""
    return _BREAK.sub("", text)


def _neighbour(parent: nodes.Element, index: int, step: int) -> str:
    """The character next to ``parent[index]`` on the side ``step`` (-1 or +1), past empty nodes
    (MyST leaves an empty Text before inline markup)."""
    index += step
    while 0 <= index < len(parent):
        text = parent[index].astext()
        if text:
            return text[-1] if step < 0 else text[0]
        index += step
    return ""


def join_soft_breaks(document: nodes.Node) -> None:
    """Drops, everywhere in ``document`` but code, math and raw output, the line breaks that
    Chinese does not read as spaces."""
    for text in list(document.findall(nodes.Text)):
        parent = text.parent
        if parent is None or isinstance(parent, _KEEP):
            continue
        # By identity: a Text is a str, so index() and remove() would find the first equal one.
        index = next(i for i, child in enumerate(parent.children) if child is text)
        source = str(text)
        if source.strip() or "\n" not in source:  # a text with words: breaks inside it
            joined = join_lines(source)
        else:  # a soft break of its own (MyST's): its neighbours decide
            before, after = _neighbour(parent, index, -1), _neighbour(parent, index, +1)
            joined = "" if before and after and join_lines(before + source + after) == before + after else source
        if not joined:
            del parent[index]
        elif joined != source:
            parent[index] = nodes.Text(joined)


class JoinChineseLines(SphinxTransform):
    default_priority = 800  # after MyST's and myst-nb's transforms have made the paragraphs' text

    def apply(self, **kwargs) -> None:
        if (self.config.language or "").startswith("zh"):
            join_soft_breaks(self.document)


def setup(app):
    app.add_transform(JoinChineseLines)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
