"""The masks explorer: choose how many real words the source and the target have (the rest is
padding) and see the encoder's padding mask, the causal mask, the decoder's target mask (padding
AND causal) and the encoder-decoder mask, each with the attention weights a softmax gives over
one fixed set of scores: a blocked key's weight is exactly 0, and each row shares 1 among the
keys it may see.

The rules are the course's (aiayn.np.masks): a padded key is blocked for every query, a query
sees keys j <= i in the decoder's self-attention, and padded queries are computed like any other.
The page's browser computes the softmax from the scores the spec holds (two decimals);
``weights`` is the same computation in NumPy, which tests/test_explorers_browser.py compares with
what the browser draws.
"""

from __future__ import annotations

import numpy as np

from aiayn.language import tr
from aiayn.np.attention import masked_softmax
from aiayn.np.masks import causal_mask

from .core import Explorer, slider, spec

PANELS = ("encoder", "causal", "decoder", "cross")  # queries x keys: S x S, T x T, T x T, T x S
PAD = "<pad>"
STEP = 24  # pixels per cell


def _titles() -> dict[str, str]:
    return {"encoder": tr("encoder: padding", "编码器：填充掩码"),
            "causal": tr("causal", "因果掩码"),
            "decoder": tr("decoder: padding AND causal", "解码器：填充与因果取“与”"),
            "cross": tr("encoder-decoder: padding", "编码器-解码器：填充掩码")}


def _check_words(name: str, words) -> list[str]:
    if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) and w for w in words):
        raise ValueError(f"{name}: a non-empty list of non-empty strings, got {words!r}")
    return list(words)


def scores(source_len: int, target_len: int, seed: int = 0) -> dict[str, np.ndarray]:
    """One fixed score matrix per panel (standard normal, rounded to two decimals, as the spec
    holds them): queries x keys."""
    rng = np.random.default_rng(seed)
    shapes = {"encoder": (source_len, source_len), "causal": (target_len, target_len),
              "decoder": (target_len, target_len), "cross": (target_len, source_len)}
    return {p: np.round(rng.standard_normal(shapes[p]), 2) for p in PANELS}


def allowed(panel: str, source_real: int, target_real: int, shape: tuple[int, int]) -> np.ndarray:
    """(queries, keys) booleans, True where the query may attend to the key."""
    queries, keys = shape
    real_src, real_tgt = np.arange(keys) < source_real, np.arange(keys) < target_real
    if panel in ("encoder", "cross"):
        return np.broadcast_to(real_src, shape).copy()
    below = causal_mask(queries)[0, 0]
    return below if panel == "causal" else below & real_tgt


def weights(panel: str, source_real: int, target_real: int, panel_scores: np.ndarray) -> np.ndarray:
    """The weights the explorer draws for one panel: the course's masked softmax."""
    return masked_softmax(panel_scores, allowed(panel, source_real, target_real, panel_scores.shape))


def mask_explorer(source_words, target_words, *, source_real: int | None = None,
                  target_real: int | None = None, seed: int = 0) -> Explorer:
    """Sliders for the number of real source and target words (``source_real``, ``target_real``:
    their first values); the rest of each sentence becomes ``<pad>``."""
    src, tgt = _check_words("source_words", source_words), _check_words("target_words", target_words)
    S, T = len(src), len(tgt)
    source_real = S if source_real is None else source_real
    target_real = T if target_real is None else target_real
    rows = [{"p": p, "q": q, "k": k, "s": float(v)}
            for p, m in scores(S, T, seed).items() for (q, k), v in np.ndenumerate(m)]
    titles = _titles()
    may, blocked = tr("may attend", "可以关注"), tr("blocked (weight 0)", "被屏蔽（权重为 0）")
    rule = {"encoder": "datum.k < source_real", "causal": "datum.k <= datum.q",
            "decoder": "datum.k < target_real && datum.k <= datum.q", "cross": "datum.k < source_real"}
    src_label = f"datum.value < source_real ? src_words[datum.value] : '{PAD}'"
    tgt_label = f"datum.value < target_real ? tgt_words[datum.value] : '{PAD}'"

    def panel(p: str) -> dict:
        keys, queries = (src_label, src_label) if p == "encoder" else (
            (src_label, tgt_label) if p == "cross" else (tgt_label, tgt_label))
        cell = {"x": {"field": "k", "type": "ordinal", "title": tr("key", "键"),
                      "axis": {"labelExpr": keys, "labelAngle": -45, "orient": "top"}},
                "y": {"field": "q", "type": "ordinal", "title": tr("query", "查询"),
                      "axis": {"labelExpr": queries}}}
        return {
            "title": titles[p],
            "transform": [
                {"filter": f"datum.p == '{p}'"},
                {"calculate": rule[p], "as": "open"},
                {"calculate": "datum.open ? exp(datum.s) : 0", "as": "e"},
                {"joinaggregate": [{"op": "sum", "field": "e", "as": "total"}], "groupby": ["q"]},
                {"calculate": "datum.total > 0 ? datum.e / datum.total : 0", "as": "weight"},
                {"calculate": f"datum.open ? '{may}' : '{blocked}'", "as": "status"},
                {"calculate": "datum.open ? format(datum.weight, '.2f') : '0'", "as": "shown"},
            ],
            "width": {"step": STEP}, "height": {"step": STEP},
            "encoding": cell,
            "layer": [
                {"mark": {"type": "rect", "stroke": "white"},
                 "encoding": {"color": {"field": "status", "type": "nominal", "title": None,
                                        "scale": {"domain": [may, blocked], "range": ["#9ecae1", "#eeeeee"]},
                                        "legend": {"orient": "bottom"}},
                              "tooltip": [{"field": "weight", "format": ".2f", "title": tr("weight", "权重")},
                                          {"field": "status", "title": tr("mask", "掩码")}]}},
                {"mark": {"type": "text", "fontSize": 9},
                 "encoding": {"text": {"field": "shown", "type": "nominal"},
                              "color": {"condition": {"test": "datum.open", "value": "black"}, "value": "#999999"}}},
            ],
        }

    body = {
        "params": [
            slider("source_real", tr("real source words", "源句真实词数"), source_real, 1, S),
            slider("target_real", tr("real target tokens", "目标句真实词元数"), target_real, 1, T),
            {"name": "src_words", "value": src},
            {"name": "tgt_words", "value": tgt},
        ],
        "data": {"values": rows},
        "vconcat": [{"hconcat": [panel(p) for p in PANELS[:2]], "spacing": 30},
                    {"hconcat": [panel(p) for p in PANELS[2:]], "spacing": 30}],
        "resolve": {"scale": {"color": "shared"}},
    }
    return Explorer(spec(body, description=tr(
        "The four masks of one padded sentence pair and the weights a softmax gives under each.",
        "一对带填充的句子的四种掩码，以及每种掩码下 softmax 给出的权重。")))
