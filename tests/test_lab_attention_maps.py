"""aiayn.lab.attention_maps: the hooks collect exactly the weights each attention module computes,
and every statistic gives the known answer on attention patterns built by hand."""

import math

import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.data.tokenizer import SubwordTokenizer
from aiayn.lab.attention_maps import (OFFSETS, agreement, collect, diagonal_targets, entropy,
                                      labels, position_guess, statistics, teacher_forced)
from aiayn.pt.masks import padding_mask, target_mask
from aiayn.pt.model import Transformer

SENTENCES = ["a dog runs on the beach .", "two men play music", "a girl in a red coat",
             "ein hund rennt am strand .", "zwei männer spielen musik", "ein mädchen im roten mantel"]


@pytest.fixture(scope="module")
def tokenizer():
    return SubwordTokenizer.train(SENTENCES * 3, 60)


@pytest.fixture(scope="module")
def model(tokenizer):
    torch.manual_seed(0)
    config = TransformerConfig(tokenizer.vocab_size, tokenizer.vocab_size, d_model=16, num_heads=2,
                               num_layers=2, d_ff=32, share_embeddings=True)
    return Transformer(config).train()  # in training mode: collect must switch dropout off


def test_teacher_forced_shifts_the_target_by_one(tokenizer):
    src, tgt_in, tgt_out = teacher_forced(tokenizer, SENTENCES[:3], SENTENCES[3:])
    assert src.shape[0] == tgt_in.shape[0] == 3 and tgt_in.shape == tgt_out.shape
    read = tgt_in[:, 1:] != 0  # position i predicts what position i + 1 reads
    assert torch.equal(tgt_in[:, 1:][read], tgt_out[:, :-1][read])
    assert ((tgt_out == 2).sum(1) == 1).all() and torch.equal(tgt_in != 0, tgt_out != 0)
    assert labels(tokenizer, src[1])[-1] == "</s>" and labels(tokenizer, tgt_in[1])[0] == "<s>"


def test_collect_returns_each_modules_own_weights_and_leaves_the_model_as_it_was(tokenizer, model):
    src, tgt_in, _ = teacher_forced(tokenizer, SENTENCES[:3], SENTENCES[3:])
    att = collect(model, src, tgt_in)
    assert model.training and not any(m._forward_hooks for m in model.modules())
    assert [len(att.encoder), len(att.decoder), len(att.cross)] == [2, 2, 2]
    B, S, T = src.shape[0], src.shape[1], tgt_in.shape[1]
    assert att.encoder[0].shape == (B, 2, S, S) and att.decoder[1].shape == (B, 2, T, T)
    assert att.cross[1].shape == (B, 2, T, S)
    model.eval()
    with torch.no_grad():  # recompute layer 0 by hand: the same numbers
        src_mask = padding_mask(src, 0)
        x = model.dropout(model.pos(model.src_embed(src)))
        _, w = model.encoder.layers[0].self_attn(x, x, x, src_mask)
        memory = model.encode(src, src_mask)
        y = model.pos(model.tgt_embed(tgt_in))
        tgt_mask = target_mask(tgt_in, 0)
        layer = model.decoder.layers[0]
        h = layer.norm1(y + layer.self_attn(y, y, y, tgt_mask)[0])
        _, w_cross = layer.cross_attn(h, memory, memory, src_mask)
    model.train()
    assert torch.equal(att.encoder[0], w) and torch.allclose(att.cross[0], w_cross)
    assert torch.all(att.cross[0][..., (src == 0)[0]] == 0)  # no weight on padded source keys
    attention = [m for m in model.modules() if hasattr(m, "fused")]
    for m in attention:  # as the Trainer leaves a model on CUDA: the fused kernel has no weights
        m.fused = True
    fused = collect(model, src, tgt_in)
    assert all(m.fused for m in attention) and torch.equal(fused.encoder[0], att.encoder[0])
    for m in attention:
        m.fused = False


def test_entropy_is_one_for_uniform_and_zero_for_one_hot():
    keys = torch.tensor([True, True, True, True, False])
    uniform = torch.tensor([0.25, 0.25, 0.25, 0.25, 0.0])
    one_hot = torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0])
    e = entropy(torch.stack([uniform, one_hot])[None, None], keys)
    assert torch.allclose(e, torch.tensor([[[1.0, 0.0]]], dtype=torch.float64))
    assert entropy(one_hot[None, None, None], torch.tensor([False, True, False, False, False])).isnan().all()


