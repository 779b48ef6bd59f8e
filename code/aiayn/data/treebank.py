"""A treebank of English-like sentences drawn from a seeded probabilistic grammar (§6.3 in miniature).

The paper parsed the Wall Street Journal part of the Penn Treebank, which is licensed; this
course makes its own treebank instead. ``GRAMMAR`` is a probabilistic context-free grammar
(PCFG, in nltk's notation) with recursion where parsing is hard in English too: prepositional
phrases that attach to a noun or to a verb, relative clauses, clausal complements with and
without "that", coordination, and words with several parts of speech ("that", "her").

Its symbols carry hidden distinctions, written as suffixes: ``PP-N`` attaches to a noun and
``PP-V`` to a verb, ``VBD-T`` is a transitive verb. A tree shows only the plain label (``PP``,
``VBD``), as the Penn Treebank's trees are scored without their function tags (``NP-SBJ`` ->
``NP``). So the words and tags of a sentence do not reveal its structure: "saw the man with the
telescope" is made by both kinds of PP. A symbol starting with ``_`` is no constituent: its
children join its parent (``_NB``, a base noun phrase, makes the flat ``(NP DT JJ NN)``).

    bank = Treebank()
    data = bank.split(seed=0)      # {"train": 40,000 trees, "dev": 500, "test": 1,000}
    print(data["test"][0])         # an nltk.Tree, e.g. (S (NP (PRP she)) (VP (VBD slept)) (. .))
"""

import bisect
import hashlib
import itertools
import random
import sys
from functools import cached_property

from nltk import PCFG, Nonterminal, Tree
from nltk.parse import ViterbiParser

# Structure. Probabilities of one left-hand side sum to 1 (nltk checks it).
RULES = """
S-TOP -> NP-SBJ VP PERIOD [0.84] | S-C COMMA CC S-C PERIOD [0.08] | PP-V COMMA NP-SBJ VP PERIOD [0.08]
S-C -> NP-SBJ VP [1.0]
NP-SBJ -> _NB [0.52] | PRP [0.14] | NNP [0.10] | NP-B PP-N [0.12] | NP-B SBAR-R [0.07] | NP-B CC NP-B [0.05]
NP-O -> _NB [0.50] | PRP-O [0.08] | NNP [0.08] | NP-B PP-N [0.20] | NP-B SBAR-R [0.09] | NP-B CC NP-B [0.05]
NP-B -> _NB [0.85] | NNP [0.15]
_NB -> DT NN [0.38] | DT JJ NN [0.18] | DT-P NNS [0.10] | DT-P JJ NNS [0.05] | NNS [0.08] | JJ NNS [0.04] | DT NN NN [0.07] | DT JJ JJ NN [0.04] | PRPS NN [0.06]
PP-N -> IN-N NP-O [1.0]
PP-V -> IN-V NP-O [1.0]
PP-D -> TO NP-O [1.0]
VP -> VBD-T NP-O [0.28] | VBD-I [0.09] | VBD-I PP-V [0.07] | VBD-I ADVP [0.04] | VBD-T NP-O PP-V [0.14] | VBD-D NP-O NP-O [0.04] | VBD-D NP-O PP-D [0.03] | VBD-S SBAR-C [0.07] | VBD-K NP-O [0.05] | VBD-K SBAR-C [0.04] | VBD-L ADJP [0.07] | VP-C CC VP-C [0.08]
VP-C -> VBD-T NP-O [0.45] | VBD-I [0.20] | VBD-T NP-O PP-V [0.15] | VBD-I PP-V [0.10] | VBD-L ADJP [0.10]
ADVP -> RB [1.0]
ADJP -> JJ-P [0.75] | RB-A JJ-P [0.25]
SBAR-C -> IN-C S-C [0.6] | S-C [0.4]
SBAR-R -> WHNP-S S-RS [0.65] | WHNP-O S-RO [0.35]
WHNP-S -> WDT [0.6] | WP [0.4]
WHNP-O -> WDT [0.7] | WP [0.3]
S-RS -> VP-R [1.0]
VP-R -> VBD-T NP-O [0.45] | VBD-I [0.25] | VBD-I PP-V [0.15] | VBD-L ADJP [0.15]
S-RO -> NP-SBJ VP-G [1.0]
VP-G -> VBD-T [0.7] | VBD-T PP-V [0.3]
"""
# Words, uniform within a tag unless weighted (word: weight).
LEXICON = {
    "DT": {"the": 12, "a": 5, "this": 1, "that": 1, "every": 1},
    "DT-P": {"the": 6, "these": 1, "some": 1},
    "NN": "dog cat man woman child teacher student bird house park garden car telescope book "
          "letter river city friend doctor box table window hill road",
    "NNS": "dogs cats men women children students birds books letters friends flowers apples",
    "NNP": "John Mary Alice Bob Paris London",
    "PRP": "he she they we it", "PRP-O": "him her them us it", "PRPS": "his her their our",
    "JJ": "old big small red happy young tall quiet angry little",
    "JJ-P": "happy tired angry ready afraid quiet sad", "RB-A": "very quite rather too",
    "RB": "quickly slowly again today loudly often",
    "VBD-T": "saw chased liked found watched followed helped visited painted carried",
    "VBD-I": "slept barked laughed arrived left smiled waited ran",
    "VBD-D": "gave sent showed offered brought", "VBD-S": "said thought claimed hoped",
    "VBD-K": "knew believed heard forgot noticed", "VBD-L": "was seemed became looked felt",
    "IN-N": {"of": 7, "with": 5, "near": 3, "in": 3, "on": 2},
    "IN-V": {"in": 5, "on": 3, "with": 4, "after": 3, "near": 2, "at": 3},
    "IN-C": "that", "TO": "to", "CC": {"and": 15, "or": 3, "but": 2},
    "WDT": {"that": 3, "which": 2}, "WP": "who", "PERIOD": ".", "COMMA": ",",
}
TAG_NAMES = {"PERIOD": ".", "COMMA": ",", "PRPS": "PRP$"}  # tags nltk's notation cannot spell


