"""The decoder-only model: one sequence (source, then target) under a causal mask, from the course's
own layers. Packing, causality (a target position never sees later targets; the source is read
left to right), NumPy = PyTorch (forward and every gradient, float64, in test_after_variants),
equal parameters to the encoder-decoder at 2N layers and d_ff + d_model, decoding; and its
experiment: the committed results file against the code, and a re-run of its first updates."""

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.data.specials import BOS_ID, EOS_ID
from aiayn.inference.beam_search import beam_search
from aiayn.np.decoder_only import DecoderOnlyTransformer as NumpyDecoderOnly
from aiayn.pt.decoder_only import DecoderOnlyTransformer
from aiayn.pt.decoding import greedy_decode
from aiayn.pt.encoder import EncoderLayer
from aiayn.pt.model import Transformer


def config(**extra):
    fields = dict(src_vocab_size=14, tgt_vocab_size=14, d_model=16, num_heads=4, num_layers=4, d_ff=40,
                  dropout=0.0, max_len=40)
    return TransformerConfig(**(fields | extra))


def model(**extra):
    torch.manual_seed(0)
    return DecoderOnlyTransformer(config(**extra)).double().eval()


def test_source_and_target_are_packed_into_one_right_padded_sequence():
    m = model()
    src = torch.tensor([[5, 6, 7], [8, 0, 0]])
    tgt = torch.tensor([[1, 9, 10, 2], [1, 11, 2, 0]])
    seq, where = m.pack(src, tgt)
    assert seq.tolist() == [[5, 6, 7, 1, 9, 10, 2], [8, 1, 11, 2, 0, 0, 0]]
    assert where.tolist() == [[3, 4, 5, 6], [1, 2, 3, 4]]
    np_seq, np_where = numpy_model_from_torch(m).pack(src.numpy(), tgt.numpy())
    assert np_seq.tolist() == seq.tolist() and np_where.tolist() == where.tolist()
    with pytest.raises(ValueError, match="right-padded"):
        m.pack(torch.tensor([[0, 5, 6]]), tgt[:1])
    with pytest.raises(ValueError, match="one vocabulary"):
        DecoderOnlyTransformer(config(src_vocab_size=20))


@pytest.mark.parametrize("extra", [dict(), dict(positional="rotary", num_kv_heads=1, norm_first=True)],
                         ids=["paper_parts", "rotary_mqa_pre_ln"])
def test_a_target_position_sees_the_source_and_earlier_targets_only(extra):
    m = model(**extra)
    src, tgt = torch.tensor([[5, 6, 7, 8]]), torch.tensor([[1, 9, 10, 11, 12]])
    logits = m(src, tgt)
    later = tgt.clone()
    later[0, 3:] = torch.tensor([4, 4])
    assert torch.allclose(m(src, later)[0, :3], logits[0, :3], rtol=0, atol=1e-12)  # the future is unseen
    assert (m(src, later)[0, 3] - logits[0, 3]).abs().max() > 1e-6                  # the past is seen
    other_source = torch.tensor([[5, 6, 7, 13]])
    assert (m(other_source, tgt)[0, 0] - logits[0, 0]).abs().max() > 1e-6           # all of the source


def test_it_is_a_stack_of_the_courses_encoder_layers_and_matches_the_encoder_decoders_size():
    m = DecoderOnlyTransformer(TransformerConfig(14, 14, d_model=64, num_heads=4, num_layers=4, d_ff=256 + 64))
    assert all(type(layer) is EncoderLayer for layer in m.decoder.layers)
    assert not any(hasattr(layer, "cross_attn") for layer in m.decoder.layers)
    enc_dec = Transformer(TransformerConfig(14, 14, d_model=64, num_heads=4, num_layers=2, d_ff=256,
                                            share_embeddings=True))
    ours, theirs = (sum(p.numel() for p in x.parameters()) for x in (m, enc_dec))
    assert abs(ours - theirs) / theirs < 0.003  # 2N layers at d_ff + d_model: equal to 0.3 %


def test_greedy_and_beam_search_decode_it_without_a_cache():
    m = model()
    src = torch.tensor([[5, 6, 7, 0], [8, 9, 10, 11]])
    ys = greedy_decode(m, src, 6, BOS_ID, EOS_ID)
    assert ys.shape[0] == 2 and (ys[:, 0] == BOS_ID).all()
    # Step by step, the greedy choice is the argmax of the logits after the prefix so far.
    prefix = ys[:1, :3]
    assert ys[0, 3] == m(src[:1, :3], prefix)[0, -1].argmax() or ys[0, 2] == EOS_ID
    assert len(beam_search(m, src, beam_size=2, alpha=0.6, max_extra_len=4, bos_id=BOS_ID, eos_id=EOS_ID)) == 2
    numpy_ys = numpy_model_from_torch(m)
    assert isinstance(numpy_ys, NumpyDecoderOnly)


# The experiment (aiayn.experiments.after_decoder_only) ----------------------------------------

def test_committed_results_match_the_code_and_their_verdicts_their_runs():
    import json

    from aiayn.experiments import after_decoder_only as exp
    from aiayn.experiments.after_common import verdicts
    from aiayn.experiments.record import read_results

    record = read_results(exp.RESULTS)
    values = record["values"]
    assert record["command"] == "python -m aiayn.experiments.after_decoder_only"
    assert record["threads"] == 1 and record["code_changes"] == []
    assert values["steps"] == exp.STEPS and values["seeds"] == list(exp.SEEDS)
    assert values["models"] == {arm: fields for arm, (_, fields) in exp.ARMS.items()}
    parameters = values["parameters"]
    assert abs(parameters["decoder_only"] - parameters["encoder_decoder"]) / parameters["encoder_decoder"] < 0.003
    runs = values["runs"]
    assert set(runs) == set(exp.TASKS)
    again = verdicts({task: (r["decoder_only"], r["encoder_decoder"]) for task, r in runs.items()}, exp.METRICS)
    assert json.loads(json.dumps(again)) == values["verdicts"]


def test_the_first_updates_reproduce_the_committed_run():
    from aiayn.experiments import after_decoder_only as exp
    from aiayn.experiments.record import read_results

    committed = read_results(exp.RESULTS)["values"]["runs"]["reverse"]["decoder_only"][0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = exp.run_one("decoder_only", "reverse", 0, steps=25, score=False)
    finally:
        torch.set_num_threads(threads)
    assert fresh["loss_curve"][0][0] == committed["loss_curve"][0][0] == 25
    assert fresh["loss_curve"][0][1] == pytest.approx(committed["loss_curve"][0][1], rel=1e-4)