def test_diagonal_targets_run_corner_to_corner():
    d = diagonal_targets(torch.tensor([5, 3]), torch.tensor([5, 5]), 5)
    assert d.tolist() == [[0, 1, 2, 3, 4], [0, 0, 1, 2, 2]]


class Scripted(torch.nn.Module):
    """A stand-in model whose attention modules return weights we choose."""

    def __init__(self, cross, encoder):
        super().__init__()
        self.encoder, self.decoder = torch.nn.Module(), torch.nn.Module()
        self.encoder.layers = torch.nn.ModuleList([Layer(encoder)])
        self.decoder.layers = torch.nn.ModuleList([Layer(None, cross)])
        self.config = TransformerConfig(10, 10)

    def encode(self, src, src_mask):
        for layer in self.encoder.layers:
            layer.self_attn(src.shape)
        return src

    def decode(self, tgt_in, memory, src_mask):
        for layer in self.decoder.layers:
            layer.self_attn(tgt_in.shape, causal=True)
            layer.cross_attn(tgt_in.shape)


class Fixed(torch.nn.Module):
    fused = False  # as MultiHeadAttention's

    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def forward(self, shape, causal=False):
        if self.weights is None:  # uniform over the visible keys
            w = torch.ones(shape[0], 2, shape[1], shape[1])
            w = w.tril() if causal else w
            return None, w / w.sum(-1, keepdim=True)
        return None, self.weights


class Layer(torch.nn.Module):
    def __init__(self, self_weights, cross=None):
        super().__init__()
        self.self_attn, self.cross_attn = Fixed(self_weights), Fixed(cross)


def test_statistics_on_hand_made_patterns():
    S = T = 6
    src = tgt = torch.arange(1, S + 1)[None].repeat(2, 1)  # two pairs, no padding
    eye, flipped = torch.eye(S), torch.eye(S).flip(-1)
    cross = torch.stack([torch.stack([eye, flipped])] * 2)  # head 0 diagonal, head 1 anti-diagonal
    previous = torch.diag(torch.ones(S - 1), -1)
    previous[0, S - 1] = 1.0  # position 0 has no previous word: it looks at the final </s>
    encoder = torch.stack([torch.stack([eye, previous])] * 2)
    stats = statistics(Scripted(cross, encoder), src, tgt, width=0)
    assert stats["diagonal"][0, 0] == 1.0 and stats["diagonal"][0, 1] == pytest.approx(0.0)
    assert stats["chance"] == pytest.approx(1 / S)
    assert stats["monotone"].shape == (1,)
    same, prev, nxt, eos, other = (OFFSETS.index(k) for k in ("same", "previous", "next", "</s>", "other"))
    assert stats["offsets"][0, 0, same] == 1.0
    assert stats["offsets"][0, 1, prev] == pytest.approx((S - 1) / S)
    assert stats["offsets"][0, 1, eos] == pytest.approx(1 / S)
    assert stats["entropy"]["encoder"][0].tolist() == [0.0, 0.0]
    assert torch.allclose(stats["entropy"]["decoder"], torch.ones(1, 2, dtype=torch.float64))


def test_statistics_of_a_real_model_are_in_range(tokenizer, model):
    src, tgt_in, _ = teacher_forced(tokenizer, SENTENCES[:3] * 3, SENTENCES[3:] * 3)
    stats = statistics(model, src, tgt_in, batch_size=4)
    assert stats["diagonal"].shape == (2, 3) and stats["offsets"].shape == (2, 2, len(OFFSETS))
    assert torch.allclose(stats["offsets"].sum(-1), torch.ones(2, 2, dtype=torch.float64))
    for where in ("encoder", "decoder", "cross"):
        assert stats["entropy"][where].shape == (2, 2)
        assert ((stats["entropy"][where] > 0) & (stats["entropy"][where] <= 1 + 1e-9)).all()
    assert 0 < stats["chance"] < 1 and math.isfinite(stats["chance"])


