"""Corpus BLEU with sacreBLEU (Post, 2018), reported with its signature.

BLEU numbers are comparable only when computed the same way: the same tokenisation, the same
casing, the same references. The paper does not say how its BLEU was computed; the script in
its code base (tensor2tensor's ``get_ende_bleu.sh``) ran ``multi-bleu.perl`` on Moses-tokenised
text with hyphenated compounds split. sacreBLEU scores detokenised text with its own fixed
tokeniser (13a, that of WMT's ``mteval-v13a.pl``) and prints a signature that states every such
choice, so that anyone can reproduce the number. Published Multi30k scores are often lowercased: report both.
"""

from typing import NamedTuple

from sacrebleu.metrics import BLEU


class BleuScore(NamedTuple):
    """``score`` in [0, 100]; ``signature`` like ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|
    version:2.6.0``. A tuple, so ``score, signature = corpus_bleu(...)`` works too."""

    score: float
    signature: str


def corpus_bleu(hypotheses: list[str], references: list[str], lowercase: bool = False,
                tokenize: str = "13a") -> BleuScore:
    """BLEU of detokenised ``hypotheses`` against one detokenised reference each.

    Cased by default (sacreBLEU's default and WMT's); ``lowercase=True`` lowercases both sides
    first, the variant many Multi30k papers report (signature ``case:lc``)."""
    _check_text("hypotheses", hypotheses)
    _check_text("references", references)
    if len(hypotheses) != len(references):
        raise ValueError(f"hypotheses and references must pair up one to one, got "
                         f"{len(hypotheses)} hypotheses and {len(references)} references")
    metric = BLEU(lowercase=lowercase, tokenize=tokenize)
    result = metric.corpus_score(hypotheses, [references])
    return BleuScore(result.score, str(metric.get_signature()))


def _check_text(name: str, sentences) -> None:
    if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
        raise ValueError(f"{name} must be a list of sentences (str), got {type(sentences).__name__}")
    if not sentences:
        raise ValueError(f"{name} is empty: BLEU needs at least one sentence")
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            raise ValueError(f"{name}[{i}] is a {type(sentence).__name__}, not a str: BLEU scores "
                             "detokenised text, so decode the token ids back to a sentence first")
