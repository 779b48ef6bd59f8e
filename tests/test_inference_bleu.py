"""corpus_bleu: sacreBLEU's numbers and signature, cased and lowercased, clear errors."""

import pytest
import sacrebleu

from aiayn.inference import BleuScore, corpus_bleu

HYPOTHESES = ["A man in an orange hat starring at something.",
              "A Boston Terrier is running on lush green grass in front of a white fence.",
              "a girl in karate uniform breaking a stick with a front kick."]
REFERENCES = ["A man with an orange hat staring at something.",
              "A Boston terrier runs on green grass in front of a white fence.",
              "A girl in a karate uniform is breaking a stick with a front kick."]


def test_identical_sentences_score_100():
    score, signature = corpus_bleu(REFERENCES, REFERENCES)
    assert score == pytest.approx(100.0)
    assert "case:mixed" in signature


def test_matches_sacrebleu_called_directly():
    result = corpus_bleu(HYPOTHESES, REFERENCES)
    expected = sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES])
    assert isinstance(result, BleuScore)
    assert result.score == pytest.approx(expected.score, abs=1e-12)
    assert 10.0 < result.score < 90.0  # a partial match, so the comparison above means something


def test_known_small_example():
    # Two words swapped at the end. n-gram precisions, counted by hand: 10/10, 7/9, 6/8, 5/7;
    # same length, so no brevity penalty: BLEU = 100 * (1 * 7/9 * 6/8 * 5/7)^(1/4).
    hypothesis = ["the quick brown fox jumped over the lazy sleeping dog"]
    reference = ["the quick brown fox jumped over the lazy dog sleeping"]
    expected = 100 * (1 * 7 / 9 * 6 / 8 * 5 / 7) ** 0.25
    assert corpus_bleu(hypothesis, reference).score == pytest.approx(expected, abs=1e-9)


def test_signature_states_casing_and_tokenisation():
    cased = corpus_bleu(HYPOTHESES, REFERENCES).signature
    lower = corpus_bleu(HYPOTHESES, REFERENCES, lowercase=True).signature
    assert "case:mixed" in cased and "tok:13a" in cased and "nrefs:1" in cased
    assert f"version:{sacrebleu.__version__}" in cased
    assert "case:lc" in lower and "tok:13a" in lower


def test_lowercasing_forgives_case_errors_only():
    cased = corpus_bleu(HYPOTHESES, REFERENCES).score
    lower = corpus_bleu(HYPOTHESES, REFERENCES, lowercase=True).score
    assert lower > cased  # "terrier" / "Terrier" and "a girl" / "A girl" now match
    assert lower == pytest.approx(sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES], lowercase=True).score)
    assert corpus_bleu(["THE CAT SAT DOWN"], ["the cat sat down"], lowercase=True).score == pytest.approx(100.0)


@pytest.mark.parametrize("hyps, refs, words", [
    (["a b"], ["a b", "c d"], ["1 hypotheses", "2 references"]),
    ("a b", ["a b"], ["hypotheses", "list", "str"]),
    ([], [], ["hypotheses", "empty"]),
    ([[5, 6, 7]], ["a b"], ["hypotheses[0]", "list", "detokenised"]),
    (["a b"], [None], ["references[0]", "NoneType"]),
])
def test_bad_inputs_raise_clear_errors(hyps, refs, words):
    with pytest.raises(ValueError) as err:
        corpus_bleu(hyps, refs)
    for word in words:
        assert word in str(err.value)
