"""aiayn.lab.word_alignment: IBM Model 1 learns a dictionary from co-occurrence alone, in any word
order, and the reference links are the positions of the translating words, never a guess."""

import numpy as np
import pytest

from aiayn.lab.word_alignment import NULL, reference_links, train_model1, viterbi

# Source words 10..17 translate to target words 20..27 (one to one); 30 is a target word with
# no source (it goes to NULL); each pair is a random subset in a random order on each side.
DICTIONARY = {f: f + 10 for f in range(10, 18)}


def corpus(n=400, seed=0):
    rng = np.random.default_rng(seed)
    sources, targets = [], []
    for _ in range(n):
        words = rng.choice(list(DICTIONARY), size=int(rng.integers(2, 6)), replace=False)
        src = list(words)
        tgt = [DICTIONARY[int(w)] for w in rng.permutation(words)] + ([30] if rng.random() < 0.3 else [])
        sources.append(src)
        targets.append(list(rng.permutation(tgt)))
    return sources, targets


def test_model1_learns_the_dictionary_whatever_the_word_order():
    sources, targets = corpus()
    model = train_model1(sources, targets, iterations=10)
    for f, e in DICTIONARY.items():
        others = [model.prob(np.array([f]), np.array([x]))[0] for x in DICTIONARY.values() if x != e]
        assert model.prob(np.array([f]), np.array([e]))[0] > 0.9 > max(others)
    # probabilities over targets sum to one for every source word (NULL included)
    for f in [*DICTIONARY, model.size - 1]:
        seen = model.pair_keys[model.pair_keys // model.size == f] % model.size
        assert model.prob(np.full(len(seen), f), seen).sum() == pytest.approx(1.0)
    assert model.prob(np.array([10]), np.array([999]))[0] == 0.0  # never seen together


def test_reference_links_point_at_the_translating_word_and_skip_what_is_ambiguous():
    sources, targets = corpus()
    forward, backward = train_model1(sources, targets), train_model1(targets, sources)
    src, tgt = [12, 15, 11], [30, 21, 25, 22]
    links = reference_links([src], [tgt], forward, backward)[0]
    assert links.tolist() == [NULL, 2, 1, 0]  # 30 has no source word; 21 <- 11, 25 <- 15, 22 <- 12
    assert viterbi(forward, src, tgt)[1:].tolist() == [2, 1, 0]
    # 12 twice in the source: Model 1 cannot tell the copies apart, so no reference link to it
    twice = reference_links([[12, 15, 12]], [[22, 25]], forward, backward)[0]
    assert twice.tolist() == [NULL, 1]


def test_model1_agrees_with_a_loop_written_out():
    sources, targets = [[1, 2], [1, 3], [2]], [[4, 5], [4], [5, 5]]
    model = train_model1(sources, targets, iterations=3)
    vocab_f, vocab_e, null = [1, 2, 3], [4, 5], -1
    t = {(f, e): 1.0 for f in vocab_f + [null] for e in vocab_e}
    for _ in range(3):
        count, total = {}, {}
        for src, tgt in zip(sources, targets):
            s = src + [null]
            for e in tgt:
                z = sum(t[f, e] for f in s)
                for f in s:
                    count[f, e] = count.get((f, e), 0.0) + t[f, e] / z
                    total[f] = total.get(f, 0.0) + t[f, e] / z
        t = {(f, e): count.get((f, e), 0.0) / total[f] if (f, e) in count else t[f, e] for f, e in t}
    for (f, e), value in t.items():
        if (f, e) in {(1, 4), (1, 5), (2, 4), (2, 5), (3, 4), (null, 4), (null, 5)}:
            g = model.size - 1 if f == null else f
            assert model.prob(np.array([g]), np.array([e]))[0] == pytest.approx(value)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="differ in length"):
        train_model1([[1]], [[1], [2]])
    with pytest.raises(ValueError, match="empty"):
        train_model1([], [])
    with pytest.raises(ValueError, match="non-negative"):
        train_model1([[-3]], [[1]])
    with pytest.raises(ValueError, match="iterations"):
        train_model1([[1]], [[1]], iterations=0)
