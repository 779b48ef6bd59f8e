"""The EVALB scorer (aiayn.inference.evalb) against cases worked out by hand, one rule of
COLLINS.prm at a time (the examples of rules 3 and 5 are those of EVALB's README)."""

import pytest
from nltk import Tree

import numpy as np

from aiayn.inference.evalb import Score, brackets, corpus_score, f1_interval, length, paired_randomisation, score

T = Tree.fromstring
GOLD = T("(S (NP (PRP she)) (VP (VBD saw) (NP (DT the) (NN man)) "
         "(PP (IN with) (NP (DT a) (NN telescope)))) (. .))")


def test_identical_trees_score_100_and_count_every_constituent_but_tags():
    s = score(GOLD, GOLD)
    # S, NP she, VP, NP the man, PP, NP a telescope: 6 brackets; the 8 tags are not brackets.
    assert (s.matched, s.gold, s.test, s.complete) == (6, 6, 6, 1)
    assert s.precision == s.recall == s.f1 == 100.0


def test_pp_attached_to_the_noun_instead_of_the_verb():
    test = T("(S (NP (PRP she)) (VP (VBD saw) (NP (NP (DT the) (NN man)) "
             "(PP (IN with) (NP (DT a) (NN telescope))))) (. .))")
    found, words = brackets(test)
    assert words == "she saw the man with a telescope".split()  # "." deleted
    # The extra NP over "the man with a telescope" (positions 2-7) is the only wrong bracket;
    # the inner NP "the man" has the span and label of the gold object.
    assert found[("NP", 2, 7)] == 1 and found[("NP", 2, 4)] == 1
    s = score(GOLD, test)
    assert (s.matched, s.gold, s.test, s.complete) == (6, 6, 7, 0)
    assert s.precision == pytest.approx(600 / 7) and s.recall == 100.0
    assert s.f1 == pytest.approx(100 * 2 * 6 / (6 + 7))  # 2PR/(P+R) = 2·matched/(gold+test)


def test_punctuation_is_deleted_before_positions_are_counted():
    gold = T("(S (NP (PRP he)) (VP (VBD left)) (. .))")
    inside = T("(S (NP (PRP he)) (VP (VBD left) (. .)))")  # the "." under VP instead of S
    assert brackets(gold)[0] == brackets(inside)[0] == {("S", 0, 2): 1, ("NP", 0, 1): 1, ("VP", 1, 2): 1}
    assert score(gold, inside).f1 == 100.0
    # A constituent holding nothing but punctuation disappears with it.
    only_comma = T("(S (NP (PRP he)) (X (, ,)) (VP (VBD left)))")
    assert ("X", 1, 1) not in brackets(only_comma)[0] and len(brackets(only_comma)[0]) == 3


def test_traces_top_and_function_tags_are_not_scored():
    # README, rule 3: (VP (VBD reported) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) -> (VP (VBD reported)).
    gold = T("(TOP (S (NP-SBJ (NNS officials)) (VP (VBD reported) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) (. .)))")
    test = T("(S (NP (NNS officials)) (VP (VBD reported)) (. .))")
    assert brackets(gold)[0] == brackets(test)[0] == {("S", 0, 2): 1, ("NP", 0, 1): 1, ("VP", 1, 2): 1}
    assert length(gold) == 3  # punctuation counts for length, traces do not


def test_equal_labels_prt_and_advp():
    gold = T("(S (NP (PRP he)) (VP (VBD gave) (PRT (RP up))))")
    test = T("(S (NP (PRP he)) (VP (VBD gave) (ADVP (RP up))))")
    assert score(gold, test).f1 == 100.0


def test_repeated_brackets_match_as_a_multiset():
    # README, rule 5: m test brackets against n gold ones with the same span and label.
    gold = T("(S (NP (DT the) (NN man)) (VP (VBD left)))")
    doubled = T("(S (NP (NP (DT the) (NN man))) (VP (VBD left)))")
    s = score(gold, doubled)  # m = 2 > n = 1: precision n/m on that span, recall 100 %
    assert (s.matched, s.gold, s.test) == (3, 3, 4)
    s = score(doubled, gold)  # n = 2 > m = 1
    assert (s.matched, s.gold, s.test) == (3, 4, 3) and s.precision == 100.0 and s.recall == 75.0


def test_wrong_label_counts_only_when_unlabelled():
    gold = T("(S (NP (PRP he)) (VP (VBD left)))")
    test = T("(S (NP (PRP he)) (ADJP (VBD left)))")
    assert score(gold, test).matched == 2
    assert score(gold, test, labelled=False).matched == 3


