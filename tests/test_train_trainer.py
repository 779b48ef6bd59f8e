"""aiayn.train.trainer / loss / checkpoint: §5's training loop, exact resume, averaging."""

import io
import math
import os
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.data.batch import Batch
from aiayn.data.batching import TokenBatches, source_ids, target_ids
from aiayn.data.specials import PAD_ID
from aiayn.pt.attention import MultiHeadAttention
from aiayn.pt.model import Transformer
from aiayn.train import checkpoint as ckpt_module
from aiayn.train import trainer as trainer_module
from aiayn.train.checkpoint import average_checkpoints, checkpoint_paths, load_checkpoint, save_checkpoint
from aiayn.train.configs import get_config
from aiayn.train.loss import token_loss_sum
from aiayn.train.schedule import transformer_schedule
from aiayn.train.trainer import TrainConfig, Trainer

import conftest

VOCAB = 14
CONFIG = TransformerConfig(VOCAB, VOCAB, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.1,
                           max_len=64, share_embeddings=True)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def copy_pairs(n=48, seed=0):
    return conftest.copy_pairs(n, seed, VOCAB, (3, 9))


def new_model(seed=0):
    torch.manual_seed(seed)
    return Transformer(CONFIG)


def quiet(**kw):
    return TrainConfig(**{"warmup_steps": 10, "lr_factor": 2.0, "log_every": 1, "progress": False} | kw)


def test_the_trainer_fits_a_handful_of_pairs():
    """Eight copy-task pairs, no dropout, no smoothing: the loss must go from chance (ln 10 =
    2.3 nats for 10 equally likely tokens) to nearly zero: the loop really optimises."""
    torch.manual_seed(0)
    model = Transformer(replace(CONFIG, dropout=0.0))
    config = quiet(max_steps=60, lr_factor=0.5, warmup_steps=20, label_smoothing=0.0)
    history = Trainer(model, config).fit(TokenBatches(copy_pairs(8), 100, seed=0))
    assert history[5]["loss"] > 2.0 and history[-1]["loss"] < 0.3, [round(h["loss"], 2) for h in history]


def test_history_entries():
    stream = TokenBatches(copy_pairs(), 100, seed=0)
    history = Trainer(new_model(), quiet(max_steps=7, log_every=3, eval_every=5)).fit(stream, stream)
    assert [h["step"] for h in history] == [3, 5, 6, 7]  # every log_every, every eval_every, the end
    assert [("val_loss" in h) for h in history] == [False, True, False, True]
    assert all(set(h) >= {"step", "loss", "lr", "tokens_per_s"} and h["tokens_per_s"] > 0 for h in history)
    assert history[0]["lr"] == pytest.approx(2.0 * 32 ** -0.5 * 3 * 10 ** -1.5)  # the rate of update 3


def test_evaluate_is_the_mean_unsmoothed_loss_per_target_token():
    """The batches' loss sums, added in double precision in order, over the target tokens (padding
    excluded), with dropout off: the same number to the last bit as scoring each batch apart.
    No batches: a clear error, not a division by zero."""
    model = new_model()
    trainer = Trainer(model, quiet(max_steps=1, label_smoothing=0.1))
    batches = list(TokenBatches(copy_pairs(), 60, shuffle=False))
    assert len(batches) > 3
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for b in batches:
            total += float(F.cross_entropy(model(b.src, b.decoder_input).flatten(0, 1), b.labels.flatten(),
                                           ignore_index=PAD_ID, reduction="sum"))
            tokens += int((b.labels != PAD_ID).sum())
    model.train()
    assert trainer.evaluate(batches) == total / tokens
    assert model.training  # evaluate switches dropout back on afterwards
    with pytest.raises(ValueError, match="validation batches are empty"):
        trainer.evaluate([])


def run_until(tmp_path, name, max_steps):
    trainer = Trainer(new_model(), quiet(max_steps=max_steps, checkpoint_dir=tmp_path / name, checkpoint_every=4))
    return trainer, trainer.fit(TokenBatches(copy_pairs(), 100, seed=0))


def test_resuming_gives_the_same_losses_as_an_uninterrupted_run(tmp_path):
    stream = TokenBatches(copy_pairs(), 100, seed=0)
    assert len(stream) == 4  # so step 6 is in the middle of epoch 1 and the run spans 3 epochs
    full, full_history = run_until(tmp_path, "full", 11)
    run_until(tmp_path, "part", 6)  # stops after 6 updates, writing step_0000006.pt
    resumed = Trainer.load(tmp_path / "part" / "step_0000006.pt", new_model(seed=99), max_steps=11)
    assert (resumed.step, resumed.epoch, resumed.batch_in_epoch) == (6, 1, 2)
    history = resumed.fit(stream)
    assert [h["loss"] for h in history] == [h["loss"] for h in full_history]  # exactly
    assert [h["lr"] for h in history] == [h["lr"] for h in full_history]
    for p, q in zip(resumed.model.parameters(), full.model.parameters()):
        assert torch.equal(p, q)


