"""Incremental decoding (a key-value cache) against the uncached decoder, its reference: the same
logits at every step (float64, 1e-10) and the same tokens, for greedy decoding and beam search,
with padded batches, Post-LN and Pre-LN, d_k != d_v and learned positions; NumPy cached against
PyTorch cached; the cache's bookkeeping (positions, reordering, memory) and its misuse."""

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID
from aiayn.inference import beam_search_hypotheses
from aiayn.np import incremental as np_incremental
from aiayn.pt import incremental as pt_incremental
from aiayn.pt.model import Transformer

from conftest import record_difference

TOL = 1e-10
# Name -> (seed, options): the paper's Post-LN; Pre-LN with heads of unequal widths and learned
# positions; Post-LN with narrow keys and one embedding matrix for source and target. Each seed
# gives varied outputs, some sentences of a batch ending before the others (a precondition).
CONFIGS = {
    "post_ln": (2, dict()),
    "pre_ln_dk_dv_learned": (1, dict(norm_first=True, d_k=5, d_v=7, positional="learned")),
    "post_ln_dk_dv_shared": (8, dict(d_k=7, d_v=4, share_embeddings=True)),
}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models: thread start-up costs more than it saves (see test_inference_beam_search)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def torch_model(name: str, vocab: int = 13) -> Transformer:
    """A float64 model whose outputs vary and whose EOS is likely enough that the sentences of a
    batch end at different steps (greedy decoding then pads the finished ones). Untied output
    weights: with tied ones an untrained model mostly repeats one token."""
    seed, options = CONFIGS[name]
    torch.manual_seed(seed)
    options = dict(tie_output=False) | options
    config = TransformerConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=24, num_heads=3,
                               num_layers=2, d_ff=40, dropout=0.1, max_len=48, **options)
    model = Transformer(config).double().eval()
    with torch.no_grad():  # PAD and BOS: logit 0, practically never the largest
        model.out_proj.weight.mul_(3.0)
        model.out_proj.weight[[PAD_ID, BOS_ID]] = 0.0
        model.out_proj.weight[EOS_ID] += 0.5 * model.out_proj.weight.std()
    return model


def source(seed: int, lengths: list[int], vocab: int = 13) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, vocab, (len(lengths), max(lengths)), generator=g)
    for row, n in enumerate(lengths):
        src[row, n:] = PAD_ID
    return src


class Recording:
    """The model, with every call of ``out_proj`` (the logits of one decoding step) recorded."""

    def __init__(self, model, to_numpy):
        self._model, self._to_numpy, self.logits = model, to_numpy, []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def out_proj(self, hidden):
        logits = self._model.out_proj(hidden)
        self.logits.append(self._to_numpy(logits))
        return logits


def pt_numpy(x):
    return x.detach().numpy()


def both(name):
    """The PyTorch model and its NumPy twin (same weights), with their decoding modules."""
    from aiayn.np import decoding as np_decoding
    from aiayn.np.masks import padding_mask as np_padding_mask
    from aiayn.pt import decoding as pt_decoding
    from aiayn.pt.masks import padding_mask as pt_padding_mask
    pt = torch_model(name)
    return {"torch": (pt, pt_decoding, pt_incremental, pt_padding_mask, torch.as_tensor, pt_numpy),
            "numpy": (numpy_model_from_torch(pt), np_decoding, np_incremental, np_padding_mask,
                      np.asarray, np.asarray)}


SRC = [7, 3, 5, 1]  # a padded batch: four lengths


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_every_step_equals_the_uncached_decoder(impl, name):
    """Step by step along a greedy output (padding after EOS included): the newest position's
    logits equal those of model.decode over the whole prefix."""
    model, decoding, incremental, padding_mask, array, to_numpy = both(name)[impl]
    src = array(source(1, SRC).numpy())
    ys = decoding.greedy_decode(model, src, 12, BOS_ID, EOS_ID, use_cache=False)
    assert (to_numpy(ys) == PAD_ID).any(), "precondition: some sentence ended before the others"
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask)
    decoder = incremental.IncrementalDecoder(model, memory, src_mask)
    with torch.no_grad():
        for t in range(ys.shape[1]):
            got = to_numpy(model.out_proj(decoder(ys[:, t:t + 1])[:, -1]))
            want = to_numpy(model.out_proj(model.decode(ys[:, :t + 1], memory, src_mask)[:, -1]))
            diff = float(np.abs(got - want).max())
            record_difference("cached_vs_uncached", diff)
            assert diff <= TOL, f"step {t}: max |diff| {diff:.1e}"
            assert decoder.length == t + 1


