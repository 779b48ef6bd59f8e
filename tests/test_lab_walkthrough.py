"""aiayn.lab.walkthrough: the word vocabulary of the sentence pair walked through the model, and
the aligned columns the chapter prints."""

import pytest

from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS
from aiayn.lab.walkthrough import WORDS, WordVocabulary, columns


def test_special_tokens_keep_the_course_ids_and_words_follow():
    vocab = WordVocabulary()
    assert vocab.tokens[:len(SPECIAL_TOKENS)] == SPECIAL_TOKENS
    assert vocab.decode([PAD_ID, BOS_ID, EOS_ID]) == ["<pad>", "<s>", "</s>"]
    assert len(vocab) == len(SPECIAL_TOKENS) + len(WORDS)


def test_a_pair_round_trips_and_the_target_is_framed_by_bos_and_eos():
    vocab = WordVocabulary()
    src, tgt = vocab.pair("a dog runs in the park .", "ein hund rennt im park .")
    assert vocab.decode(src) == "a dog runs in the park .".split()
    assert tgt[0] == BOS_ID and tgt[-1] == EOS_ID
    assert vocab.decode(tgt[1:-1]) == "ein hund rennt im park .".split()
    # "park" and "." are shared by both languages: one id each (a joint vocabulary).
    assert src[-2:] == tgt[-3:-1]


def test_unknown_words_and_ids_and_repeated_words_are_errors():
    vocab = WordVocabulary()
    with pytest.raises(ValueError, match=r"^sentence: \['cat'\]"):
        vocab.encode("a cat")
    with pytest.raises(ValueError, match=r"^ids: 99"):
        vocab.decode([99])
    with pytest.raises(ValueError, match=r"^words: \['a'\]"):
        WordVocabulary(["a", "b", "a"])


def test_columns_align_latin_and_chinese_labels():
    text = columns({"position": [0, 1], "读入": ["<s>", "ein"], "预测": ["ein", "hund"]})
    lines = text.splitlines()
    assert lines[0] == "position  0    1"
    assert lines[1] == "读入      <s>  ein"  # a Chinese character takes two columns
    assert lines[2] == "预测      ein  hund"
    with pytest.raises(ValueError, match="^rows"):
        columns({"a": [1], "b": [1, 2]})
