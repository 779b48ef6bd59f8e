"""Batches by token budget over length-sorted sentence pairs (§5.1).

"Sentence pairs were batched together by approximate sequence length. Each training batch
contained a set of sentence pairs containing approximately 25000 source tokens and 25000
target tokens." A batch of B pairs padded to length T costs B x T positions of compute
whatever the real lengths, so pairs of similar length go together and the number of pairs
per batch adapts: many short sentences, or few long ones, at roughly equal cost.
"""

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from .batch import Batch
from .specials import BOS_ID, EOS_ID, PAD_ID

Pair = tuple[list[int], list[int]]


def source_ids(ids: list[int]) -> list[int]:
    """A source sentence as the encoder reads it: subwords, then EOS."""
    return list(ids) + [EOS_ID]


def target_ids(ids: list[int]) -> list[int]:
    """A target sentence as stored in a Batch: BOS, subwords, EOS."""
    return [BOS_ID] + list(ids) + [EOS_ID]


def encode_pairs(tokenizer, sources: list[str], targets: list[str], max_len: int | None = None) -> list[Pair]:
    """Sentence pairs -> (source ids, target ids) with EOS / BOS..EOS added.

    ``max_len`` drops pairs whose source or target (with specials) is longer: only for
    training data, never for a test set (a dropped test sentence would flatter BLEU)."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    pairs = [(source_ids(s), target_ids(t))
             for s, t in zip(tokenizer.encode_batch(sources), tokenizer.encode_batch(targets))]
    if max_len is not None:
        pairs = [p for p in pairs if len(p[0]) <= max_len and len(p[1]) <= max_len]
    return pairs


def pad(rows: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> torch.Tensor:
    """Id lists of different lengths -> (B, max length) int64, right-padded with ``pad_id``."""
    if not rows:
        raise ValueError("pad needs at least one row")
    tensors = [row if isinstance(row, torch.Tensor) else torch.as_tensor(row, dtype=torch.long) for row in rows]
    return pad_sequence(tensors, batch_first=True, padding_value=pad_id)


class TokenBatches:
    """A re-iterable stream of Batches; each ``iter()`` is one epoch over all pairs.

    Per epoch: shuffle the pairs (tie-breaking among equal lengths), stable-sort them by
    length (the longer side first, then target, then source), cut the sorted list greedily into batches whose padded
    sizes B x max(len src) and B x max(len tgt) both stay <= ``max_tokens``, then shuffle the
    order of the batches, so consecutive steps see different lengths. With ``shuffle=False``
    the order is the sorted one; ``sort=False`` skips the sort (random batching: the baseline
    that shows what sorting saves). The randomness of epoch e comes from ``seed`` and e only:
    ``set_epoch(e)`` (the trainer calls it, as with ``DistributedSampler``) makes every epoch
    reproducible, which is what resuming a run exactly needs."""

    def __init__(self, pairs: Sequence[Pair], max_tokens: int, shuffle: bool = True, seed: int = 0,
                 sort: bool = True):
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        too_long = [i for i, (s, t) in enumerate(pairs) if max(len(s), len(t)) > max_tokens]
        if too_long:
            i = too_long[0]
            raise ValueError(f"pair {i} has {len(pairs[i][0])} source and {len(pairs[i][1])} target "
                             f"tokens, more than max_tokens={max_tokens} (filter with encode_pairs(max_len=...))")
        if not pairs:
            raise ValueError("no sentence pairs to batch")
        self.pairs, self.max_tokens, self.shuffle, self.seed = list(pairs), max_tokens, shuffle, seed
        self.sort = sort
        # Tensors made once: an epoch then pads with one C++ call per batch, not one per row.
        self._tensors = [(torch.as_tensor(s, dtype=torch.long), torch.as_tensor(t, dtype=torch.long))
                         for s, t in self.pairs]
        self._src_len = np.array([len(s) for s, _ in self.pairs])
        self._tgt_len = np.array([len(t) for _, t in self.pairs])
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batch_indices(self) -> list[list[int]]:
        """The pair indices of each batch of the current epoch, in order."""
        rng = np.random.default_rng([self.seed, self.epoch])
        order = rng.permutation(len(self.pairs)) if self.shuffle else np.arange(len(self.pairs))
        # The budget binds on the longer side, so that is the length to sort by: at 25k tokens
        # it halves the padding of a sort by target length alone (21% -> 11% on Multi30k).
        # lexsort is stable and sorts by its last key first: longer side, target, source.
        if self.sort:
            order = order[np.lexsort((self._src_len[order], self._tgt_len[order],
                                      np.maximum(self._src_len, self._tgt_len)[order]))]
        batches, current, src_len, tgt_len = [], [], 0, 0
        for i in order.tolist():
            s, t = max(src_len, self._src_len[i]), max(tgt_len, self._tgt_len[i])
            if current and (len(current) + 1) * max(s, t) > self.max_tokens:
                batches.append(current)
                current, s, t = [], self._src_len[i], self._tgt_len[i]
            current.append(i)
            src_len, tgt_len = s, t
        batches.append(current)
        if self.shuffle:
            batches = [batches[k] for k in rng.permutation(len(batches))]
        return batches

    def __iter__(self) -> Iterator[Batch]:
        for indices in self.batch_indices():
            yield Batch(pad([self._tensors[i][0] for i in indices]), pad([self._tensors[i][1] for i in indices]))

    def __len__(self) -> int:
        return len(self.batch_indices())


def token_batches(pairs: Sequence[Pair], max_tokens: int, shuffle: bool = True, seed: int = 0,
                  sort: bool = True) -> TokenBatches:
    """Batches of at most ``max_tokens`` padded source and target positions each; see ``TokenBatches``."""
    return TokenBatches(pairs, max_tokens, shuffle, seed, sort)