@pytest.mark.parametrize("forget", ["random state", "data position"])
def test_resume_depends_on_what_the_checkpoint_restores(tmp_path, forget):
    """The control for the test above: losing either piece of state changes the losses."""
    _, full_history = run_until(tmp_path, "full", 9)
    run_until(tmp_path, "part", 6)
    resumed = Trainer.load(tmp_path / "part" / "step_0000006.pt", new_model(), max_steps=9)
    if forget == "random state":
        torch.manual_seed(1234)  # other dropout masks
    else:
        resumed.batch_in_epoch = 0
    history = resumed.fit(TokenBatches(copy_pairs(), 100, seed=0))
    assert [h["loss"] for h in history[:6]] == [h["loss"] for h in full_history[:6]]
    assert [h["loss"] for h in history[6:]] != [h["loss"] for h in full_history[6:]]


def test_checkpoints_are_plain_data_and_only_the_last_are_kept(tmp_path):
    trainer = Trainer(new_model(), quiet(max_steps=9, checkpoint_dir=tmp_path, checkpoint_every=2, keep_last=3),
                      metadata={"tokenizer": "{}"})
    trainer.fit(TokenBatches(copy_pairs(), 100, seed=0))
    assert [p.name for p in checkpoint_paths(tmp_path)] == ["step_0000006.pt", "step_0000008.pt", "step_0000009.pt"]
    state = torch.load(tmp_path / "step_0000009.pt", weights_only=True)  # no pickled code inside
    assert state["step"] == 9 and state["metadata"] == {"tokenizer": "{}"}
    assert state["train_config"]["max_steps"] == 9 and state["model_config"]["d_model"] == 32
    assert not [p for p in os.listdir(tmp_path) if not p.startswith("step_")]  # no temporary files
    assert [ckpt_module.checkpoint_step(p) for p in checkpoint_paths(tmp_path)] == [6, 8, 9]
    with pytest.raises(ValueError, match="not a checkpoint name"):
        ckpt_module.checkpoint_step(tmp_path / "averaged.pt")


def test_an_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    save_checkpoint({"w": torch.ones(3)}, path)

    def crash(obj, f):
        f.write(b"half a checkpoint")
        raise KeyboardInterrupt

    monkeypatch.setattr(ckpt_module.torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint({"w": torch.zeros(3)}, path)
    assert torch.equal(load_checkpoint(path)["w"], torch.ones(3))
    assert os.listdir(tmp_path) == ["model.pt"]


def test_average_checkpoints_is_the_elementwise_mean(tmp_path):
    states = [{"w": torch.tensor([1.0, 2.0]), "b": torch.tensor(3.0, dtype=torch.float64), "n": torch.tensor([7])},
              {"w": torch.tensor([3.0, 6.0]), "b": torch.tensor(4.0, dtype=torch.float64), "n": torch.tensor([7])},
              {"w": torch.tensor([5.0, 1.0]), "b": torch.tensor(8.0, dtype=torch.float64), "n": torch.tensor([7])}]
    paths = [tmp_path / f"{i}.pt" for i in range(3)]
    save_checkpoint({"model": states[0]}, paths[0])  # a trainer-style checkpoint ...
    for state, path in zip(states[1:], paths[1:]):
        save_checkpoint(state, path)  # ... or bare state dicts
    mean = average_checkpoints(paths)
    assert torch.equal(mean["w"], torch.tensor([3.0, 3.0])) and mean["w"].dtype == torch.float32
    assert torch.equal(mean["b"], torch.tensor(5.0, dtype=torch.float64))
    assert torch.equal(mean["n"], torch.tensor([7]))
    save_checkpoint({"w": torch.zeros(2), "b": torch.zeros((), dtype=torch.float64), "n": torch.tensor([8])}, paths[2])
    with pytest.raises(ValueError, match="integer tensor n differs"):
        average_checkpoints(paths)
    save_checkpoint({"w": torch.zeros(2)}, paths[2])
    with pytest.raises(ValueError, match="other weights"):
        average_checkpoints(paths)


def test_averaging_trained_checkpoints_gives_a_working_model(tmp_path):
    trainer = Trainer(new_model(), quiet(max_steps=6, checkpoint_dir=tmp_path, checkpoint_every=2))
    trainer.fit(TokenBatches(copy_pairs(), 100, seed=0))
    paths = checkpoint_paths(tmp_path)
    mean = average_checkpoints(paths)
    expected = sum(load_checkpoint(p)["model"]["encoder.layers.0.ffn.w_1.weight"] for p in paths) / 3
    assert torch.allclose(mean["encoder.layers.0.ffn.w_1.weight"], expected, atol=1e-7)
    model = new_model(seed=5)
    model.load_state_dict(mean)
    assert model.src_embed.weight is model.out_proj.weight  # tying survives loading


def test_label_smoothed_loss_matches_its_formula():
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 9)
    labels = torch.tensor([[4, 5, 6, PAD_ID, PAD_ID], [7, 8, 4, 5, 6]])
    eps = 0.1
    log_p = F.log_softmax(logits, dim=-1)
    keep = labels != PAD_ID
    nll = -log_p.gather(-1, labels[..., None])[..., 0]
    uniform = -log_p.mean(-1)  # cross-entropy against the uniform distribution over all 9 entries
    expected = ((1 - eps) * nll + eps * uniform)[keep].sum()
    assert token_loss_sum(logits, labels, eps) == pytest.approx(float(expected), rel=1e-6)
    assert token_loss_sum(logits, labels) == pytest.approx(float(nll[keep].sum()), rel=1e-6)
    with pytest.raises(ValueError, match="disagree"):
        token_loss_sum(logits, labels[:, :4])