def test_inner_statistics_leave_out_the_endpoint_steps_and_give_their_chance_levels():
    S = T = 6
    src = tgt = torch.arange(1, S + 1)[None].repeat(2, 1)
    eye, flipped = torch.eye(S), torch.eye(S).flip(-1)
    cross = torch.stack([torch.stack([eye, flipped])] * 2)
    stats = statistics(Scripted(cross, torch.stack([torch.stack([eye, eye])] * 2)), src, tgt, width=0)
    # The anti-diagonal head meets the diagonal nowhere; the diagonal head everywhere, inner steps too.
    assert stats["diagonal_inner"][0, 0] == 1.0 and stats["diagonal_inner"][0, 1] == 0.0
    assert stats["chance_inner"] == pytest.approx(1 / S)
    # Heads averaged: equal weights at i and S-1-i, argmax the first, 0 1 2 2 1 0. Over all steps
    # 3 of 5 moves go forward or stay; over the inner steps 1 2 2 1, 2 of 3.
    assert stats["monotone"][0] == pytest.approx(3 / 5)
    assert stats["monotone_inner"][0] == pytest.approx(2 / 3)
    # Chance that a second uniform link is not before a first, by counting all S * S pairs.
    not_back = sum(second >= first for first in range(S) for second in range(S)) / S ** 2
    assert stats["monotone_chance"] == pytest.approx(not_back) == pytest.approx((S + 1) / (2 * S))


def test_inner_steps_follow_each_sentences_own_length(tokenizer, model):
    src, tgt_in, _ = teacher_forced(tokenizer, SENTENCES[:3], SENTENCES[3:])
    stats = statistics(model, src, tgt_in, batch_size=2)
    lengths = (tgt_in != 0).sum(1)
    S = (src != 0).sum(1).double()
    # every sentence contributes its T - 2 inner steps and T - 3 pairs of consecutive inner steps
    pairs = (lengths - 3).clamp(min=0).double()
    expected = float(((S + 1) / (2 * S) * pairs).sum() / pairs.sum())
    assert stats["monotone_chance"] == pytest.approx(expected)
    assert stats["diagonal_inner"].shape == stats["diagonal"].shape == (2, 3)
    assert stats["monotone_inner"].shape == (2,) and 0 < stats["chance_inner"] < 1


def test_attention_panels_draws_one_panel_per_head_on_one_scale(monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt

    from aiayn.figures.attention_panels import attention_panels

    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    with matplotlib.rc_context({"backend": "Agg"}):
        panels = [(torch.eye(3).numpy(), "head 0"), (torch.full((3, 3), 1 / 3).numpy(), "head 1")]
        assert attention_panels(panels * 3, ["a", "b", "c"], ["x", "y", "z"], "title") is None
    fig = shown[0]
    drawn = [ax for ax in fig.axes if ax.images]
    assert len(drawn) == 6 and len(fig.axes) == 10  # five a row: the second row's last four empty
    assert [ax.get_title() for ax in drawn[:2]] == ["head 0", "head 1"]
    assert all(ax.images[0].get_clim() == (0, 1) for ax in drawn)
    assert [t.get_text() for t in drawn[0].get_xticklabels()] == ["x", "y", "z"]
    assert fig._suptitle.get_text() == "title"
    plt.close("all")


def test_position_guess_scales_the_diagonal_to_the_content_words():
    # 5 source words + </s> (S = 6), 3 target words: <s> + 3 (T = 4); steps 0..2 predict the words
    guess = position_guess(torch.tensor([6]), torch.tensor([4]), 4)
    assert guess[0, :3].tolist() == [0, 2, 4]  # first to first, last to last, in proportion
    assert position_guess(torch.tensor([4]), torch.tensor([4]), 4)[0, :3].tolist() == [0, 1, 2]


def test_agreement_counts_hits_of_the_reference_against_position_and_chance():
    S = T = 6
    src = tgt = torch.arange(1, S + 1)[None].repeat(2, 1)
    eye, flipped = torch.eye(S), torch.eye(S).flip(-1)
    cross = torch.stack([torch.stack([eye, flipped])] * 2)  # head 0 diagonal, head 1 anti-diagonal
    model = Scripted(cross, torch.stack([torch.stack([eye, eye])] * 2))
    # reference links on steps 0-3, none on steps 4-5
    links = torch.tensor([[5, 4, 2, 0, -1, -1]] * 2)
    result = agreement(model, src, tgt, links)
    assert result["links"] == 8 and result["chance"] == pytest.approx(1 / S)
    # head 1 links 5 4 3 2: two hits a sentence; head 0 links 0 1 2 3: one; their average links
    # 0 1 2 2 (equal weights at i and 5 - i, argmax the first): one
    assert result["model"][0].tolist() == pytest.approx([2 / 8, 4 / 8, 2 / 8])
    # the guess from positions, over 5 content words each side, links 0 1 2 3: one hit
    assert result["position"] == pytest.approx(2 / 8)
    with pytest.raises(ValueError, match="shape"):
        agreement(model, src, tgt, links[:, :3])
    with pytest.raises(ValueError, match="no reference link"):
        agreement(model, src, tgt, torch.full_like(links, -1))