@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_several_positions_per_call_equal_one_per_call(impl):
    """A prefix fed in chunks (3, then 1, then 4 positions) gives model.decode's hidden states."""
    model, decoding, incremental, padding_mask, array, to_numpy = both("pre_ln_dk_dv_learned")[impl]
    src = array(source(2, SRC).numpy())
    ys = array(source(3, [8, 8, 6, 8]).numpy())
    ys[:, 0] = BOS_ID
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask)
    decoder = incremental.IncrementalDecoder(model, memory, src_mask)
    with torch.no_grad():
        parts = [to_numpy(decoder(ys[:, a:b])) for a, b in ((0, 3), (3, 4), (4, 8))]
        want = to_numpy(model.decode(ys, memory, src_mask))
    assert np.abs(np.concatenate(parts, axis=1) - want).max() <= TOL


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_greedy_decoding_same_logits_and_tokens_with_and_without_the_cache(impl, name):
    model, decoding, _, _, array, to_numpy = both(name)[impl]
    src = array(source(4, SRC).numpy())
    runs = {}
    for use_cache in (True, False):
        recording = Recording(model, to_numpy)
        ids = decoding.greedy_decode(recording, src, 15, BOS_ID, EOS_ID, use_cache=use_cache)
        runs[use_cache] = to_numpy(ids), recording.logits
    (ids, cached), (ref_ids, uncached) = runs[True], runs[False]
    np.testing.assert_array_equal(ids, ref_ids)
    assert len(cached) == len(uncached) == ids.shape[1] - 1
    assert max(float(np.abs(a - b).max()) for a, b in zip(cached, uncached)) <= TOL
    # The default: the cache, for a model that has the parts it reuses.
    np.testing.assert_array_equal(to_numpy(decoding.greedy_decode(model, src, 15, BOS_ID, EOS_ID)),
                                  ids)


@pytest.mark.parametrize("name", CONFIGS)
def test_numpy_cached_equals_torch_cached(name):
    models = both(name)
    runs = {}
    for impl, (model, decoding, _, _, array, to_numpy) in models.items():
        recording = Recording(model, to_numpy)
        ids = decoding.greedy_decode(recording, array(source(5, SRC).numpy()), 15, BOS_ID, EOS_ID,
                                     use_cache=True)
        runs[impl] = to_numpy(ids), recording.logits
    np.testing.assert_array_equal(runs["numpy"][0], runs["torch"][0])
    diff = max(float(np.abs(a - b).max()) for a, b in zip(runs["numpy"][1], runs["torch"][1]))
    record_difference("numpy_cached_vs_torch_cached", diff)
    assert diff <= TOL


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_search_same_logits_and_hypotheses_with_and_without_the_cache(name, alpha):
    """Padded batch, K = 3: the beams are re-ranked at every step and the sentences finish at
    different steps, so the cache is reordered and shrinks; every step's logits must still be
    the uncached search's."""
    model = torch_model(name)
    src = source(6, [6, 2, 4, 5, 3])
    runs = {}
    for use_cache in (True, False):
        recording = Recording(model, pt_numpy)
        hyps = beam_search_hypotheses(recording, src, beam_size=3, alpha=alpha, max_extra_len=6,
                                      use_cache=use_cache)
        runs[use_cache] = hyps, recording.logits
    (hyps, cached), (ref_hyps, uncached) = runs[True], runs[False]
    assert [h.tokens for h in hyps] == [h.tokens for h in ref_hyps]
    assert max(abs(a.score - b.score) for a, b in zip(hyps, ref_hyps)) <= TOL
    assert [a.shape for a in cached] == [b.shape for b in uncached]
    assert len({a.shape[0] for a in cached}) > 1, "precondition: finished sentences left the batch"
    assert max(float(np.abs(a - b).max()) for a, b in zip(cached, uncached)) <= TOL


@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_reorder_follows_the_beams_and_drops_rows(impl):
    """Rows 0 and 1 share a source sentence (two beams of it): swapping them is a re-ranking
    within a sentence. Then rows 0 and 2 leave, as finished sentences do."""
    model, _, incremental, padding_mask, array, to_numpy = both("post_ln")[impl]
    src = source(7, [5, 5, 3, 4]).numpy()
    src[1] = src[0]
    src, ys = array(src), source(8, [4, 4, 4, 4]).numpy()
    ys[:, 0] = BOS_ID
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask)
    decoder = incremental.IncrementalDecoder(model, memory, src_mask)
    swap, keep = np.array([1, 0, 2, 3]), np.array([3, 1])
    with torch.no_grad():
        decoder(array(ys[:, :3]))
        cross = decoder.cache[0]["cross_k"]
        decoder.reorder(array(swap), within_sentences=True)
        assert decoder.cache[0]["cross_k"] is cross  # not copied
        ys = ys[swap]
        got = to_numpy(decoder(array(ys[:, 3:4])))
        want = to_numpy(model.decode(array(ys), memory, src_mask)[:, -1:])
        assert np.abs(got - want).max() <= TOL
        decoder.reorder(array(keep))  # everything follows, encoder-decoder keys included
        assert decoder.cache[1]["cross_v"].shape[0] == 2 and decoder.length == 4
        ys = np.concatenate([ys[keep], [[5], [6]]], axis=1)
        got = to_numpy(decoder(array(ys[:, 4:])))
        want = to_numpy(model.decode(array(ys), memory[array(keep)], src_mask[array(keep)])[:, -1:])
        assert np.abs(got - want).max() <= TOL


