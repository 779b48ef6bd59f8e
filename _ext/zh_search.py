"""The Chinese build's search index without Sphinx 7.4's quadratic step.

Sphinx's ``sphinx.search.zh.SearchChinese`` remembers every Latin word it has split in a list,
``latin_terms``, and asks ``word in self.latin_terms`` for every word it stems: a linear scan
of a list that grows with the book. On this book that scan was most of the Chinese build
(about 43 of its 69 seconds on a 2-core machine; the English build takes about 25). Newer Sphinx
releases keep the words in a set; with the pinned Sphinx 7.4.7 this extension does the same.
Membership is all the list was used for, so the index is the same, entry for entry
(tests/test_book.py compares the two classes on this book's words).
"""

from __future__ import annotations

from sphinx.search.zh import JIEBA, SearchChinese

if JIEBA:
    import jieba


class SearchChineseSet(SearchChinese):
    """SearchChinese with ``latin_terms`` a set, one per build (Sphinx's is a list shared by the
    class). ``stem`` is the parent's: its ``word in self.latin_terms`` now looks up a set."""

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = set()

    def split(self, input: str) -> list[str]:
        # The parent's split, with update() for its list's extend().
        chinese = list(jieba.cut_for_search(input)) if JIEBA else []
        latin1 = [term.strip() for term in self.latin1_letters.findall(input)]
        self.latin_terms.update(latin1)
        return chinese + latin1


def setup(app):
    app.add_search_language(SearchChineseSet)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
