"""Which source word each target word translates, learned from co-occurrence alone: IBM Model 1
(Brown et al., 1993), the reference the training chapter holds a trained model's cross-attention
against. It never sees a position, so agreeing with it is evidence that attention follows the
words, which a guess from positions (the diagonal) cannot be.

    table = train_model1(sources, targets)            # t(target token | source token), by EM
    links = reference_links(sources, targets, forward=..., backward=...)

``train_model1`` learns t(e | f) over id lists (a NULL source word included) with expectation
maximisation, vectorised over every (target position, source position) pair of the corpus.
``reference_links`` keeps, for each target position, the source position both directions agree on
(the intersection of the two Viterbi alignments, the usual high-precision set), and only where
that source token occurs once in its sentence: Model 1 cannot tell two copies of a word apart.
"""

from dataclasses import dataclass

import numpy as np

NULL = -1  # the source "word" a target word may align to when it translates none


@dataclass
class Model1:
    """t(e | f) for the (f, e) pairs seen together: ``pair_keys`` sorted f * size + e, ``t``
    aligned with it; f = size - 1 stands for NULL."""

    pair_keys: np.ndarray
    t: np.ndarray
    size: int

    def prob(self, f: np.ndarray, e: np.ndarray) -> np.ndarray:
        """t(e | f) elementwise; 0 for pairs never seen together in training."""
        keys = np.asarray(f, dtype=np.int64) * self.size + np.asarray(e, dtype=np.int64)
        at = np.clip(np.searchsorted(self.pair_keys, keys), 0, len(self.pair_keys) - 1)
        return np.where(self.pair_keys[at] == keys, self.t[at], 0.0)


def _check(sources, targets) -> int:
    if len(sources) != len(targets):
        raise ValueError(f"sources and targets differ in length: {len(sources)} and {len(targets)}")
    if not sources:
        raise ValueError("sources is empty: Model 1 needs at least one sentence pair")
    ids = [i for sentence in (*sources, *targets) for i in sentence]
    if any(int(i) < 0 for i in ids):
        raise ValueError("sources and targets must hold non-negative token ids")
    return max(ids, default=0) + 2  # room for NULL as the last id


def _links(sources, targets, size):
    """Flat arrays over every (pair, target position, source position or NULL)."""
    f, e, row = [], [], []
    rows = 0
    null = size - 1
    for src, tgt in zip(sources, targets):
        s = np.append(np.asarray(src, dtype=np.int64), null)
        t = np.asarray(tgt, dtype=np.int64)
        f.append(np.tile(s, len(t)))
        e.append(np.repeat(t, len(s)))
        row.append(np.repeat(np.arange(rows, rows + len(t)), len(s)))
        rows += len(t)
    return np.concatenate(f), np.concatenate(e), np.concatenate(row), rows


def train_model1(sources: list, targets: list, iterations: int = 5) -> Model1:
    """EM for t(e | f), e a target id, f a source id or NULL, starting from uniform. Each
    iteration: every target word spreads one count over its sentence's source words (NULL
    included) in proportion to t(e | f); then t(e | f) = count(f, e) / count(f)."""
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    size = _check(sources, targets)
    f, e, row, rows = _links(sources, targets, size)
    keys, pair = np.unique(f * size + e, return_inverse=True)
    source_of_pair = keys // size
    t = np.ones(len(keys))
    for _ in range(iterations):
        p = t[pair]
        share = p / np.bincount(row, weights=p, minlength=rows)[row]
        counts = np.bincount(pair, weights=share, minlength=len(keys))
        t = counts / np.bincount(source_of_pair, weights=counts)[source_of_pair]
    return Model1(keys, t, size)


def viterbi(model: Model1, src, tgt) -> np.ndarray:
    """For each target position, the source position with the largest t(e | f) (NULL -> -1;
    ties go to the first, NULL last)."""
    s, t = np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64)
    if len(t) == 0:
        return np.zeros(0, dtype=np.int64)
    scores = model.prob(np.append(s, model.size - 1)[None, :], t[:, None])  # (T, S + 1)
    best = scores.argmax(1)
    return np.where(best == len(s), NULL, best)


def reference_links(sources: list, targets: list, forward: Model1, backward: Model1) -> list:
    """Per pair, an array over target positions: the source position both directions link
    (``forward`` learns t(target | source), ``backward`` t(source | target)), or -1 where they
    disagree, where either says NULL, or where that source token occurs more than once."""
    out = []
    for src, tgt in zip(sources, targets):
        to_source = viterbi(forward, src, tgt)
        to_target = viterbi(backward, tgt, src)
        s = np.asarray(src)
        links = np.full(len(tgt), NULL, dtype=np.int64)
        for j, i in enumerate(to_source):
            if i != NULL and to_target[i] == j and np.count_nonzero(s == s[i]) == 1:
                links[j] = i
        out.append(links)
    return out


__all__ = ["Model1", "NULL", "reference_links", "train_model1", "viterbi"]