def test_progress_bar_goes_to_the_given_file(capsys):
    out = io.StringIO()
    Trainer(new_model(), quiet(max_steps=4, progress=True, progress_file=out)).fit(
        TokenBatches(copy_pairs(), 100, seed=0))
    assert "4/4" in out.getvalue() and "loss=" in out.getvalue() and "tok/s=" in out.getvalue()
    assert capsys.readouterr().err == ""


def test_bf16_autocast_and_fused_attention_the_cuda_path_run_on_cpu_too():
    stream = TokenBatches(copy_pairs(), 100, seed=0)
    plain = Trainer(new_model(), quiet(max_steps=3))
    fast = Trainer(new_model(), quiet(max_steps=3, bf16=True, fused_attention=True))
    assert all(m.fused for m in fast.model.modules() if isinstance(m, MultiHeadAttention))
    assert not any(m.fused for m in plain.model.modules() if isinstance(m, MultiHeadAttention))
    a, b = plain.fit(stream), fast.fit(stream)
    assert all(math.isfinite(h["loss"]) for h in b)
    assert b[0]["loss"] == pytest.approx(a[0]["loss"], rel=0.02)  # bf16 rounding, same model


def test_the_compiled_step_equals_the_eager_one(monkeypatch):
    """torch.compile (TrainConfig.compile, aiayn-train --compile), traced on the CPU with the "aot_eager" back end (the same graph
    capture, forward and backward, without inductor's code generation): one graph for batches
    of every shape, no graph break (the embedding's id check moves to the host), the same
    losses as the eager model, and the same error for an id outside the vocabulary."""
    torch._dynamo.reset()
    monkeypatch.setattr(trainer_module, "COMPILE_BACKEND", "aot_eager")
    # Batches of several shapes; in the first, source and decoder input are equally long (as
    # duck sizing would remember), in the others not.
    g = torch.Generator().manual_seed(0)
    stream = [Batch(torch.randint(4, VOCAB, (b, s), generator=g), torch.randint(4, VOCAB, (b, t), generator=g))
              for b, s, t in ((6, 7, 8), (5, 9, 7), (8, 5, 9), (4, 11, 12))]
    dropout_off = dict(max_steps=4, fused_attention=True)
    eager = Trainer(new_model_without_dropout(), quiet(**dropout_off, compile=False))
    compiled = Trainer(new_model_without_dropout(), quiet(**dropout_off, compile=True))
    assert compiled.compiled and not eager.compiled
    counters = torch._dynamo.utils.counters
    counters.clear()
    a, b = eager.fit(stream), compiled.fit(stream)
    assert [h["loss"] for h in b] == pytest.approx([h["loss"] for h in a], rel=1e-5)
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1
    bad = stream[0]
    bad.src[0, 0] = VOCAB
    with pytest.raises(ValueError, match=r"batch.src .* outside the vocabulary \[0, 13\]"):
        compiled.train_step(bad)
    torch._dynamo.reset()


def new_model_without_dropout(seed=0):  # one layer: tracing costs seconds per layer on a CPU
    torch.manual_seed(seed)
    return Transformer(replace(CONFIG, dropout=0.0, num_layers=1))


