"""Training in NumPy: the schedule and Adam equal PyTorch's, and a NumPy model and a PyTorch
model started from the same weights and fed the same batches (float64, dropout 0) take the
same steps: the same loss at each of 50 updates, and the same weights at the end."""

import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.data.copy_task import CopyTask
from aiayn.data.specials import PAD_ID
from aiayn.np import nn as nnn
from aiayn.np.train import Adam, train_step, transformer_lr
from aiayn.pt.model import Transformer as TorchTransformer
from aiayn.train.schedule import transformer_lr as torch_transformer_lr, transformer_schedule
from conftest import record_difference


def test_schedule_is_the_pytorch_one():
    for d_model, warmup in ((512, 4000), (16, 30)):
        for step in (1, 2, warmup - 1, warmup, warmup + 1, 10 * warmup):
            assert transformer_lr(step, d_model, warmup, 0.5) == torch_transformer_lr(step, d_model, warmup, 0.5)
    with pytest.raises(ValueError, match="step counts from 1"):
        transformer_lr(0, 512, 4000)


def test_adam_equals_torch_adam_on_the_same_gradients():
    rng = np.random.default_rng(0)
    model = nnn.Linear(4, 3)
    param = torch.tensor(model.weight.copy(), requires_grad=True)
    theirs = torch.optim.Adam([param], lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    ours = Adam(model)
    for step in range(1, 21):
        grad = rng.standard_normal((3, 4)) * 10.0 ** rng.integers(-6, 2)
        lr = transformer_lr(step, 16, 5)
        for group in theirs.param_groups:
            group["lr"] = lr
        param.grad = torch.from_numpy(grad.copy())
        theirs.step()
        ours.step({"weight": grad, "bias": np.zeros(3)}, lr)
    assert np.abs(model.weight - param.detach().numpy()).max() <= 1e-13


def test_adam_updates_a_tied_weight_once():
    cfg = TransformerConfig(9, 9, d_model=8, num_heads=2, num_layers=1, d_ff=8, share_embeddings=True)
    optimizer = Adam(numpy_model_from_torch(TorchTransformer(cfg)))
    assert "src_embed.weight" in optimizer.params
    assert "tgt_embed.weight" not in optimizer.params and "out_proj.weight" not in optimizer.params


LOCKSTEP = {
    "post_ln": dict(),
    "pre_ln_shared_learned": dict(norm_first=True, share_embeddings=True, positional="learned"),
}


@pytest.mark.parametrize("variant", LOCKSTEP)
def test_numpy_and_pytorch_train_in_lock_step(variant):
    cfg = TransformerConfig(src_vocab_size=14, tgt_vocab_size=14, d_model=16, num_heads=2,
                            num_layers=2, d_ff=32, dropout=0.0, max_len=32, **LOCKSTEP[variant])
    torch.manual_seed(0)
    pt_model = TorchTransformer(cfg).double()
    np_model = numpy_model_from_torch(pt_model)
    warmup, smoothing = 25, 0.1
    pt_optimizer = torch.optim.Adam(pt_model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = transformer_schedule(pt_optimizer, cfg.d_model, warmup)
    np_optimizer = Adam(np_model)
    pt_model.train()
    task = CopyTask(vocab_size=14, min_len=1, max_len=6)
    worst, steps = 0.0, 0
    for step, batch in enumerate(task.batches(batch_size=8, num_batches=50, seed=0), start=1):
        # PyTorch: F.cross_entropy in float64 (the Trainer's token_loss_sum computes in float32).
        logits = pt_model(batch.src, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.labels.flatten(), ignore_index=PAD_ID,
                               label_smoothing=smoothing, reduction="sum") / batch.num_target_tokens
        pt_optimizer.zero_grad()
        loss.backward()
        pt_optimizer.step()
        schedule.step()
        np_loss = train_step(np_model, np_optimizer, batch.src.numpy(), batch.tgt.numpy(),
                             transformer_lr(step, cfg.d_model, warmup), smoothing)
        worst, steps = max(worst, abs(np_loss - loss.item())), step
    assert steps == 50
    record_difference("lockstep_loss", worst)
    assert worst <= 1e-8, f"losses differ by up to {worst:.2e}"
    state = np_model.state_dict()
    weights = max(float(np.abs(state[k] - v.numpy()).max()) for k, v in pt_model.state_dict().items())
    record_difference("lockstep_final_weights", weights)
    # Rounding differences (1e-16) grow over the updates: Adam divides each gradient by its own
    # running scale, so a small gradient entry's relative rounding error becomes an absolute one.
    assert weights <= 1e-8, f"final weights differ by up to {weights:.2e}"


def test_training_in_numpy_imports_no_torch():
    code = (
        "import sys, numpy as np\n"
        "from aiayn.config import TransformerConfig\n"
        "from aiayn.np.model import Transformer\n"
        "from aiayn.np.train import Adam, train_step, transformer_lr\n"
        "model = Transformer(TransformerConfig(9, 9, d_model=8, num_heads=2, num_layers=1, d_ff=8))\n"
        "ids = np.array([[1, 5, 6, 2], [1, 7, 2, 0]])\n"
        "loss = train_step(model, Adam(model), ids, ids, transformer_lr(1, 8, 10))\n"
        "assert np.isfinite(loss)\n"
        "print('torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_train_step_rejects_a_batch_without_target_tokens():
    cfg = TransformerConfig(9, 9, d_model=8, num_heads=2, num_layers=1, d_ff=8)
    model = numpy_model_from_torch(TorchTransformer(cfg))
    ids = np.array([[1, 0, 0]])
    with pytest.raises(ValueError, match="no target token"):
        train_step(model, Adam(model), ids, ids, 1e-3)