def plain_label(symbol: str) -> str:
    """The label a tree shows: hidden distinctions dropped, as EVALB drops function tags."""
    return TAG_NAMES.get(symbol, symbol.split("-")[0])


def grammar_text() -> str:
    lines = [RULES.strip()]
    for tag, words in LEXICON.items():
        weights = dict.fromkeys(words.split(), 1) if isinstance(words, str) else words
        total = sum(weights.values())
        lines.append(f"{tag} -> " + " | ".join(f"{w!r} [{n / total!r}]" for w, n in weights.items()))
    return "\n".join(lines)


class TooLong(Exception):
    """A draw passed max_words: it is dropped and the next one drawn (rejection sampling)."""


class Treebank:
    """Draws trees from ``GRAMMAR``. Same seed, same trees, on every machine."""

    def __init__(self, max_words: int = 40):
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 3:
            raise ValueError(f"max_words must be an int >= 3, got {max_words!r}")
        self.max_words = max_words
        self.grammar = PCFG.fromstring(grammar_text())
        self._choices = {}
        for lhs in {p.lhs() for p in self.grammar.productions()}:
            productions = self.grammar.productions(lhs=lhs)
            cumulative = list(itertools.accumulate(p.prob() for p in productions))
            self._choices[lhs] = ([p.rhs() for p in productions], [c / cumulative[-1] for c in cumulative])

    def words(self) -> list[str]:
        """Every word the grammar can write, sorted."""
        return sorted({p.rhs()[0] for p in self.grammar.productions() if p.is_lexical()})

    def tags(self) -> list[str]:
        """The part-of-speech tags of the grammar's words, sorted."""
        return sorted({plain_label(p.lhs().symbol()) for p in self.grammar.productions() if p.is_lexical()})

    def labels(self) -> list[str]:
        """The plain labels of the grammar's constituents (not of its tags), sorted."""
        return sorted({plain_label(p.lhs().symbol()) for p in self.grammar.productions()
                       if p.is_nonlexical() and not p.lhs().symbol().startswith("_")})

    def sample(self, num: int, seed: int, exclude=()) -> list[Tree]:
        """``num`` trees of at most ``max_words`` words (punctuation included, as EVALB counts
        length), none of whose sentences is in ``exclude`` (a collection of word tuples)."""
        if isinstance(num, bool) or not isinstance(num, int) or num < 0:
            raise ValueError(f"num must be an int >= 0, got {num!r}")
        excluded = set(map(tuple, exclude))
        return list(itertools.islice((t for t in self._stream(seed) if tuple(t.leaves()) not in excluded), num))

    def _stream(self, seed: int):
        """Trees drawn one after another; the same seed gives the same stream (Python's
        ``random.Random``, whose ``random()`` is reproducible across Python versions)."""
        rng = random.Random(seed)
        while True:
            try:
                (tree,) = self._expand(self.grammar.start(), rng, [0])
                yield tree
            except TooLong:
                continue

    def split(self, seed: int = 0, train: int = 40_000, dev: int = 500, test: int = 1000) -> dict:
        """Training, development and test trees, as WSJ's sections 2-21, 22 and 23. The
        development and test sentences are distinct, and no training sentence is one of them."""
        held_out, seen = [], set()
        for tree in itertools.islice(self._stream(seed), 100 * (dev + test)):
            if len(held_out) == dev + test:
                break
            if tuple(tree.leaves()) not in seen:
                seen.add(tuple(tree.leaves()))
                held_out.append(tree)
        else:
            raise ValueError(f"could not draw {dev + test} distinct held-out sentences")
        return {"train": self.sample(train, seed=seed + 1, exclude=seen),
                "dev": held_out[:dev], "test": held_out[dev:]}

    def _expand(self, symbol: Nonterminal, rng, words: list) -> list:
        options, cumulative = self._choices[symbol]
        rhs = options[min(bisect.bisect_right(cumulative, rng.random()), len(options) - 1)]
        children = []
        for item in rhs:
            if isinstance(item, str):  # a word
                words[0] += 1
                if words[0] > self.max_words:
                    raise TooLong
                children.append(item)
            else:
                children += self._expand(item, rng, words)
        name = symbol.symbol()
        return children if name.startswith("_") else [Tree(plain_label(name), children)]

    @cached_property
    def parser(self) -> ViterbiParser:
        # No wall-clock limit (nltk's default gives up after 5 s): on a busy machine it would make
        # the answer depend on the load. Sentences of 40 words take well under a CPU second.
        return ViterbiParser(self.grammar, max_time=None)

    def most_probable_tree(self, words) -> Tree | None:
        """The grammar's own parse (Viterbi: the most probable derivation), with plain labels:
        what a parser that knew the true grammar would answer, a reference rather than a ceiling.
        The most probable derivation need not be the most probable tree (derivations through
        ``PP-N`` and ``PP-V`` can make the same tree), and it maximises probability, not F1: a
        decoder built for F1 could score higher. None if there is no parse."""
        found = next(iter(self.parser.parse(list(words))), None)
        if found is None:
            return None
        return _strip(found)


def _strip(tree: Tree) -> Tree:
    """A derivation of GRAMMAR -> the tree it makes: plain labels, ``_`` symbols spliced."""
    children = []
    for child in tree:
        if isinstance(child, Tree):
            stripped = _strip(child)
            children += list(stripped) if child.label().startswith("_") else [stripped]
        else:
            children.append(child)
    return Tree(plain_label(tree.label()), children)


def flat(tree: Tree) -> str:
    """One line of brackets, ``(S (NP (PRP she)) (VP (VBD slept)) (. .))``."""
    return tree.pformat(margin=sys.maxsize)


def checksum(trees) -> str:
    """SHA-256 of the trees, one bracket line each: equal checksums, equal treebanks."""
    return hashlib.sha256("\n".join(flat(t) for t in trees).encode("utf8")).hexdigest()