def test_the_gpu_configuration_builds_and_takes_a_step():
    run = get_config("multi30k-gpu")
    config = run.model_config(run.vocab_size)
    assert (config.d_model, config.num_layers, config.dropout, config.share_embeddings) == (512, 6, 0.3, True)
    torch.manual_seed(0)
    model = Transformer(config)
    assert 40e6 < sum(p.numel() for p in model.parameters()) < 50e6
    pairs = [(source_ids([5, 6, 7]), target_ids([8, 9])), (source_ids([10, 11]), target_ids([12, 13, 14]))]
    trainer = Trainer(model, run.train_config("cpu", max_steps=1, progress=False))
    assert trainer.config.warmup_steps == 2000 and trainer.config.label_smoothing == 0.1
    assert math.isfinite(trainer.fit(TokenBatches(pairs, 100))[0]["loss"])


def test_config_errors():
    with pytest.raises(ValueError, match="max_steps must be a positive int"):
        TrainConfig(max_steps=0)
    with pytest.raises(ValueError, match="label_smoothing"):
        TrainConfig(max_steps=1, label_smoothing=1.0)
    with pytest.raises(ValueError, match="unknown configuration"):
        get_config("wmt14-big")
    with pytest.raises(ValueError, match="training batches are empty"):
        Trainer(new_model(), quiet(max_steps=2)).fit([])


@pytest.mark.parametrize("device, bf16, native, expected", [
    ("cpu", None, False, "float32"), ("cpu", None, True, "float32"), ("cpu", True, False, "bf16"),
    ("cuda", None, True, "bf16"), ("cuda", None, False, "fp16"),  # a T4 (Colab's free GPU): no bf16
    ("cuda", False, True, "float32"), ("cuda", True, False, "bf16")])
def test_precision_choice(device, bf16, native, expected):
    assert trainer_module.choose_precision(device, bf16, native) == expected
    assert not trainer_module.native_bf16(torch.device("cpu"))


@pytest.mark.parametrize("clip", [None, 0.5])
def test_a_cpu_run_is_the_plain_float32_recipe_bit_for_bit(clip):
    """The gradient scaler (off unless fp16) must leave a CPU run untouched: the Trainer's losses
    and weights equal, exactly, those of the recipe written out by hand: forward, smoothed loss
    per target token, backward, [clipping,] Adam, schedule."""
    stream = TokenBatches(copy_pairs(), 100, seed=0)
    trainer = Trainer(new_model(), quiet(max_steps=9, clip_grad_norm=clip))
    losses = [h["loss"] for h in trainer.fit(stream)]
    model = new_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    scheduler = transformer_schedule(optimizer, CONFIG.d_model, 10, 2.0)
    torch.manual_seed(0)  # the Trainer seeds dropout with config.seed
    by_hand = []
    for epoch in range(3):
        stream.set_epoch(epoch)
        for batch in stream:
            if len(by_hand) == 9:
                break
            loss_sum = token_loss_sum(model(batch.src, batch.decoder_input), batch.labels, 0.1)
            (loss_sum * (1 / batch.num_target_tokens)).backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            by_hand.append(float(loss_sum.detach()) / batch.num_target_tokens)
    assert losses == by_hand
    assert all(torch.equal(p, q) for p, q in zip(trainer.model.parameters(), model.parameters()))


def test_fp16_scales_the_loss_and_a_resumed_run_keeps_the_scale(tmp_path, monkeypatch):
    """The fp16 path (a GPU without bf16), run on CPU: autocast to float16 and a live
    GradScaler, whose state the checkpoint carries."""
    monkeypatch.setattr(trainer_module, "choose_precision", lambda *args: "fp16")
    stream = TokenBatches(copy_pairs(), 100, seed=0)
    trainer = Trainer(new_model(), quiet(max_steps=6, checkpoint_dir=tmp_path, checkpoint_every=3))
    assert trainer.scaler.is_enabled() and trainer.autocast_dtype == torch.float16
    history = trainer.fit(stream)
    reference = Trainer(new_model(), quiet(max_steps=1)).fit(stream)
    assert all(math.isfinite(h["loss"]) for h in history)
    assert history[0]["loss"] == pytest.approx(reference[0]["loss"], rel=0.02)  # fp16 rounding only
    state = load_checkpoint(tmp_path / "step_0000006.pt")
    assert state["scaler"]["scale"] == trainer.scaler.get_scale() <= 65536.0
    resumed = Trainer.load(tmp_path / "step_0000003.pt", new_model(), max_steps=6)
    assert resumed.scaler.get_scale() == load_checkpoint(tmp_path / "step_0000003.pt")["scaler"]["scale"]
    assert [h["loss"] for h in resumed.fit(stream)] == [h["loss"] for h in history]  # exactly


def test_float32_checkpoints_carry_no_scaler(tmp_path):
    Trainer(new_model(), quiet(max_steps=2, checkpoint_dir=tmp_path, checkpoint_every=2)).fit(
        TokenBatches(copy_pairs(), 100, seed=0))
    assert "scaler" not in load_checkpoint(tmp_path / "step_0000002.pt")
