"""aiayn.explorers and _ext/explorers.py without a browser: the attention explorer's data is the
weights the model computes (checked against attention computed by hand from the layer's own
projections), bad input is named, the masks and positional explorers hold the course's numbers,
every specification compiles with Vega-Lite 5.21 in both languages, and the book's renderer
embeds a specification safely and comes first for HTML. What the browser draws:
tests/test_explorers_browser.py."""

from __future__ import annotations

import base64
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.data.tokenizer import SubwordTokenizer
from aiayn.explorers import (MIME, Explorer, attention_data, attention_explorer, check_attention_data,
                             mask_explorer, positional_explorer)
from aiayn.explorers import masks as mask_module
from aiayn.explorers.attention import chance
from aiayn.explorers.core import VEGA_LITE, thousandths
from aiayn.lab.attention_maps import teacher_forced
from aiayn.lab.positional import offset_dot_product
from aiayn.np.embeddings import sinusoidal_table
from aiayn.np.masks import padding_mask, target_mask
from aiayn.pt.model import Transformer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import explorers as book_ext  # noqa: E402  (_ext/explorers.py)

SENTENCES = ["a dog runs on the beach .", "two men play music", "a girl in a red coat",
             "ein hund rennt am strand .", "zwei männer spielen musik", "ein mädchen im roten mantel"]
WORDS_SRC = "the cat sat on the mat".split()
WORDS_TGT = "<s> die katze saß auf der matte".split()


@pytest.fixture(scope="module")
def tokenizer():
    return SubwordTokenizer.train(SENTENCES * 3, 60)


@pytest.fixture(scope="module")
def small(tokenizer):
    """An untrained model (2 + 2 layers, 4 heads) and three sentence pairs, padded."""
    torch.manual_seed(0)
    config = TransformerConfig(tokenizer.vocab_size, tokenizer.vocab_size, d_model=16, num_heads=4,
                               num_layers=2, d_ff=32, share_embeddings=True)
    model = Transformer(config).train()  # attention_data must switch dropout off itself
    return model, teacher_forced(tokenizer, SENTENCES[:3], SENTENCES[3:])


@pytest.fixture(scope="module")
def data(small, tokenizer):
    model, (src, tgt_in, tgt_out) = small
    return attention_data(model, src, tgt_in, tgt_out, tokenizer)


def vl_convert():
    return pytest.importorskip("vl_convert")


# ------------------------------------------------------------------ the attention explorer's data

def test_attention_data_has_the_documented_form(data, small, tokenizer):
    model, (src, tgt_in, tgt_out) = small
    check_attention_data(data)
    assert json.loads(json.dumps(data)) == data  # JSON-able as it is
    assert data["heads"] == 4 and data["layers"] == {"encoder": 2, "decoder": 2}
    assert len(data["sentences"]) == 3 and model.training  # the model's mode restored
    for b, s in enumerate(data["sentences"]):
        S, T = int((src[b] != 0).sum()), int((tgt_out[b] != 0).sum())
        assert len(s["source"]) == S and s["source"][-1] == "</s>"
        assert s["target_in"][0] == "<s>" and s["target_out"][-1] == "</s>" and len(s["target_in"]) == T
        assert s["target_in"][1:] == s["target_out"][:-1]  # step i reads what step i - 1 predicts
        for kind in ("encoder", "decoder", "cross"):
            w = np.array(s[kind])
            assert np.array_equal(w, np.round(w, 3))  # three decimals
            assert np.abs(w.sum(-1) - 1).max() <= w.shape[-1] * 5e-4 + 1e-9  # rows sum to 1, rounded
        decoder = np.array(s["decoder"])
        assert (decoder[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0).all()  # causal
        assert np.allclose(np.array(s["baseline"]["decoder"])[T - 1], 1 / T, atol=5e-4)


def test_attention_data_is_the_weights_the_layer_computes(data, small):
    """The first encoder layer's weights, computed by hand from its projections, for sentence 0."""
    model, (src, _, _) = small
    S = len(data["sentences"][0]["source"])
    layer = model.encoder.layers[0].self_attn
    with torch.no_grad():
        model.eval()
        x = model.pos(model.src_embed(src[:1, :S]))
        model.train()
        H, d_k = 4, 4
        q = layer.w_q(x).view(1, S, H, d_k).transpose(1, 2)
        k = layer.w_k(x).view(1, S, H, d_k).transpose(1, 2)
        expected = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_k), dim=-1)[0]
    got = np.array(data["sentences"][0]["encoder"][0])
    assert np.abs(got - expected.numpy()).max() <= 5e-4 + 1e-6


