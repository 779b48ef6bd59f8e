"""Trees as bracket sequences (Vinyals et al., 2015; tags as in tensor2tensor) and back: the
documented example, exact round trips, and every repair rule for malformed decoder output."""

import random

import pytest
from nltk import Tree

from aiayn.data.linearize import TOP, is_bracket, linearize, retag, to_tree
from aiayn.data.treebank import Treebank, flat
from aiayn.inference.evalb import brackets

TREE = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))")
WORDS = ["the", "dog", "barked", "."]


def tags(tree):
    return [tag for _, tag in tree.pos()]


def test_the_documented_example():
    assert " ".join(linearize(TREE)) == "(S (NP DT NN )NP (VP VBD )VP . )S"
    assert " ".join(linearize(TREE, tags=False)) == "(S (NP XX XX )NP (VP XX )VP XX )S"
    reading = to_tree(linearize(TREE), WORDS)
    assert reading.tree == TREE and reading.repairs == ()
    vinyals = to_tree(linearize(TREE, tags=False), WORDS).tree
    assert flat(vinyals) == "(S (NP (XX the) (XX dog)) (VP (XX barked)) (XX .))"
    assert retag(vinyals, tags(TREE)) == TREE and flat(vinyals).startswith("(S (NP (XX")  # a copy
    assert [is_bracket(t) for t in ["(NP", ")NP", ".", "XX", "("]] == [True, True, False, False, False]


def test_round_trip_is_exact_on_generated_trees():
    for tree in Treebank().sample(2000, seed=7):
        tokens = linearize(tree)
        phrases = sum(1 for t in tree.subtrees() if t.height() > 2)
        assert len(tokens) == len(tree.leaves()) + 2 * phrases
        reading = to_tree(tokens, tree.leaves())
        assert reading.tree == tree and not reading.repairs


@pytest.mark.parametrize("sequence, expected, problem", [
    # a closing bracket closes the innermost open constituent, whatever its label
    ("(S (NP DT NN )VP (VP VBD )VP . )S", "(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))", "closes (NP"),
    # one that closes nothing is dropped
    ("(S (NP DT NN )NP (VP VBD )VP . )S )S", "(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))", "closes nothing"),
    # constituents still open at the end are closed
    ("(S (NP DT NN )NP (VP VBD .", "(S (NP (DT the) (NN dog)) (VP (VBD barked) (. .)))", "never closed"),
    # a tag beyond the words is dropped, and a constituent left without words with it
    ("(S (NP DT NN )NP (VP VBD )VP . (NP NN )NP )S", "(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))", "beyond"),
    # words without a tag are attached at the top, and TOP holds the pieces
    ("(S (NP DT NN )NP (VP VBD )VP )S", "(TOP (S (NP (DT the) (NN dog)) (VP (VBD barked))) (XX .))", "got no tag"),
    # two constituents at the top: TOP holds them
    ("(NP DT NN )NP (VP VBD . )VP", "(TOP (NP (DT the) (NN dog)) (VP (VBD barked) (. .)))", "pieces at the top"),
    # a special token is dropped
    ("(S <unk> (NP DT NN )NP (VP VBD )VP . )S", "(S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))", "special"),
    # an empty output: every word at the top
    ("", "(TOP (XX the) (XX dog) (XX barked) (XX .))", "got no tag"),
])
def test_repairs(sequence, expected, problem):
    tokens = sequence.split()
    with pytest.raises(ValueError, match="malformed"):
        to_tree(tokens, WORDS)
    reading = to_tree(tokens, WORDS, repair=True)
    assert flat(reading.tree) == expected
    assert any(problem in r for r in reading.repairs), reading.repairs


def test_repair_keeps_the_words_and_never_adds_a_scored_bracket():
    rng = random.Random(0)
    vocabulary = ["NN", "DT", "(S", ")S", "(NP", ")NP", "(VP", ")VP", "(PP", ")PP"]
    for tree in Treebank().sample(300, seed=8):
        tokens = linearize(tree)
        for _ in range(rng.randint(1, 4)):  # delete, insert or replace random tokens
            i = rng.randrange(len(tokens) + 1)
            if rng.random() < 0.5 and i < len(tokens):
                del tokens[i]
            else:
                tokens.insert(i, rng.choice(vocabulary))
        reading = to_tree(tokens, tree.leaves(), repair=True)
        assert reading.tree.leaves() == tree.leaves()
        scored = sum(brackets(retag(reading.tree, tags(tree)))[0].values())
        assert scored <= sum(t.startswith("(") for t in tokens)
        assert reading.tree.label() != TOP or reading.repairs


def test_bad_input():
    with pytest.raises(ValueError, match="part-of-speech tag"):
        linearize(Tree.fromstring("(S the (VP (VBD barked)))"))
    with pytest.raises(ValueError, match="3 tags for 4 words"):
        retag(TREE, ["DT", "NN", "VBD"])
