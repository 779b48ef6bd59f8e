"""The copy task and the reverse task: synthetic data that checks the whole model in seconds.

A source is a random sequence of symbols; the target is the same sequence (copy) or the same
sequence backwards (reverse). Nothing is to be learnt about language: a model that gets these
exactly right has working attention, masks, positions, loss and decoding. Ids 0-3 are the
special tokens of ``specials.py``; symbols are ids 4 .. vocab_size - 1.

    task = CopyTask(vocab_size=20, min_len=1, max_len=10, reverse=False)
    test = task.held_out(200, seed=1)                            # never trained on
    train = task.batches(batch_size=64, num_batches=100, seed=0, exclude=test)
"""

from dataclasses import dataclass

import numpy as np
import torch

from ..inference.beam_search import strip_specials
from ..pt.decoding import greedy_decode
from .batch import Batch
from .specials import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS

FIRST_SYMBOL = len(SPECIAL_TOKENS)


@dataclass(frozen=True)
class CopyTask:
    """Random sequences over the ``vocab_size - 4`` symbols, lengths ``min_len`` to ``max_len``;
    the target is the sequence itself, or reversed when ``reverse``."""

    vocab_size: int = 20
    min_len: int = 1
    max_len: int = 10
    reverse: bool = False

    def __post_init__(self):
        if not isinstance(self.vocab_size, int) or self.vocab_size <= FIRST_SYMBOL:
            raise ValueError(f"vocab_size must be an int > {FIRST_SYMBOL} (ids 0-{FIRST_SYMBOL - 1} "
                             f"are the special tokens), got {self.vocab_size!r}")
        if not (isinstance(self.min_len, int) and isinstance(self.max_len, int)
                and 1 <= self.min_len <= self.max_len):
            raise ValueError(f"need ints 1 <= min_len <= max_len, got min_len={self.min_len!r}, "
                             f"max_len={self.max_len!r}")

    def target(self, sequence) -> list[int]:
        return list(sequence[::-1] if self.reverse else sequence)

    def sample(self, num: int, seed: int, exclude=()) -> list[tuple[int, ...]]:
        """``num`` random sequences, lengths uniform in [min_len, max_len], none of them in
        ``exclude`` (rejection sampling keeps a held-out set unseen). Same seed, same list."""
        rng, excluded, out = np.random.default_rng(seed), set(map(tuple, exclude)), []
        for _ in range(100 * num + 1000):
            if len(out) == num:
                return out
            seq = self._draw(rng)
            if seq not in excluded:
                out.append(seq)
        raise ValueError(f"could not draw {num} sequences outside the {len(excluded)} excluded ones: "
                         "the task has too few distinct sequences (raise vocab_size or max_len)")

    def held_out(self, num: int, seed: int, max_share: float = 0.1) -> list[tuple[int, ...]]:
        """``num`` distinct sequences for testing, taking at most ``max_share`` of the possible
        sequences of any one length: there are only 16 sequences of length 1 over 16 symbols, and
        holding them all out would leave training without a single sequence of that length."""
        rng, out, per_length = np.random.default_rng(seed), {}, {}
        symbols = self.vocab_size - FIRST_SYMBOL
        for _ in range(100 * num + 1000):
            if len(out) == num:
                return list(out)
            seq = self._draw(rng)
            quota = int(max_share * symbols ** len(seq))
            if seq not in out and per_length.get(len(seq), 0) < quota:
                out[seq] = None  # a dict keeps the order of drawing
                per_length[len(seq)] = per_length.get(len(seq), 0) + 1
        raise ValueError(f"could not draw {num} distinct held-out sequences within a share of "
                         f"{max_share} of each length (raise vocab_size or max_len)")

    def _draw(self, rng) -> tuple[int, ...]:
        length = int(rng.integers(self.min_len, self.max_len + 1))
        return tuple(int(t) for t in rng.integers(FIRST_SYMBOL, self.vocab_size, size=length))

    def batch(self, sequences) -> Batch:
        """Pads to the longest: src ``(B, S)`` = the sequence; tgt ``(B, T)`` = ``<s> target </s>``."""
        if not sequences:
            raise ValueError("sequences is empty: a batch needs at least one sequence")
        S = max(len(s) for s in sequences)
        src = torch.full((len(sequences), S), PAD_ID, dtype=torch.long)
        tgt = torch.full((len(sequences), S + 2), PAD_ID, dtype=torch.long)
        for i, seq in enumerate(sequences):
            src[i, :len(seq)] = torch.tensor(seq)
            tgt[i, :len(seq) + 2] = torch.tensor([BOS_ID, *self.target(seq), EOS_ID])
        return Batch(src, tgt)

    def batches(self, batch_size: int, num_batches: int, seed: int, exclude=()) -> "CopyBatches":
        """Training data: ``num_batches`` batches per epoch, fresh random sequences every epoch."""
        return CopyBatches(self, batch_size, num_batches, seed, tuple(map(tuple, exclude)))


