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

Two parsers scored on the same sentences are compared by ``paired_randomisation``: the
stratified shuffling test of parsing papers (Bikel's comparator), which swaps the two parsers'
counts sentence by sentence, since corpus F1 is not an average of sentence scores.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np
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


def paired_randomisation(a, b, rounds: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Corpus F1 of parser ``a`` minus that of ``b`` over the same sentences, and the two-sided
    p-value of "the two parsers are exchangeable": each round swaps their outputs on every
    sentence with probability 1/2 and recomputes the F1 difference; p = (1 + rounds at least as
    far from 0 as observed) / (1 + rounds). ``a``, ``b``: per-sentence Scores, or (matched, gold,
    test) rows, in the same sentence order."""
    a, b = (np.array([x.as_tuple()[:3] if isinstance(x, Score) else tuple(x)[:3] for x in side], dtype=float)
            for side in (a, b))
    if a.shape != b.shape or not len(a):
        raise ValueError(f"b: needs one score per sentence of a ({len(a)} sentences), got {len(b)}")
    if (a[:, 1] != b[:, 1]).any():
        raise ValueError("b: its gold bracket counts differ from a's: not the same sentences")
    if rounds < 1:
        raise ValueError(f"rounds: must be at least 1, got {rounds}")

    def f1(totals):  # (..., 3) matched, gold, test -> F1 in percent
        m, g, t = np.moveaxis(totals, -1, 0)
        return np.where(g + t > 0, 200.0 * m / np.maximum(g + t, 1), 0.0)

    observed = float(f1(a.sum(0)) - f1(b.sum(0)))
    swap = np.random.default_rng(seed).random((rounds, len(a))) < 0.5
    shuffled_a = a.sum(0) + swap @ (b - a)
    shuffled = f1(shuffled_a) - f1(a.sum(0) + b.sum(0) - shuffled_a)
    hits = int((np.abs(shuffled) >= abs(observed) - 1e-9).sum())
    return observed, (1 + hits) / (1 + rounds)


def f1_interval(rows, confidence: float = 0.95, rounds: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap interval of corpus F1 over sentences: how much the score would move
    on another draw of as many sentences. ``rows``: per-sentence Scores or (matched, gold, test)."""
    counts = np.array([x.as_tuple()[:3] if isinstance(x, Score) else tuple(x)[:3] for x in rows], dtype=float)
    if not len(counts) or not 0 < confidence < 1 or rounds < 1:
        raise ValueError(f"rows: needs sentences, confidence in (0, 1) and rounds >= 1; got {len(counts)} rows, "
                         f"confidence {confidence!r}, rounds {rounds!r}")
    picks = np.random.default_rng(seed).integers(0, len(counts), size=(rounds, len(counts)))
    m, g, t = counts[picks].sum(axis=1).T
    f1 = np.where(g + t > 0, 200.0 * m / np.maximum(g + t, 1), 0.0)
    low, high = np.quantile(f1, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)
