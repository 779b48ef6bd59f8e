"""Inference (§6.1): beam search with a length penalty, and BLEU with sacreBLEU."""

from .beam_search import Hypothesis, beam_search, beam_search_hypotheses, length_penalty, strip_specials
from .bleu import BleuScore, corpus_bleu

__all__ = ["Hypothesis", "beam_search", "beam_search_hypotheses", "length_penalty",
           "strip_specials", "BleuScore", "corpus_bleu"]
