"""The attention explorer: a trained model's attention on a handful of sentences.

    data = attention_data(model, src, tgt_in, tgt_out, tokenizer)   # one line on the training page
    attention_explorer(data)

Choose the sentence, the kind (encoder self-attention, decoder self-attention,
encoder-decoder attention), the layer and the head, or the heads' mean; the heat map shows the
weights, queries as rows; hover or tap a row to see that query's weights over the keys as bars,
beside chance: weights spread evenly over the keys the query may see.

``data`` is a JSON-able dict (floats rounded to 3 decimals):

    {"heads": H, "layers": {"encoder": Le, "decoder": Ld},
     "sentences": [{"source": [S subwords], "target_in": [T, "<s>" first], "target_out": [T, "</s>" last],
                    "encoder": [Le][H][S][S], "decoder": [Ld][H][T][T], "cross": [Ld][H][T][S],
                    "baseline": {"encoder": [S][S], "decoder": [T][T], "cross": [T][S]}}, ...]}

Rows are queries: source positions for the encoder, target steps (labelled by ``target_out``,
the token each step predicts) for the decoder and cross-attention; the decoder's keys are
labelled by ``target_in``, the tokens the steps read.
"""

from __future__ import annotations

import numpy as np

from aiayn.language import tr

from .core import Explorer, select, slider, spec, thousandths

KINDS = ("encoder", "decoder", "cross")
STEP = 18  # pixels per heat-map cell


def _labels_of(labels):
    """A function ids -> strings from a tokenizer (aiayn.data.tokenizer) or a callable."""
    if hasattr(labels, "backend"):
        from aiayn.lab.attention_maps import labels as subwords
        return lambda ids: subwords(labels, ids)
    if callable(labels):
        return labels
    raise ValueError(f"labels: a tokenizer or a function from ids to strings, got {type(labels).__name__}")


def chance(kind: str, queries: int, keys: int) -> np.ndarray:
    """(queries, keys): each query's weight spread evenly over the keys it may see (all of them,
    or keys 0..i in the decoder's causal self-attention)."""
    if kind == "decoder":
        visible = np.tril(np.ones((queries, keys)))
    else:
        visible = np.ones((queries, keys))
    return visible / visible.sum(-1, keepdims=True)


def attention_data(model, src, tgt_in, tgt_out, labels) -> dict:
    """The explorer's dict for sentences ``src`` (B, S), ``tgt_in`` (B, T), ``tgt_out`` (B, T)
    (id tensors padded with the model's pad id, as aiayn.lab.attention_maps.teacher_forced
    makes them) from any aiayn.pt Transformer, each sentence run alone without its padding;
    ``labels`` is the tokenizer (or a function from a row of ids to strings)."""
    from aiayn.lab.attention_maps import collect

    label = _labels_of(labels)
    if not (src.dim() == tgt_in.dim() == tgt_out.dim() == 2) or tgt_in.shape != tgt_out.shape \
            or src.shape[0] != tgt_in.shape[0]:
        raise ValueError(f"src, tgt_in, tgt_out: (B, S), (B, T), (B, T) id tensors, got "
                         f"{tuple(src.shape)}, {tuple(tgt_in.shape)}, {tuple(tgt_out.shape)}")
    pad = model.config.pad_id
    sentences = []
    for b in range(src.shape[0]):
        S, T = int((src[b] != pad).sum()), int((tgt_out[b] != pad).sum())
        if S == 0 or T == 0:
            raise ValueError(f"src, tgt_out: sentence {b} is all padding")
        one = collect(model, src[b:b + 1, :S], tgt_in[b:b + 1, :T])
        rounded = lambda ws: [np.round(w[0].double().numpy(), 3).tolist() for w in ws]  # noqa: E731
        sentences.append({
            "source": label(src[b, :S].tolist()), "target_in": label(tgt_in[b, :T].tolist()),
            "target_out": label(tgt_out[b, :T].tolist()),
            "encoder": rounded(one.encoder), "decoder": rounded(one.decoder), "cross": rounded(one.cross),
            "baseline": {"encoder": np.round(chance("encoder", S, S), 3).tolist(),
                         "decoder": np.round(chance("decoder", T, T), 3).tolist(),
                         "cross": np.round(chance("cross", T, S), 3).tolist()},
        })
    return {"heads": model.config.num_heads,
            "layers": {"encoder": len(model.encoder.layers), "decoder": len(model.decoder.layers)},
            "sentences": sentences}


def _shape(value) -> tuple:
    """The shape of a nested list of numbers, checked to be rectangular."""
    array = np.asarray(value, dtype=float)
    if array.dtype == object:
        raise ValueError
    return array.shape


