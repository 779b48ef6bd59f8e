"""Training as in §5: Adam (beta1 0.9, beta2 0.98, eps 1e-9), the warm-up / inverse-square-root
learning rate of §5.3, label smoothing 0.1 (§5.4), checkpoints to average (§6.1).

    trainer = Trainer(model, TrainConfig(max_steps=1000, warmup_steps=400))
    history = trainer.fit(batches, val_batches)     # Batches; re-iterated each epoch
    trainer.save("run/last.pt")
    trainer = Trainer.load("run/last.pt", model, max_steps=2000)   # resumes exactly

Residual and embedding dropout live in the model (``TransformerConfig.dropout``). On CUDA the
forward pass runs under autocast and attention uses the fused kernel of
``F.scaled_dot_product_attention``: in bf16 where the GPU has it natively (Ampere and later),
otherwise in fp16 with a gradient scaler (a T4, Colab's free GPU, has no bf16), and Adam
updates all parameters in one fused kernel. ``TrainConfig.compile`` also compiles the training
model (``torch.compile``). On CPU everything stays float32 and explicit, and the scaler is a
no-op (the same operations run).
"""

import sys
import time
from dataclasses import asdict

import torch
import torch.fx.experimental._config as fx_config
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from .._checks import check_tokens
from ..pt.attention import MultiHeadAttention
from . import distributed
from .checkpoint import checkpoint_name, checkpoint_paths, load_checkpoint, save_checkpoint
from .loss import token_loss_sum
from .schedule import transformer_schedule
from .train_config import TrainConfig

__all__ = ["TrainConfig", "Trainer", "choose_precision"]

AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
COMPILE_BACKEND = "inductor"  # torch.compile's default; the CPU tests trace with "aot_eager"


def choose_precision(device_type: str, bf16: bool | None, bf16_supported: bool) -> str:
    """The precision to train in, "bf16", "fp16" or "float32". ``TrainConfig.bf16`` True or
    False decides; None picks float32 on CPU and, on CUDA, bf16 where ``bf16_supported`` and
    fp16 otherwise. fp16 is more precise than bf16, but its range ends at 65,504 and its
    smallest normal number is 6e-5: small gradients underflow to zero unless the loss is
    scaled up first (``torch.amp.GradScaler``); bf16 keeps float32's range, needs no scaling."""
    if bf16 is not None:
        return "bf16" if bf16 else "float32"
    if device_type != "cuda":
        return "float32"
    return "bf16" if bf16_supported else "fp16"


def native_bf16(device: torch.device) -> bool:
    """Whether the GPU computes in bf16 natively; ``is_bf16_supported()`` alone also says yes to
    emulation (e.g. on a T4), which is slower than fp16."""
    return device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False)


