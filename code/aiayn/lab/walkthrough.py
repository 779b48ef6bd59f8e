"""One sentence pair walked through the Transformer, from words to the loss (putting it together).

A joint vocabulary of a dozen whole words, English and German, after the course's four special
tokens (``aiayn.data.specials``): small enough to print every id, and built like the subword
vocabulary of the training chapters: one id per token and one list for both languages, so that
one embedding matrix can serve the encoder, the decoder and the output layer (§3.4).

    vocab = WordVocabulary()
    src, tgt = vocab.pair("a dog runs in the park .", "ein hund rennt im park .")
    print(columns({"reads": vocab.decode(tgt[:-1]), "predicts": vocab.decode(tgt[1:])}))
"""

from __future__ import annotations

from collections.abc import Iterable

from ..data.specials import BOS_ID, EOS_ID, SPECIAL_TOKENS
from ..show import display_width as _width, pad as _pad

# "park" and "." are spelled the same in both languages, so the joint vocabulary holds them once.
WORDS = ("a", "dog", "runs", "in", "the", "park", ".", "ein", "hund", "rennt", "im")


class WordVocabulary:
    """Whole words <-> ids; the special tokens first, so that their ids are the course's."""

    def __init__(self, words: Iterable[str] = WORDS):
        tokens = list(SPECIAL_TOKENS) + list(words)
        repeated = sorted({t for t in tokens if tokens.count(t) > 1})
        if repeated:
            raise ValueError(f"words: {repeated} appear twice (or clash with {SPECIAL_TOKENS})")
        self.tokens = tokens
        self._ids = {token: i for i, token in enumerate(tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, sentence: str) -> list[int]:
        """Words separated by spaces -> ids; a word outside the vocabulary is an error."""
        unknown = [w for w in sentence.split() if w not in self._ids]
        if unknown:
            raise ValueError(f"sentence: {unknown} not in the vocabulary {self.tokens[len(SPECIAL_TOKENS):]}")
        return [self._ids[w] for w in sentence.split()]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids (a list, or a 1-D array or tensor) -> tokens."""
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.tokens):
                raise ValueError(f"ids: {i} is outside the vocabulary of {len(self.tokens)} tokens")
            out.append(self.tokens[i])
        return out

    def pair(self, source: str, target: str) -> tuple[list[int], list[int]]:
        """(source ids, target ids): the target between <s> and </s>, as the data pipeline
        stores it; the decoder reads it without its last token and predicts it without its first."""
        return self.encode(source), [BOS_ID, *self.encode(target), EOS_ID]


def columns(rows: dict[str, list]) -> str:
    """Rows of equal length as aligned text columns, each row starting with its label."""
    lengths = {len(cells) for cells in rows.values()}
    if len(lengths) > 1:
        raise ValueError(f"rows: lengths differ, {sorted(lengths)}")
    cells = {_pad(label, max(map(_width, rows))): [str(c) for c in row] for label, row in rows.items()}
    widths = [max(_width(row[j]) for row in cells.values()) for j in range(lengths.pop() if lengths else 0)]
    return "\n".join((label + "  " + "  ".join(_pad(c, w) for c, w in zip(row, widths))).rstrip()
                     for label, row in cells.items())


__all__ = ["WORDS", "WordVocabulary", "columns"]
