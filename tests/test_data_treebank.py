"""The generated treebank: a proper PCFG, reproducible from its seed, recursive and ambiguous
where English is (so parsing needs more than a template), with disjoint splits."""

import collections

import pytest
from nltk import Nonterminal, Tree

from aiayn.data.treebank import Treebank, checksum, flat, plain_label


@pytest.fixture(scope="module")
def bank():
    return Treebank()


@pytest.fixture(scope="module")
def trees(bank):
    return bank.sample(3000, seed=0)


def test_every_symbol_has_rules_and_probabilities_sum_to_one(bank):
    lhs = {p.lhs() for p in bank.grammar.productions()}
    used = {s for p in bank.grammar.productions() for s in p.rhs() if isinstance(s, Nonterminal)}
    assert used <= lhs, f"symbols without rules: {used - lhs}"
    for symbol in lhs:
        assert sum(p.prob() for p in bank.grammar.productions(lhs=symbol)) == pytest.approx(1.0)
    assert bank.labels() == ["ADJP", "ADVP", "NP", "PP", "S", "SBAR", "VP", "WHNP"]
    assert {"that", "her", "with", "."} <= set(bank.words())


def test_labels_drop_the_hidden_distinctions():
    assert plain_label("NP-SBJ") == "NP" and plain_label("VBD-T") == "VBD" and plain_label("S") == "S"
    assert plain_label("PERIOD") == "." and plain_label("PRPS") == "PRP$"


def test_same_seed_same_trees(bank, trees):
    assert checksum(Treebank().sample(500, seed=0)) == checksum(trees[:500])  # a new object too
    assert checksum(bank.sample(500, seed=1)) != checksum(trees[:500])
    assert len(checksum(trees)) == 64


def test_lengths_vary_and_respect_the_limit(trees):
    lengths = collections.Counter(len(t.leaves()) for t in trees)
    assert min(lengths) == 3 and max(lengths) <= 40 and max(lengths) >= 30
    assert 8 <= sum(n * c for n, c in lengths.items()) / len(trees) <= 15
    short = Treebank(max_words=6).sample(200, seed=0)
    assert max(len(t.leaves()) for t in short) <= 6
    assert all(t.label() == "S" and t.leaves()[-1] == "." for t in trees)


def test_recursion_where_english_has_it(trees):
    def children(t):
        return [c.label() for c in t if isinstance(c, Tree)]

    found = collections.Counter()
    for tree in trees:
        kinds = set()
        for t in tree.subtrees():
            if t.label() == "PP" and any(s.label() == "PP" for s in list(t.subtrees())[1:]):
                kinds.add("a PP inside a PP")
            if t.label() == "SBAR":
                kinds.add("relative clause" if children(t)[0] == "WHNP" else "clausal complement")
            if children(t) in (["NP", "CC", "NP"], ["VP", "CC", "VP"], ["S", ",", "CC", "S", "."]):
                kinds.add(f"{t.label()} coordination")
        found.update(kinds | ({"ten or more levels deep"} if tree.height() >= 10 else set()))
    assert len(found) == 7 and min(found.values()) >= 30, found


def test_the_words_do_not_determine_the_tree(trees):
    # Same sequence of parts of speech, different constituents: e.g. a PP attached to the noun
    # or to the verb, "that" as a complementizer or a relative pronoun. A parser must choose.
    by_tags = collections.defaultdict(set)
    for tree in trees:
        by_tags[tuple(tag for _, tag in tree.pos())].add(flat(Tree.fromstring(flat(tree))))
    ambiguous = [k for k, v in by_tags.items() if len(v) > 1]
    assert len(ambiguous) >= 20
    tag_of = collections.defaultdict(set)
    for tree in trees:
        for word, tag in tree.pos():
            tag_of[word].add(tag)
    assert tag_of["that"] == {"DT", "IN", "WDT"} and tag_of["her"] == {"PRP", "PRP$"}


def test_the_grammar_parses_its_own_sentences(bank, trees):
    for tree in [t for t in trees if len(t.leaves()) <= 12][:10]:
        parsed = bank.most_probable_tree(tree.leaves())
        assert parsed is not None and parsed.leaves() == tree.leaves()
    simple = Tree.fromstring("(S (NP (PRP she)) (VP (VBD slept)) (. .))")
    assert bank.most_probable_tree(simple.leaves()) == simple
    assert bank.most_probable_tree("slept she .".split()) is None


def test_splits_are_disjoint(bank):
    data = bank.split(seed=3, train=2000, dev=100, test=200)
    sentences = {k: [tuple(t.leaves()) for t in v] for k, v in data.items()}
    assert [len(v) for v in sentences.values()] == [2000, 100, 200]
    held_out = sentences["dev"] + sentences["test"]
    assert len(set(held_out)) == 300
    assert not set(held_out) & set(sentences["train"])
    again = bank.split(seed=3, train=2000, dev=100, test=200)
    assert all(checksum(data[k]) == checksum(again[k]) for k in data)


def test_bad_arguments():
    with pytest.raises(ValueError, match="max_words must be an int >= 3, got 2"):
        Treebank(max_words=2)
    with pytest.raises(ValueError, match="num must be an int >= 0, got -1"):
        Treebank().sample(-1, seed=0)