def check_attention_data(data) -> None:
    """Raises ValueError naming the entry of ``data`` that does not have the form above."""
    if not isinstance(data, dict) or not {"heads", "layers", "sentences"} <= set(data):
        raise ValueError("data: a dict with 'heads', 'layers' and 'sentences'")
    H, layers, sentences = data["heads"], data["layers"], data["sentences"]
    if not isinstance(H, int) or H < 1:
        raise ValueError(f"data['heads']: a positive int, got {H!r}")
    if not isinstance(layers, dict) or not all(isinstance(layers.get(k), int) and layers[k] >= 1
                                               for k in ("encoder", "decoder")):
        raise ValueError(f"data['layers']: {{'encoder': Le, 'decoder': Ld}}, positive ints, got {layers!r}")
    if not isinstance(sentences, list) or not sentences:
        raise ValueError("data['sentences']: a non-empty list")
    for n, s in enumerate(sentences):
        where = f"data['sentences'][{n}]"
        for key in ("source", "target_in", "target_out"):
            if not isinstance(s.get(key), list) or not s[key] or not all(isinstance(t, str) for t in s[key]):
                raise ValueError(f"{where}['{key}']: a non-empty list of strings")
        S, T = len(s["source"]), len(s["target_in"])
        if len(s["target_out"]) != T:
            raise ValueError(f"{where}: target_in has {T} tokens, target_out {len(s['target_out'])}")
        expected = {"encoder": (layers["encoder"], H, S, S), "decoder": (layers["decoder"], H, T, T),
                    "cross": (layers["decoder"], H, T, S)}
        for kind in KINDS:
            for key, value, shape in ((f"['{kind}']", s.get(kind), expected[kind]),
                                      (f"['baseline']['{kind}']", (s.get("baseline") or {}).get(kind),
                                       expected[kind][2:])):
                try:
                    got = _shape(value)
                except (ValueError, TypeError):
                    got = None
                if got != shape:
                    raise ValueError(f"{where}{key}: shape {shape} expected, got {got}")


def _sentence_label(n: int, tokens: list[str]) -> str:
    text = "".join(t.replace("▁", " ") for t in tokens if t not in ("<s>", "</s>")).strip()
    return f"{n + 1}: " + (text if len(text) <= 40 else text[:39] + "…")


