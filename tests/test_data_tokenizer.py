"""aiayn.data.tokenizer: a joint English-German BPE vocabulary with the course's special ids."""

import os
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models

from aiayn.data.multi30k import load_split
from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID
from aiayn.data.tokenizer import SubwordTokenizer

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AIAYN_DATA") or ROOT.parent / "shared" / "data")
pytestmark = pytest.mark.skipif(not (DATA / "multi30k").is_dir(),
                                reason=f"Multi30k not found in {DATA}/multi30k (set AIAYN_DATA)")


@pytest.fixture(scope="module")
def corpus():
    en, de = load_split("train", DATA)
    return en[:3000], de[:3000]


@pytest.fixture(scope="module")
def tokenizer(corpus):
    en, de = corpus
    return SubwordTokenizer.train(en + de, vocab_size=1000)


def test_special_tokens_have_the_course_ids(tokenizer):
    for i, token in enumerate(SPECIAL_TOKENS):
        assert tokenizer.backend.token_to_id(token) == i
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)


def test_vocabulary_has_the_requested_size(tokenizer):
    assert tokenizer.vocab_size == 1000


def test_one_vocabulary_serves_both_languages(tokenizer):
    vocab = tokenizer.backend.get_vocab()
    assert "▁the" in vocab and "▁der" in vocab  # frequent words of each language are whole
    for text in ("A man rides a bike.", "Ein Mann fährt Fahrrad."):
        assert UNK_ID not in tokenizer.encode(text)


def test_encode_adds_no_special_tokens(tokenizer):
    ids = tokenizer.encode("Two dogs play.")
    assert ids and not set(ids) & {PAD_ID, BOS_ID, EOS_ID, UNK_ID}
    assert tokenizer.tokens("Two dogs play.")[-1] == "."  # punctuation is split off


def test_decode_inverts_encode(corpus, tokenizer):
    en, de = corpus
    sentences = en[:300] + de[:300] + ["Zwei Männer, ein Hund: außergewöhnlich!"]
    assert [tokenizer.decode(tokenizer.encode(s)) for s in sentences] == sentences
    assert tokenizer.decode_batch(tokenizer.encode_batch(sentences)) == sentences


def test_decode_stops_at_eos_and_drops_specials(tokenizer):
    ids = tokenizer.encode("A girl in a red dress.")
    row = [BOS_ID] + ids + [EOS_ID] + tokenizer.encode("junk after the end") + [PAD_ID, PAD_ID]
    assert tokenizer.decode(row) == "A girl in a red dress."


def test_save_and_load_give_identical_encodings(tmp_path, corpus, tokenizer):
    path = tmp_path / "tokenizer.json"
    tokenizer.save(path)
    loaded = SubwordTokenizer.load(path)
    again = SubwordTokenizer.from_str(tokenizer.to_str())
    sample = corpus[0][:200] + corpus[1][:200]
    assert loaded.vocab_size == again.vocab_size == tokenizer.vocab_size
    assert loaded.encode_batch(sample) == again.encode_batch(sample) == tokenizer.encode_batch(sample)
    assert loaded.backend.get_vocab() == tokenizer.backend.get_vocab()


def test_training_is_deterministic(corpus, tokenizer):
    en, de = corpus
    assert SubwordTokenizer.train(en + de, vocab_size=1000).to_str() == tokenizer.to_str()


def test_a_tokenizer_with_other_special_ids_is_rejected():
    backend = Tokenizer(models.WordLevel({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}, unk_token="<unk>"))
    with pytest.raises(ValueError, match="'<pad>' to id 0"):
        SubwordTokenizer(backend)


def test_too_small_a_vocabulary_is_rejected():
    with pytest.raises(ValueError, match="vocab_size=4"):
        SubwordTokenizer.train(["a b"], vocab_size=4)