@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_the_cache_grows_one_position_per_step_and_costs_what_the_formula_says(impl):
    model, _, incremental, padding_mask, array, _ = both("pre_ln_dk_dv_learned")[impl]
    src = array(source(9, SRC).numpy())
    src_mask = padding_mask(src, model.config.pad_id)
    decoder = incremental.IncrementalDecoder(model, model.encode(src, src_mask), src_mask)
    B, S, H, d_k, d_v = len(SRC), max(SRC), 3, 5, 7
    cross = [layer["cross_k"] for layer in decoder.cache]
    for t in range(1, 5):
        with torch.no_grad():
            decoder(array(np.full((B, 1), BOS_ID if t == 1 else 4)))
        for layer, cross_k in zip(decoder.cache, cross):
            assert tuple(layer["self_k"].shape) == (B, H, t, d_k)
            assert tuple(layer["self_v"].shape) == (B, H, t, d_v)
            assert tuple(layer["cross_v"].shape) == (B, H, S, d_v)
            assert layer["cross_k"] is cross_k  # computed once, at the start
    # Bytes per target position per layer: H (d_k + d_v) numbers of 8 bytes (float64).
    self_bytes = sum(layer[n].nbytes for layer in decoder.cache for n in ("self_k", "self_v"))
    assert self_bytes == 2 * 4 * B * H * (d_k + d_v) * 8  # 2 layers, 4 positions


def test_the_cache_processes_one_position_per_step():
    """What the cache saves, counted: positions through the first decoder layer's FFN."""
    model = torch_model("post_ln")
    with torch.no_grad():
        model.out_proj.weight[EOS_ID] = -1e3 * model.out_proj.weight.abs().max()  # never ends
    counted = []
    model.decoder.layers[0].ffn.register_forward_hook(lambda m, i, o: counted.append(i[0].shape[1]))
    from aiayn.pt.decoding import greedy_decode
    src, n = source(10, [4, 4]), 10
    for use_cache in (True, False):
        counted.clear()
        greedy_decode(model, src, n, BOS_ID, EOS_ID, use_cache=use_cache)
        assert sum(counted) == (n if use_cache else n * (n + 1) // 2)


@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_misuse_raises_clear_errors(impl):
    model, decoding, incremental, padding_mask, array, _ = both("post_ln")[impl]
    src = array(source(11, [3, 2]).numpy())
    src_mask = padding_mask(src, model.config.pad_id)
    decoder = incremental.IncrementalDecoder(model, model.encode(src, src_mask), src_mask)
    cases = [
        (lambda: decoder(array(np.array([4, 5]))), ["tokens", "2-D", "(2,)"]),
        (lambda: decoder(array(np.full((3, 1), 4))), ["tokens", "(3, 1)", "batch size"]),
        (lambda: decoder(array(np.full((2, 49), 4))), ["positions 0..48", "max_len=48"]),
        (lambda: decoder.reorder(array(np.zeros((2, 1), dtype=np.int64))), ["rows", "1-D", "(2, 1)"]),
        (lambda: incremental.IncrementalDecoder(object(), model.encode(src), src_mask),
         ["tgt_embed", "object lacks"]),
        (lambda: incremental.IncrementalDecoder(model, src, src_mask), ["memory", "3-D"]),
    ]
    for call, words in cases:
        with pytest.raises(ValueError) as err:
            with torch.no_grad():
                call()
        for word in words:
            assert word in str(err.value), (word, str(err.value))
    assert not incremental.can_cache(object()) and incremental.can_cache(model)


@pytest.mark.parametrize("impl", ["numpy", "torch"])
def test_model_mode_is_restored_and_dropout_is_off(impl):
    model, decoding, _, _, array, to_numpy = both("post_ln")[impl]
    src = array(source(12, [3, 2]).numpy())
    first = decoding.greedy_decode(model.train(), src, 8, BOS_ID, EOS_ID, use_cache=True)
    assert model.training
    again = decoding.greedy_decode(model.eval(), src, 8, BOS_ID, EOS_ID, use_cache=False)
    np.testing.assert_array_equal(to_numpy(first), to_numpy(again))


@pytest.mark.parametrize("kind", ["SinusoidalPositionalEncoding", "LearnedPositionalEncoding"])
def test_positional_table_is_what_forward_adds_and_rows_pick_any_position(impl, kind):
    """`pos.table` (public, read-only) is the table whose first T rows `pos(x)` adds; the cache
    reads the row of the position a new token stands at from it, for fixed and learned
    positions alike."""
    pos = getattr(impl.embeddings, kind)(8, max_len=20)
    x = impl.array(np.zeros((2, 5, 8)))
    added = impl.to_numpy(pos(x))[0]
    table = impl.to_numpy(pos.table)
    assert table.shape == (20, 8)
    np.testing.assert_array_equal(added, table[:5])
    incremental = np_incremental if impl.name == "numpy" else pt_incremental
    np.testing.assert_array_equal(impl.to_numpy(incremental.positional_rows(pos, 7, 2)), table[7:9])
    with pytest.raises(ValueError, match=r"positions 19..20 exceed the positional table"):
        incremental.positional_rows(pos, 19, 2)