def attention_explorer(data: dict, *, sentence: int = 0, kind: str = "cross", layer: int | None = None,
                       head: int = 0) -> Explorer:
    """The explorer of ``data`` (the form above). The keyword arguments give the controls' first
    values: layer counts from 1 (default: the last), head from 1, 0 meaning the heads' mean."""
    check_attention_data(data)
    H, Le, Ld = data["heads"], data["layers"]["encoder"], data["layers"]["decoder"]
    sentences = data["sentences"]
    if kind not in KINDS:
        raise ValueError(f"kind: one of {KINDS}, got {kind!r}")
    layer = (Le if kind == "encoder" else Ld) if layer is None else layer
    # One row per (sentence, kind, layer, head) with its matrix flattened, in thousandths, and one
    # per (sentence, kind) for chance (h = -1); the browser keeps the rows the controls choose and
    # unfolds only those.
    rows = []
    for n, s in enumerate(sentences):
        for kind_name in KINDS:
            keys = len(s["source"]) if kind_name in ("encoder", "cross") else len(s["target_in"])
            for li, per_layer in enumerate(s[kind_name]):
                for h, matrix in enumerate(per_layer):
                    rows.append({"s": n, "t": kind_name, "l": li + 1, "h": h + 1, "n": keys,
                                 "w": [v for row in thousandths(matrix) for v in row]})
            rows.append({"s": n, "t": kind_name, "l": 0, "h": -1, "n": keys,
                         "w": [v for row in thousandths(s["baseline"][kind_name]) for v in row]})
    kind_labels = [tr("encoder self-attention", "编码器自注意力"),
                   tr("decoder self-attention (masked)", "解码器自注意力（带掩码）"),
                   tr("encoder-decoder attention", "编码器-解码器注意力")]
    tokens = [{"source": s["source"], "target_in": s["target_in"], "target_out": s["target_out"]}
              for s in sentences]
    # Query labels: source tokens for the encoder, target_out otherwise; keys: source, except the
    # decoder's self-attention (target_in).
    query_label = "kind == 'encoder' ? tokens[sentence].source[datum.value] : tokens[sentence].target_out[datum.value]"
    key_label = "kind == 'decoder' ? tokens[sentence].target_in[datum.value] : tokens[sentence].source[datum.value]"
    the_layer = f"min(layer, kind == 'encoder' ? {Le} : {Ld})"
    weight, base = tr("weight", "权重"), tr("chance (even over the keys it may see)", "随机水平（在可见的键上平均分配）")
    query, key = tr("query", "查询"), tr("key", "键")
    pick = {"name": "pick", "select": {"type": "point", "fields": ["q"], "on": "mouseover", "clear": False,
                                       "toggle": False}, "value": [{"q": 0}]}
    heatmap = {
        "title": tr("weights: rows are queries (hover or tap a row)", "权重：每行是一个查询（悬停或轻点某一行）"),
        "transform": [{"filter": "!datum.chance"}],
        "width": {"step": STEP}, "height": {"step": STEP},
        "params": [pick],
        "mark": {"type": "rect"},
        "encoding": {
            "x": {"field": "k", "type": "ordinal", "title": key,
                  "axis": {"labelExpr": key_label, "labelAngle": -60, "orient": "top"}},
            "y": {"field": "q", "type": "ordinal", "title": query, "axis": {"labelExpr": query_label}},
            "color": {"field": "weight", "type": "quantitative", "title": weight,
                      "scale": {"scheme": "blues", "domainMin": 0}},
            "stroke": {"condition": {"param": "pick", "empty": False, "value": "#d62728"}, "value": None},
            "strokeWidth": {"value": 1.5},
            "tooltip": [{"field": "qt", "title": query}, {"field": "kt", "title": key},
                        {"field": "weight", "format": ".3f", "title": weight}],
        },
    }
    bars = {
        "title": tr("the chosen query's weights over the keys", "所选查询在各个键上的权重"),
        "transform": [{"filter": {"param": "pick", "empty": False}}],
        "width": {"step": STEP}, "height": 140,
        "encoding": {"x": {"field": "k", "type": "ordinal", "title": key,
                           "axis": {"labelExpr": key_label, "labelAngle": -60}}},
        "layer": [
            {"transform": [{"filter": "!datum.chance"}],
             "mark": {"type": "bar", "color": "#3182bd"},
             "encoding": {"y": {"field": "weight", "type": "quantitative", "title": weight,
                                "scale": {"domainMin": 0}},
                          "tooltip": [{"field": "qt", "title": query}, {"field": "kt", "title": key},
                                      {"field": "weight", "format": ".3f", "title": weight}]}},
            {"transform": [{"filter": "datum.chance"}, {"calculate": f"'{base}'", "as": "what"}],
             "mark": {"type": "tick", "thickness": 2, "color": "#d62728"},
             "encoding": {"y": {"field": "weight", "type": "quantitative"},
                          "color": {"field": "what", "type": "nominal", "title": None,
                                    "scale": {"range": ["#d62728"]},
                                    "legend": {"orient": "bottom", "labelLimit": 400}},
                          "tooltip": [{"field": "kt", "title": key},
                                      {"field": "weight", "format": ".3f", "title": base}]}},
        ],
    }
    body = {
        "params": [
            select("sentence", tr("sentence", "句子"), sentence, list(range(len(sentences))),
                   [_sentence_label(n, s["source"]) for n, s in enumerate(sentences)]),
            select("kind", tr("attention", "注意力"), kind, list(KINDS), kind_labels),
            slider("layer", tr("layer", "层"), layer, 1, max(Le, Ld)),
            select("head", tr("head", "头"), head, list(range(H + 1)),
                   [tr("mean of the heads", "各头平均")] + [str(h) for h in range(1, H + 1)]),
            {"name": "tokens", "value": tokens},
        ],
        "data": {"values": rows},
        "transform": [
            {"filter": f"datum.s == sentence && datum.t == kind && (datum.h == -1 || "
                       f"(datum.l == {the_layer} && (head == 0 || datum.h == head)))"},
            {"calculate": "datum.h == -1", "as": "chance"},
            {"calculate": "sequence(length(datum.w))", "as": "i"},
            {"flatten": ["w", "i"]},
            {"calculate": "floor(datum.i / datum.n)", "as": "q"},
            {"calculate": "datum.i % datum.n", "as": "k"},
            {"aggregate": [{"op": "mean", "field": "w", "as": "w"}], "groupby": ["chance", "q", "k"]},
            {"calculate": "round(datum.w) / 1000", "as": "weight"},
            {"calculate": query_label.replace("datum.value", "datum.q"), "as": "qt"},
            {"calculate": key_label.replace("datum.value", "datum.k"), "as": "kt"},
        ],
        "vconcat": [heatmap, bars],
        "spacing": 24,
    }
    return Explorer(spec(body, description=tr(
        "A trained model's attention weights: sentence, kind, layer and head chosen by the reader.",
        "训练好的模型的注意力权重：句子、种类、层和头由读者选择。")))
