"""aiayn.data.batching: batches by token budget over length-sorted pairs (§5.1)."""

import random
from collections import Counter

import pytest
import torch

from aiayn.data.batch import Batch
from aiayn.data.batching import TokenBatches, encode_pairs, pad, source_ids, target_ids, token_batches
from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID


def make_pairs(n=600, seed=0):
    """Pairs of random lengths 2..40 (source) and correlated target lengths; the first
    token of each side is a unique id, so every row of a batch identifies its pair."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        s = rng.randint(2, 40)
        t = max(2, s + rng.randint(-5, 5))
        pairs.append(([1000 + i] + [5] * (s - 1), [1000 + i] + [6] * (t - 1)))
    return pairs


def rows(batch: Batch):
    """The pairs of a batch, padding removed."""
    strip = lambda row: tuple(x for x in row.tolist() if x != PAD_ID)  # noqa: E731
    return [(strip(s), strip(t)) for s, t in zip(batch.src, batch.tgt)]


def padding_fraction(batches):
    padded = sum(b.src.numel() + b.tgt.numel() for b in batches)
    real = sum(int((b.src != PAD_ID).sum() + (b.tgt != PAD_ID).sum()) for b in batches)
    return 1 - real / padded


@pytest.mark.parametrize("max_tokens", [45, 200, 1000])
def test_every_batch_stays_within_the_token_budget(max_tokens):
    batches = list(token_batches(make_pairs(), max_tokens, seed=1))
    for b in batches:
        assert b.src.shape[0] * b.src.shape[1] <= max_tokens
        assert b.tgt.shape[0] * b.tgt.shape[1] <= max_tokens
    assert b.src.dtype == b.tgt.dtype == torch.int64
    # ... and uses it: batches are filled, not one pair each.
    assert sum(max(b.src.numel(), b.tgt.numel()) for b in batches) / len(batches) > 0.7 * max_tokens


@pytest.mark.parametrize("shuffle", [True, False])
def test_every_pair_appears_exactly_once_per_epoch(shuffle):
    pairs = make_pairs()
    stream = token_batches(pairs, 300, shuffle=shuffle, seed=3)
    expected = Counter((tuple(s), tuple(t)) for s, t in pairs)
    for epoch in range(3):
        stream.set_epoch(epoch)
        seen = Counter(pair for b in stream for pair in rows(b))
        assert seen == expected


def test_deterministic_given_seed_and_epoch():
    pairs = make_pairs()
    first, second = token_batches(pairs, 300, seed=7), token_batches(pairs, 300, seed=7)
    a, b = list(first), list(second)
    assert len(a) == len(b) and all(torch.equal(x.src, y.src) and torch.equal(x.tgt, y.tgt) for x, y in zip(a, b))
    assert list(map(rows, first)) == list(map(rows, a))  # iterating again repeats the epoch
    first.set_epoch(1)
    assert list(map(rows, first)) != list(map(rows, a))  # a new epoch, a new order
    other_seed = token_batches(pairs, 300, seed=8)
    assert list(map(rows, other_seed)) != list(map(rows, a))


def test_without_shuffle_batches_come_shortest_first():
    # Sorted by the longer side of each pair, the side the budget binds on.
    lengths = [max(b.src.shape[1], b.tgt.shape[1]) for b in token_batches(make_pairs(), 300, shuffle=False)]
    assert lengths == sorted(lengths)


def test_length_sorting_wastes_far_less_than_random_batching():
    pairs = make_pairs(2000)
    sorted_fraction = padding_fraction(token_batches(pairs, 1000, seed=0))
    # Random batching, written out independently: the same greedy packing, random order.
    order = list(range(len(pairs)))
    random.Random(0).shuffle(order)
    random_batches, current = [], []
    for i in order:
        candidate = current + [pairs[i]]
        longest = max(max(len(s), len(t)) for s, t in candidate)
        if current and len(candidate) * longest > 1000:
            random_batches.append(Batch(pad([s for s, _ in current]), pad([t for _, t in current])))
            candidate = [pairs[i]]
        current = candidate
    random_batches.append(Batch(pad([s for s, _ in current]), pad([t for _, t in current])))
    random_fraction = padding_fraction(random_batches)
    assert random_fraction > 0.4 and sorted_fraction < random_fraction / 4, (sorted_fraction, random_fraction)
    # sort=False is that baseline.
    unsorted_fraction = padding_fraction(token_batches(pairs, 1000, seed=0, sort=False))
    assert unsorted_fraction == pytest.approx(random_fraction, abs=0.03)


def test_len_counts_the_batches_of_an_epoch():
    stream = token_batches(make_pairs(), 300, seed=2)
    assert len(stream) == len(list(stream)) == len(stream.batch_indices())


def test_errors():
    with pytest.raises(ValueError, match="pair 1 has 50 source and 2 target tokens"):
        TokenBatches([([1] * 3, [1] * 3), ([1] * 50, [1] * 2)], max_tokens=40)
    with pytest.raises(ValueError, match="no sentence pairs"):
        TokenBatches([], max_tokens=40)
    with pytest.raises(ValueError, match="max_tokens must be positive"):
        TokenBatches(make_pairs(3), max_tokens=0)


def test_pad_right_pads_with_pad_id():
    out = pad([[5, 6, 7], [8]])
    assert out.tolist() == [[5, 6, 7], [8, PAD_ID, PAD_ID]] and out.dtype == torch.int64


class _SplitTokenizer:
    """Stands in for SubwordTokenizer: one id per character."""

    def encode_batch(self, texts):
        return [[10 + ord(c) - ord("a") for c in text] for text in texts]


def test_encode_pairs_adds_eos_to_sources_and_bos_eos_to_targets():
    pairs = encode_pairs(_SplitTokenizer(), ["ab", "abcdef"], ["c", "abcdefgh"])
    assert pairs[0] == ([10, 11, EOS_ID], [BOS_ID, 12, EOS_ID])
    assert source_ids([7]) == [7, EOS_ID] and target_ids([7]) == [BOS_ID, 7, EOS_ID]
    assert encode_pairs(_SplitTokenizer(), ["ab", "abcdef"], ["c", "abcdefgh"], max_len=7) == pairs[:1]
    with pytest.raises(ValueError, match="2 sources but 1 targets"):
        encode_pairs(_SplitTokenizer(), ["a", "b"], ["c"])