class CopyBatches:
    """An epoch of random training batches; ``set_epoch(e)`` (the Trainer calls it) draws the
    sequences of epoch ``e`` from seed ``(seed, e)``, so every epoch is new and every run the same."""

    def __init__(self, task: CopyTask, batch_size: int, num_batches: int, seed: int, exclude):
        for name, value in (("batch_size", batch_size), ("num_batches", num_batches)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.task, self.batch_size, self.num_batches = task, batch_size, num_batches
        self.seed, self.exclude, self.epoch = seed, exclude, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.num_batches

    def __iter__(self):
        seed = np.random.SeedSequence([self.seed, self.epoch]).generate_state(1)[0]
        sequences = self.task.sample(self.batch_size * self.num_batches, int(seed), self.exclude)
        for i in range(0, len(sequences), self.batch_size):
            yield self.task.batch(sequences[i:i + self.batch_size])


def exact_match(predictions: list[list[int]], targets: list[list[int]]) -> float:
    """Fraction of sequences predicted exactly (every token, and the length)."""
    if len(predictions) != len(targets) or not targets:
        raise ValueError(f"need as many predictions as targets (and at least one), got "
                         f"{len(predictions)} and {len(targets)}")
    return sum(list(p) == list(t) for p, t in zip(predictions, targets)) / len(targets)


def greedy_outputs(model, task: CopyTask, sequences) -> list[list[int]]:
    """What greedy decoding writes for each of ``sequences``, without <s> and </s>."""
    return strip_specials(greedy_decode(model, task.batch(sequences).src, task.max_len + 1, BOS_ID, EOS_ID), EOS_ID)


def greedy_exact_match(model, task: CopyTask, sequences) -> float:
    """Share of ``sequences`` whose greedy decoding is exactly the task's target."""
    return exact_match(greedy_outputs(model, task, sequences), [task.target(s) for s in sequences])


def greedy_misses(model, task: CopyTask, sequences) -> list[tuple[tuple[int, ...], list[int]]]:
    """The ``sequences`` that greedy decoding gets wrong, each with what it wrote instead."""
    outputs = greedy_outputs(model, task, sequences)
    return [(tuple(s), list(y)) for s, y in zip(sequences, outputs) if list(y) != task.target(s)]


def train_until_exact(trainer, batches, task: CopyTask, validation, check_every: int = 100,
                      max_steps: int = 3000, log=print) -> bool:
    """Trains ``trainer`` (an ``aiayn.train.Trainer``) in rounds of ``check_every`` updates until
    greedy decoding gets every ``validation`` sequence exactly right, or ``max_steps`` is
    reached; logs one line per round. Returns whether it got there."""
    while trainer.step < max_steps:
        trainer.config.max_steps = min(trainer.step + check_every, max_steps)
        history = trainer.fit(batches)
        accuracy = greedy_exact_match(trainer.model, task, validation)
        log(f"step {trainer.step:5d}   loss {history[-1]['loss']:.3f}   "
            f"exact match on validation {100 * accuracy:5.1f} %")
        if accuracy == 1.0:
            return True
    return False


@torch.no_grad()
def cross_attention(model, task: CopyTask, sequence) -> torch.Tensor:
    """Where the decoder looks: the last decoder layer's cross-attention weights, averaged over
    heads, while it reads ``<s> target`` and predicts ``target </s>`` (teacher forcing, eval mode).
    Returns (T_tgt, T_src) = (len + 1, len): row i is what output token i attends to."""
    batch = task.batch([sequence])
    captured = []
    layer = model.decoder.layers[-1].cross_attn
    handle = layer.register_forward_hook(lambda module, args, output: captured.append(output[1]))
    was_training = model.training
    try:
        model.eval()
        model(batch.src, batch.decoder_input)
    finally:
        handle.remove()
        model.train(was_training)
    return captured[0][0].mean(dim=0)  # (H, T_tgt, T_src) -> (T_tgt, T_src)