class Trainer:
    """Adam + the §5.3 schedule around a Transformer; ``fit`` runs the loop, ``save``/``load``
    checkpoint it. The state needed to resume exactly: weights, optimizer moments, schedule,
    step, data position (epoch, batches done in it) and the random-number generators."""

    def __init__(self, model, config: TrainConfig, metadata: dict | None = None):
        """Moves ``model`` to ``config.device``, builds Adam and the schedule. ``metadata``
        (plain values, e.g. the tokenizer as JSON text) is stored in every checkpoint."""
        self.config, self.metadata = config, dict(metadata or {})
        self.rank, self.world_size = distributed.init_from_env(config.device)
        self.device = torch.device(distributed.local_device(config.device))
        on_cuda = self.device.type == "cuda"
        if on_cuda and self.device.index is not None:  # cuda:LOCAL_RANK under torchrun; plain "cuda"
            torch.cuda.set_device(self.device)            # has no index, which set_device rejects
        self.model = model.to(self.device)
        self.precision = choose_precision(self.device.type, config.bf16, native_bf16(self.device))
        self.bf16 = self.precision == "bf16"
        self.autocast_dtype = AUTOCAST_DTYPES.get(self.precision, torch.bfloat16)
        # Disabled (everything but fp16), the scaler passes the loss and the step through.
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.precision == "fp16")
        fused = on_cuda if config.fused_attention is None else config.fused_attention
        for module in model.modules():
            if isinstance(module, MultiHeadAttention):
                module.fused = fused
        self.train_model = model if self.world_size == 1 else DistributedDataParallel(
            model, device_ids=[self.device] if on_cuda else None)
        # A small model's step on a GPU is thousands of tiny kernels, each launched from Python:
        # the GPU waits for the host. torch.compile fuses them; dynamic=True compiles once for
        # all batch shapes (B and T vary from batch to batch). self.model stays uncompiled, so
        # checkpoints, evaluation and decoding are unchanged.
        self.compiled = config.compile
        if self.compiled:
            # "Duck sizing" gives two sizes one symbol when the first batch happens to have them
            # equal (source and target length, say) and compiles again, ~40 s on an H100's host,
            # at the first batch where they differ: five compilations in the first 25 updates
            # of multi30k-small (2026-11-26). Every size its own symbol: one compilation.
            fx_config.use_duck_shape = False
            self.train_model = torch.compile(self.train_model, dynamic=True, backend=COMPILE_BACKEND)
        # fused: Adam's update of all parameters in one kernel (CUDA only).
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=config.adam_betas,
                                          eps=config.adam_eps, fused=on_cuda or None)
        self.scheduler = transformer_schedule(self.optimizer, model.config.d_model,
                                              config.warmup_steps, config.lr_factor)
        self.step = self.epoch = self.batch_in_epoch = 0  # the data position, for resuming
        self.history: list[dict] = []
        self._loss_sum, self._tokens = 0.0, 0  # since the last history entry
        self._timer, self._timed_tokens = time.perf_counter(), 0
        torch.manual_seed(config.seed)  # dropout masks

    def fit(self, batches, val_batches=None) -> list[dict]:
        """Trains until ``config.max_steps`` updates. One update per Batch; ``batches`` is
        iterated again for each epoch (its ``set_epoch(e)`` is called first when it has one).
        Returns the history: {"step", "loss", "lr", "tokens_per_s"[, "val_loss"]} dicts."""
        cfg = self.config
        bar = tqdm(total=cfg.max_steps, initial=self.step, desc="train", unit="step",
                   file=cfg.progress_file or sys.stderr, disable=not cfg.progress or self.rank != 0)
        self._timer, self._timed_tokens = time.perf_counter(), 0
        try:
            while self.step < cfg.max_steps:
                if hasattr(batches, "set_epoch"):
                    batches.set_epoch(self.epoch)
                seen = 0
                for i, batch in enumerate(batches):
                    seen += 1
                    if i < self.batch_in_epoch:  # resuming: these were trained on already
                        continue
                    self.train_step(batch)
                    self.batch_in_epoch = i + 1
                    bar.update(1)
                    self._after_step(val_batches, bar)
                    if self.step >= cfg.max_steps:
                        break
                else:
                    if seen == 0:
                        raise ValueError("the training batches are empty")
                    self.epoch, self.batch_in_epoch = self.epoch + 1, 0
        finally:
            bar.close()
        return self.history

    def train_step(self, batch) -> None:
        """One update on one Batch (no logging, no checkpoint): what ``fit`` repeats."""
        cfg = self.config
        num_tokens = batch.num_target_tokens  # of the whole global batch
        if self.compiled:  # the compiled embedding skips its id check; check on the host instead
            self._check_ids(batch)
        local = distributed.shard(batch, self.rank, self.world_size).to(self.device)
        self.train_model.train()
        with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.precision != "float32"):
            logits = self.train_model(local.src, local.decoder_input)
        loss_sum = token_loss_sum(logits, local.labels, cfg.label_smoothing)
        # DDP averages gradients over processes: scaling by N / tokens makes that average the
        # gradient of the mean loss per target token of the global batch.
        self.scaler.scale(loss_sum * (self.world_size / num_tokens)).backward()
        if cfg.clip_grad_norm is not None:
            self.scaler.unscale_(self.optimizer)  # clip the true gradients, not the scaled ones
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_grad_norm)
        self._last_lr = self.scheduler.get_last_lr()[0]  # the rate this update used
        self.scaler.step(self.optimizer)  # under fp16, skipped when a gradient is inf or NaN
        self.scaler.update()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self._loss_sum = self._loss_sum + distributed.all_reduce_sum(loss_sum.detach())
        self._tokens += num_tokens
        self._timed_tokens += num_tokens
        self.step += 1

    def _after_step(self, val_batches, bar) -> None:
        cfg, step, last = self.config, self.step, self.step == self.config.max_steps
        evaluate = val_batches is not None and (last or bool(cfg.eval_every) and step % cfg.eval_every == 0)
        if evaluate or last or step % cfg.log_every == 0:
            seconds = time.perf_counter() - self._timer
            entry = {"step": step, "loss": float(self._loss_sum) / self._tokens, "lr": self._last_lr,
                     "tokens_per_s": self._timed_tokens / seconds}
            if evaluate:
                entry["val_loss"] = self.evaluate(val_batches)
            self.history.append(entry)
            shown = {"loss": f"{entry['loss']:.3f}"}
            if evaluate:
                shown["val_loss"] = f"{entry['val_loss']:.3f}"
            bar.set_postfix(shown | {"lr": f"{entry['lr']:.2e}", "tok/s": f"{entry['tokens_per_s']:,.0f}"})
            self._loss_sum, self._tokens, self._timed_tokens = 0.0, 0, 0
            self._timer = time.perf_counter()  # throughput excludes the validation pass
        if cfg.checkpoint_dir and (last or bool(cfg.checkpoint_every) and step % cfg.checkpoint_every == 0):
            self.save(f"{cfg.checkpoint_dir}/{checkpoint_name(step)}")
            if self.rank == 0:
                for old in checkpoint_paths(cfg.checkpoint_dir)[: -cfg.keep_last]:
                    old.unlink()

    def _check_ids(self, batch) -> None:
        c = self.model.config
        for name, ids, vocab_size in (("src", batch.src, c.src_vocab_size), ("tgt", batch.tgt, c.tgt_vocab_size)):
            lo, hi = torch.aminmax(ids)
            check_tokens(f"batch.{name}", ids, True, int(lo), int(hi), vocab_size)

    @torch.no_grad()
    def evaluate(self, batches) -> float:
        """Mean cross-entropy per target token, without label smoothing (so exp() of it is the
        perplexity), with dropout off."""
        self.model.eval()
        sums, tokens = [], 0
        for batch in batches:
            tokens += batch.num_target_tokens  # counted on the host, before the batch moves
            batch = batch.to(self.device)
            with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.precision != "float32"):
                logits = self.model(batch.src, batch.decoder_input)
            sums.append(token_loss_sum(logits, batch.labels))
        self.model.train()
        if not tokens:
            raise ValueError("the validation batches are empty (no target token to score)")
        total = 0.0
        for value in torch.stack(sums).tolist():  # one read from the device, not one per batch
            total += value  # in order, in double precision, as the loss sums always were added
        return total / tokens

    def state_dict(self) -> dict:
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else []
        state = {"format": "aiayn-trainer-1", "model": self.model.state_dict(),
                 "model_config": asdict(self.model.config), "optimizer": self.optimizer.state_dict(),
                 "scheduler": self.scheduler.state_dict(), "step": self.step, "epoch": self.epoch,
                 "batch_in_epoch": self.batch_in_epoch, "history": self.history,
                 "pending": {"loss_sum": float(self._loss_sum), "tokens": self._tokens},
                 "rng": {"torch": torch.get_rng_state(), "cuda": cuda},
                 "train_config": self.config.to_dict(), "metadata": self.metadata}
        if self.scaler.is_enabled():  # fp16: the loss scale reached so far
            state["scaler"] = self.scaler.state_dict()
        return state

    def save(self, path) -> None:
        """Atomically writes a checkpoint (process 0 only under data parallelism)."""
        if self.rank == 0:
            save_checkpoint(self.state_dict(), path)

    @classmethod
    def load(cls, path, model, **overrides) -> "Trainer":
        """Resumes from a checkpoint: ``model`` (built with the same TransformerConfig) gets the
        saved weights; optimizer, schedule, step, data position and RNG states are restored.
        ``overrides`` replace TrainConfig fields, e.g. ``max_steps=`` to train further."""
        ckpt = load_checkpoint(path)
        model.load_state_dict(ckpt["model"])
        trainer = cls(model, TrainConfig(**{**ckpt["train_config"], **overrides}), ckpt["metadata"])
        trainer.optimizer.load_state_dict(ckpt["optimizer"])
        trainer.scheduler.load_state_dict(ckpt["scheduler"])
        if "scaler" in ckpt and trainer.scaler.is_enabled():  # the loss scale reached under fp16
            trainer.scaler.load_state_dict(ckpt["scaler"])
        trainer.step, trainer.epoch = ckpt["step"], ckpt["epoch"]
        trainer.batch_in_epoch, trainer.history = ckpt["batch_in_epoch"], ckpt["history"]
        trainer._loss_sum, trainer._tokens = ckpt["pending"]["loss_sum"], ckpt["pending"]["tokens"]
        torch.set_rng_state(ckpt["rng"]["torch"])
        if ckpt["rng"]["cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(ckpt["rng"]["cuda"])
        return trainer