def test_corpus_scores_sum_brackets_before_dividing():
    golds = [GOLD, T("(S (NP (PRP he)) (VP (VBD left)) (. .))")]
    tests = [GOLD, T("(S (NP (PRP he)) (ADJP (VBD left)) (. .))")]
    total = corpus_score(golds, tests)
    # matched 6 + 2, gold 6 + 3, test 6 + 3: 8/9 = 88.9 %, not the mean of 100 % and 66.7 %.
    assert total == Score(matched=8, gold=9, test=9, sentences=2, complete=1)
    assert total.f1 == pytest.approx(800 / 9)
    assert total == score(golds[0], tests[0]) + score(golds[1], tests[1])
    assert Score().f1 == 0.0  # nothing to score: 0, not a division by zero


def test_a_sentence_with_other_words_is_an_error_not_a_skip():
    with pytest.raises(ValueError, match="differ"):
        score(T("(S (NP (PRP he)) (VP (VBD left)))"), T("(S (NP (PRP he)) (VP (VBD came)))"))
    # EVALB deletes punctuation by each tree's own tags: a "." tagged XX is a word, and the
    # lengths differ (EVALB: "Length unmatch").
    with pytest.raises(ValueError, match="differ"):
        score(T("(S (NP (PRP he)) (VP (VBD left)) (. .))"), T("(S (NP (XX he)) (VP (XX left)) (XX .))"))
    with pytest.raises(ValueError, match="as many"):
        corpus_score([GOLD], [])
    with pytest.raises(ValueError, match="no part-of-speech tag"):
        brackets(T("(S he (VP (VBD left)))"))


def _parsers(rng, sentences: int, better: float = 0.0):
    """Per-sentence (matched, gold, test) of two parsers on the same sentences; each bracket of
    a is right with probability 0.85, of b with 0.85 + better (both write as many as the gold)."""
    gold = rng.integers(2, 15, size=sentences)
    a = np.stack([rng.binomial(gold, 0.85), gold, gold], axis=1)
    b = np.stack([rng.binomial(gold, 0.85 + better), gold, gold], axis=1)
    return a, b


def test_paired_randomisation_by_hand_and_its_arguments():
    a = [Score(6, 6, 7, 1, 0), Score(3, 3, 3, 1, 1)]
    b = [(6, 6, 6), (2, 3, 3)]
    difference, p = paired_randomisation(a, b, rounds=2000)
    assert difference == pytest.approx(200 * 9 / 19 - 200 * 8 / 18)  # corpus F1 = 2m/(g+t)
    # Two sentences, 4 equally likely swaps: none (+5.8), both (-5.8), one or the other (±15.8):
    # every one is at least as far from 0 as the observed difference, so p = 1.
    assert p == 1.0
    one_sided = [Score(3, 3, 3, 1, 1)] * 12
    assert paired_randomisation(one_sided, [(2, 3, 3)] * 12, rounds=2000)[1] < 0.01  # a wins everywhere
    with pytest.raises(ValueError, match="one score per sentence"):
        paired_randomisation(a, b[:1])
    with pytest.raises(ValueError, match="gold bracket counts differ"):
        paired_randomisation(a, [(6, 7, 6), (2, 3, 3)])
    with pytest.raises(ValueError, match="rounds"):
        paired_randomisation(a, b, rounds=0)


def test_paired_randomisation_false_positives_at_most_5_percent_and_it_finds_a_real_difference():
    # Under the null (two parsers equally good) the test rejects at 5 % about 5 % of the time:
    # 400 simulated comparisons of 100 sentences, a 95 % band of about 3-7 % around a true 5 %.
    rng = np.random.default_rng(0)
    null = [paired_randomisation(*_parsers(rng, 100), rounds=499, seed=i)[1] for i in range(400)]
    assert np.mean(np.array(null) < 0.05) <= 0.07
    found = [paired_randomisation(*_parsers(rng, 100, better=0.1), rounds=499, seed=i)[1] for i in range(50)]
    assert np.mean(np.array(found) < 0.05) > 0.8  # 0.85 against 0.95 per bracket: found nearly always


def test_f1_interval_covers_the_true_f1_about_as_often_as_it_says():
    # Sentences of a parser whose brackets are each right with probability 0.9: the corpus F1 of
    # a very large draw is 90. The 90 % interval of a 150-sentence draw covers it in about 90 %
    # of 200 draws (a band of about 86-94 % for a true 90 %).
    rng = np.random.default_rng(1)
    covered = []
    for i in range(200):
        a, _ = _parsers(rng, 150, better=0.05)
        a[:, 0] = rng.binomial(a[:, 1], 0.9)
        low, high = f1_interval(a, confidence=0.9, rounds=400, seed=i)
        covered.append(low <= 90.0 <= high)
    assert 0.84 <= np.mean(covered) <= 0.96
    assert f1_interval([Score(3, 3, 3, 1, 1)] * 5) == (100.0, 100.0)
    with pytest.raises(ValueError, match="confidence"):
        f1_interval([(1, 1, 1)], confidence=1.5)
