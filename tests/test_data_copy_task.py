"""The copy / reverse task data: batch layout, padding, reproducibility, held-out sets that
training never sees, per-length quotas, exact-match accuracy, clear errors."""

import collections

import pytest
import torch

from aiayn.data.batch import Batch
from aiayn.config import TransformerConfig
from aiayn.data.copy_task import FIRST_SYMBOL, CopyTask, cross_attention, exact_match
from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID
from aiayn.pt.model import Transformer


def test_batch_layout_copy_and_reverse():
    seqs = [(4, 5, 6), (7,)]
    copy = CopyTask().batch(seqs)
    assert isinstance(copy, Batch)
    assert copy.src.tolist() == [[4, 5, 6], [7, PAD_ID, PAD_ID]]
    assert copy.tgt.tolist() == [[BOS_ID, 4, 5, 6, EOS_ID], [BOS_ID, 7, EOS_ID, PAD_ID, PAD_ID]]
    reverse = CopyTask(reverse=True).batch(seqs)
    assert reverse.tgt.tolist() == [[BOS_ID, 6, 5, 4, EOS_ID], [BOS_ID, 7, EOS_ID, PAD_ID, PAD_ID]]
    assert copy.src.dtype == copy.tgt.dtype == torch.int64
    assert copy.num_target_tokens == 4 + 2  # tokens + EOS; padding is not counted


def test_samples_respect_vocabulary_and_lengths_and_are_reproducible():
    task = CopyTask(vocab_size=9, min_len=2, max_len=6)
    seqs = task.sample(500, seed=3)
    assert seqs == task.sample(500, seed=3) and seqs != task.sample(500, seed=4)
    assert all(2 <= len(s) <= 6 for s in seqs)
    assert {len(s) for s in seqs} == set(range(2, 7))  # every length occurs
    assert {t for s in seqs for t in s} == set(range(FIRST_SYMBOL, 9))  # symbols only, all of them


def test_training_batches_never_contain_a_held_out_sequence():
    task = CopyTask(vocab_size=8, min_len=1, max_len=4)  # few sequences: collisions are likely
    test = task.held_out(40, seed=1, max_share=0.3)
    assert len(set(test)) == len(test) == 40
    data = task.batches(batch_size=32, num_batches=20, seed=0, exclude=test)
    seen = set()
    for epoch in range(2):
        data.set_epoch(epoch)
        for batch in data:
            for row in batch.src.tolist():
                seen.add(tuple(t for t in row if t != PAD_ID))
    assert not seen & set(test)
    assert len(seen) > 200  # and training still covers most of the 340 possible sequences


def test_held_out_takes_at_most_its_share_of_each_length():
    task = CopyTask(vocab_size=20, min_len=1, max_len=10)  # 16 symbols
    counts = collections.Counter(len(s) for s in task.held_out(500, seed=1))
    assert counts[1] <= 1 and counts[2] <= 25  # 10 % of 16 and of 256
    assert sum(counts.values()) == 500 and min(counts[n] for n in range(3, 11)) > 30


def test_epochs_differ_and_replay_identically():
    data = CopyTask().batches(batch_size=4, num_batches=3, seed=0)
    assert len(data) == 3 and len(list(data)) == 3
    data.set_epoch(0)
    first = [b.src.tolist() for b in data]
    data.set_epoch(1)
    second = [b.src.tolist() for b in data]
    data.set_epoch(0)
    assert [b.src.tolist() for b in data] == first != second


def test_exact_match_needs_every_token_and_the_length():
    targets = [[4, 5], [6], [7, 8, 9]]
    assert exact_match([[4, 5], [6], [7, 8, 9]], targets) == 1.0
    assert exact_match([[4, 5], [6, 6], [7, 8]], targets) == pytest.approx(1 / 3)


def test_cross_attention_is_one_distribution_per_output_position():
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, num_heads=2,
                                          num_layers=2, d_ff=32)).train()
    weights = cross_attention(model, CopyTask(), (5, 6, 7, 8))
    assert weights.shape == (5, 4)  # 4 tokens + </s> predicted, 4 source tokens
    assert torch.allclose(weights.sum(-1), torch.ones(5)) and (weights >= 0).all()
    assert model.training  # the mode is restored
    assert torch.equal(weights, cross_attention(model, CopyTask(), (5, 6, 7, 8)))  # no dropout


@pytest.mark.parametrize("make, words", [
    (lambda: CopyTask(vocab_size=4), ["vocab_size", "4"]),
    (lambda: CopyTask(min_len=0), ["min_len=0"]),
    (lambda: CopyTask(min_len=5, max_len=3), ["min_len=5", "max_len=3"]),
    (lambda: CopyTask(vocab_size=5, max_len=2).sample(10, seed=0, exclude=[(4,), (4, 4)]), ["excluded"]),
    (lambda: CopyTask(vocab_size=5, max_len=2).held_out(5, seed=0), ["held-out"]),
    (lambda: CopyTask().batch([]), ["sequences", "empty"]),
    (lambda: CopyTask().batches(batch_size=0, num_batches=1, seed=0), ["batch_size"]),
    (lambda: exact_match([[4]], [[4], [5]]), ["1", "2"]),
])
def test_bad_arguments_raise_clear_errors(make, words):
    with pytest.raises(ValueError) as err:
        make()
    for word in words:
        assert word in str(err.value)