def test_attention_data_labels_from_a_function_and_bad_input_named(small):
    model, (src, tgt_in, tgt_out) = small
    named = attention_data(model, src[:1], tgt_in[:1], tgt_out[:1], lambda ids: [f"t{i}" for i in ids])
    assert named["sentences"][0]["source"][0].startswith("t")
    with pytest.raises(ValueError, match="labels"):
        attention_data(model, src, tgt_in, tgt_out, labels=42)
    with pytest.raises(ValueError, match="src, tgt_in, tgt_out"):
        attention_data(model, src, tgt_in[:2], tgt_out[:2], str)


@pytest.mark.parametrize("damage,named", [
    (lambda d: d.pop("heads"), r"data: a dict"),
    (lambda d: d.update(heads=0), r"data\['heads'\]"),
    (lambda d: d["layers"].pop("decoder"), r"data\['layers'\]"),
    (lambda d: d["sentences"][1]["cross"][0].pop(), r"data\['sentences'\]\[1\]\['cross'\]"),
    (lambda d: d["sentences"][2]["baseline"].pop("encoder"), r"\['baseline'\]\['encoder'\]"),
    (lambda d: d["sentences"][0]["target_out"].pop(), r"target_out"),
])
def test_check_attention_data_names_what_is_wrong(data, damage, named):
    broken = json.loads(json.dumps(data))
    damage(broken)
    with pytest.raises(ValueError, match=named):
        check_attention_data(broken)
    with pytest.raises(ValueError, match=named):
        attention_explorer(broken)


