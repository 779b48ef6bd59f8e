"""Labelled bracketing precision, recall and F1 as EVALB computes them (Sekine and Collins,
1997), with the parameter file COLLINS.prm that parsing papers, Table 4's included, report with.

A constituent counts as a bracket (label, start, end) over word positions. The rules:

- part-of-speech tags are not brackets (a tag over a word is the word);
- words tagged as punctuation (``,`` ``:`` `````` ``''`` ``.``) and empty elements (``-NONE-``)
  are deleted before positions are counted, each tree by its own tags, and a constituent left
  without words is deleted with them (DELETE_LABEL);
- the label ``TOP`` is not counted (DELETE_LABEL TOP); function tags are cut (``NP-SBJ`` and
  ``NP=2`` are ``NP``); ``PRT`` counts as ``ADVP`` (EQ_LABEL ADVP PRT);
- brackets match as a multiset: a span and label found n times in the gold tree and m times in
  the test tree matches min(n, m) times;
- precision = matched / test brackets, recall = matched / gold brackets, summed over the whole
  corpus before dividing (not an average of sentence scores); F1 is their harmonic mean;
- a sentence whose words differ between gold and test (after the deletions) is an error. EVALB
  then skips it; ``score`` raises, since a skipped sentence would flatter the result;
- a sentence's length counts every word but empty elements (DELETE_LABEL_FOR_LENGTH -NONE-),
  punctuation included: the length by which EVALB reports "sentences <= 40 words".
"""

from collections import Counter
from dataclasses import dataclass

from nltk import Tree

DELETED_TAGS = frozenset({",", ":", "``", "''", ".", "-NONE-"})
DELETED_LABELS = frozenset({"TOP", "-NONE-"})
EQUAL_LABELS = {"PRT": "ADVP"}


def _label(label: str) -> str:
    cut = label.split("-")[0].split("=")[0] or label  # a label such as -NONE- keeps its name
    return EQUAL_LABELS.get(cut, cut)


def _is_word(tree: Tree) -> bool:
    return len(tree) == 1 and not isinstance(tree[0], Tree)


def brackets(tree: Tree, labelled: bool = True) -> tuple[Counter, list[str]]:
    """The brackets EVALB counts in ``tree`` ({(label, start, end): count}; the label is None
    when not ``labelled``) and the words it keeps."""
    found, words = Counter(), []

    def walk(node: Tree, start: int) -> int:
        if not isinstance(node, Tree):
            raise ValueError(f"word {node!r} has no part-of-speech tag above it")
        if _is_word(node):
            if node.label() not in DELETED_TAGS:
                words.append(node[0])
                return start + 1
            return start
        end = start
        for child in node:
            end = walk(child, end)
        label = _label(node.label())
        if end > start and label not in DELETED_LABELS:
            found[(label if labelled else None, start, end)] += 1
        return end

    walk(tree, 0)
    return found, words


def length(tree: Tree) -> int:
    """EVALB's sentence length: words but empty elements, punctuation included."""
    return sum(tag != "-NONE-" for _, tag in tree.pos())


@dataclass(frozen=True)
class Score:
    """Bracket counts over some sentences; precision, recall and F1 in percent (EVALB prints
    percent, and Table 4 reports F1 so). Scores add: ``sum(scores, Score())``."""

    matched: int = 0
    gold: int = 0
    test: int = 0
    sentences: int = 0
    complete: int = 0  # sentences with every bracket right (EVALB's "complete match")

    def __add__(self, other: "Score") -> "Score":
        return Score(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple:
        return (self.matched, self.gold, self.test, self.sentences, self.complete)

    @property
    def precision(self) -> float:
        return 100.0 * self.matched / self.test if self.test else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.matched / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(gold: Tree, test: Tree, labelled: bool = True) -> Score:
    """One sentence: EVALB's matched, gold and test bracket counts."""
    gold_brackets, gold_words = brackets(gold, labelled)
    test_brackets, test_words = brackets(test, labelled)
    if gold_words != test_words:
        raise ValueError(f"gold and test sentences differ (EVALB: length or words unmatch): "
                         f"gold {' '.join(gold_words)!r}, test {' '.join(test_words)!r}")
    matched = sum((gold_brackets & test_brackets).values())
    n_gold, n_test = sum(gold_brackets.values()), sum(test_brackets.values())
    return Score(matched, n_gold, n_test, 1, int(matched == n_gold == n_test))


def corpus_score(golds, tests, labelled: bool = True) -> Score:
    """EVALB's summary over a corpus: bracket counts summed over all sentences, then divided."""
    golds, tests = list(golds), list(tests)
    if len(golds) != len(tests):
        raise ValueError(f"need as many test trees as gold trees, got {len(tests)} and {len(golds)}")
    return sum((score(g, t, labelled) for g, t in zip(golds, tests)), Score())
