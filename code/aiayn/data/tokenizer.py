"""One joint English-German subword vocabulary, learned by byte-pair encoding (BPE).

§5.1: "Sentences were encoded using byte-pair encoding, which has a shared source-target
vocabulary". A shared vocabulary is what lets the model share one embedding matrix between
encoder, decoder and output layer (§3.4). The work is done by Hugging Face ``tokenizers``;
this wrapper fixes the choices and the course's special ids (``specials.py``).

Pre-tokenisation marks each word start with "▁" (SentencePiece's convention) and splits
punctuation off, so subwords never straddle words and ``decode`` restores the spacing:
decode(encode(s)) == s for text made of characters seen in training.
"""

import os
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .specials import EOS_ID, SPECIAL_TOKENS, UNK_ID


class SubwordTokenizer:
    """Text <-> subword ids. ``encode`` adds no special tokens; batching adds BOS/EOS."""

    def __init__(self, backend: Tokenizer):
        for i, token in enumerate(SPECIAL_TOKENS):
            if backend.token_to_id(token) != i:
                raise ValueError(f"tokenizer must map {token!r} to id {i} (aiayn.data.specials), "
                                 f"got {backend.token_to_id(token)}")
        self.backend = backend

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, min_frequency: int = 2) -> "SubwordTokenizer":
        """Learns BPE merges on ``texts`` (pass English and German together for a joint
        vocabulary) until the vocabulary, special tokens included, has ``vocab_size`` entries."""
        if vocab_size <= len(SPECIAL_TOKENS):
            raise ValueError(f"vocab_size={vocab_size} leaves no room beside {SPECIAL_TOKENS}")
        backend = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS[UNK_ID]))
        backend.normalizer = normalizers.NFC()  # one code point sequence for "ä", however typed
        backend.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always"),
            pre_tokenizers.Punctuation(behavior="isolated"),
        ])
        backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        # The special tokens come first, in order, so they get ids 0..3.
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=list(SPECIAL_TOKENS), show_progress=False)
        backend.train_from_iterator(texts, trainer=trainer)
        return cls(backend)

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self.backend.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.backend.encode_batch(texts, add_special_tokens=False)]

    def tokens(self, text: str) -> list[str]:
        """The subword strings of ``text``, to look at."""
        return self.backend.encode(text, add_special_tokens=False).tokens

    def decode(self, ids) -> str:
        """Ids -> text. Stops at the first EOS and drops special tokens, so a decoder output
        row (``<s> ... </s> <pad> ...``) and a bare id list both decode cleanly."""
        ids = [int(i) for i in ids]
        if EOS_ID in ids:
            ids = ids[: ids.index(EOS_ID)]
        return self.backend.decode(ids, skip_special_tokens=True)

    def decode_batch(self, rows) -> list[str]:
        return [self.decode(row) for row in rows]

    def to_str(self) -> str:
        """The whole tokenizer as JSON text (what ``save`` writes; checkpoints embed it)."""
        return self.backend.to_str()

    @classmethod
    def from_str(cls, json_text: str) -> "SubwordTokenizer":
        return cls(Tokenizer.from_str(json_text))

    def save(self, path: str | os.PathLike) -> None:
        self.backend.save(str(path))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SubwordTokenizer":
        return cls(Tokenizer.from_file(str(path)))