def test_chance_spreads_evenly_over_the_visible_keys():
    assert np.allclose(chance("encoder", 3, 3), 1 / 3)
    assert np.allclose(chance("decoder", 3, 3), [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_attention_explorer_rows_hold_every_matrix_in_thousandths(data):
    spec = attention_explorer(data, kind="encoder", layer=1, head=3).spec
    rows = spec["data"]["values"]
    one = next(r for r in rows if (r["s"], r["t"], r["l"], r["h"]) == (1, "decoder", 2, 3))
    assert one["w"] == [v for row in thousandths(data["sentences"][1]["decoder"][1][2]) for v in row]
    assert len(rows) == 3 * (2 * 4 * 3 + 3)  # sentences x (layers x heads x kinds + one chance per kind)
    values = {p["name"]: p["value"] for p in spec["params"]}
    assert (values["kind"], values["layer"], values["head"]) == ("encoder", 1, 3)
    with pytest.raises(ValueError, match="kind"):
        attention_explorer(data, kind="self")
    with pytest.raises(ValueError, match="layer"):
        attention_explorer(data, layer=3)


def test_the_data_of_a_base_sized_model_fits_a_page():
    """Five sentences of 15 subwords from a 6 + 6-layer, 8-head model: well under 2 MB."""
    rng = np.random.default_rng(0)
    n, L, H = 15, 6, 8
    w = lambda: np.round(rng.dirichlet(np.ones(n), size=(L, H, n)), 3).tolist()  # noqa: E731
    uniform = np.full((n, n), round(1 / n, 3)).tolist()
    sentence = {"source": ["▁x"] * n, "target_in": ["<s>"] + ["▁y"] * (n - 1), "target_out": ["▁y"] * (n - 1) + ["</s>"],
                "encoder": w(), "decoder": w(), "cross": w(),
                "baseline": {"encoder": uniform, "decoder": uniform, "cross": uniform}}
    size = len(attention_explorer({"heads": H, "layers": {"encoder": L, "decoder": L},
                                   "sentences": [sentence] * 5}).to_json().encode())
    assert size < 1_000_000, size


# ------------------------------------------------------------------ masks and positions

def test_mask_weights_are_the_course_masks_and_softmax():
    scores = mask_module.scores(6, 7)
    src = np.array([[1, 2, 3, 0, 0, 0]])
    tgt = np.array([[1, 2, 3, 4, 0, 0, 0]])
    expected = {"encoder": np.broadcast_to(padding_mask(src, 0)[0, 0], (6, 6)),
                "decoder": target_mask(tgt, 0)[0, 0], "cross": np.broadcast_to(padding_mask(src, 0)[0, 0], (7, 6))}
    for panel, mask in expected.items():
        assert np.array_equal(mask_module.allowed(panel, 3, 4, scores[panel].shape), mask), panel
        w = mask_module.weights(panel, 3, 4, scores[panel])
        assert (w[~mask] == 0).all() and np.allclose(w.sum(-1), 1)  # blocked: exactly 0
    assert np.array_equal(mask_module.allowed("causal", 3, 4, (7, 7)), np.tril(np.ones((7, 7), bool)))


def test_mask_explorer_holds_the_scores_and_names_bad_words():
    spec = mask_explorer(WORDS_SRC, WORDS_TGT, source_real=3, target_real=4).spec
    rows = spec["data"]["values"]
    assert len(rows) == 36 + 49 + 49 + 42
    cross = {(r["q"], r["k"]): r["s"] for r in rows if r["p"] == "cross"}
    assert cross[(6, 5)] == mask_module.scores(6, 7)["cross"][6, 5]
    with pytest.raises(ValueError, match="source_words"):
        mask_explorer([], WORDS_TGT)
    with pytest.raises(ValueError, match="source_real"):
        mask_explorer(WORDS_SRC, WORDS_TGT, source_real=7)


def test_positional_explorer_holds_the_dot_products():
    spec = positional_explorer(128, pair=2, pos=5, k=3).spec
    curve = spec["hconcat"][1]["data"]["values"]
    assert [r["k"] for r in curve] == list(range(-50, 51))
    assert np.allclose([r["dot"] for r in curve], offset_dot_product(np.arange(-50, 51), 128), atol=5e-4)
    # the browser computes the hands from w_i = 10000^(-2i/d_model): the table's columns
    pe, i = sinusoidal_table(20, 128), 2
    omega = 10000 ** (-2 * i / 128)
    assert np.allclose(pe[:, 2 * i], np.sin(np.arange(20) * omega)) and np.allclose(pe[:, 2 * i + 1], np.cos(np.arange(20) * omega))
    for bad in (dict(d_model=7), dict(d_model=1), dict(pair=64), dict(k=51)):
        with pytest.raises(ValueError):
            positional_explorer(**bad)


# ------------------------------------------------------------------ what a notebook output holds

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_explorer_compiles_and_displays_with_a_still(data, lang, monkeypatch):
    vlc = vl_convert()
    monkeypatch.setenv("AIAYN_LANG", lang)
    for explorer in (attention_explorer(data), mask_explorer(WORDS_SRC, WORDS_TGT), positional_explorer()):
        vega = vlc.vegalite_to_vega(explorer.spec, vl_version=VEGA_LITE)  # raises on an invalid spec
        assert vega["$schema"].endswith("vega/v5.json")
        bundle, metadata = explorer._repr_mimebundle_()
        assert set(bundle) == {MIME, "text/plain", "image/png"} and bundle[MIME] == explorer.spec
        assert base64.b64decode(bundle["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
        assert metadata[MIME]["embed_options"] == {"actions": False}
        labels = [p["bind"]["name"] for p in explorer.spec["params"] if "bind" in p]
        han = [any("\u4e00" <= ch <= "\u9fff" for ch in label) for label in labels]
        assert (any(han) if lang == "zh" else not any(han)), labels
    with pytest.raises(ValueError, match="spec"):
        Explorer({"mark": "bar"})


def test_without_vl_convert_the_output_has_no_still(monkeypatch):
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import fails
    bundle, _ = positional_explorer()._repr_mimebundle_()
    assert set(bundle) == {MIME, "text/plain"}


# ------------------------------------------------------------------ the book's side

def test_the_page_markup_keeps_the_spec_intact_and_inside_its_script():
    spec = {"$schema": "x", "description": 'a "quoted" <b>', "params": [{"name": "s", "value": "</script><b>"}]}
    markup = book_ext.explorer_html(spec)
    assert markup.count("</script>") == 1 and 'aria-label="a &quot;quoted&quot; &lt;b&gt;"' in markup
    inner = markup.split('class="aiayn-explorer-spec">')[1].removesuffix("</script></div>")
    assert json.loads(inner) == spec
    with pytest.raises(ValueError):
        book_ext.explorer_html("{not json")


def test_myst_nb_renders_the_spec_first_in_html():
    from myst_nb.core import render

    book_ext._add_renderer()
    book_ext._add_renderer()  # twice: still one renderer
    assert render.load_mime_renders().count(book_ext.VegaLiteRenderer) == 1
    assert render.get_mime_priority("html", [])[0] == MIME
    assert MIME not in render.get_mime_priority("latex", [])  # elsewhere the still image

    class Data:
        mime_type, content = MIME, {"$schema": "x", "description": "d"}

    node = book_ext.VegaLiteRenderer.handle_mime(None, Data, False)[0]
    assert node["format"] == "html" and 'class="aiayn-explorer"' in node.astext()
    assert book_ext.VegaLiteRenderer.handle_mime(None, Data, True) is None


def test_the_bundle_defines_vega_embed_in_a_function_scope():
    vl_convert()
    js = book_ext.bundle_js()
    assert js.splitlines()[1] == "(function () {" and js.rstrip().endswith("})();")
    assert "window.vegaEmbed=" in js.replace(" ", "") and "import.meta" not in js
    assert 500_000 < len(js.encode()) < 1_200_000
