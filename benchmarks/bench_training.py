"""Training throughput: tokens per second and model-FLOPs utilisation (MFU) of full training
steps (forward, backward, Adam update) of a named configuration, with our explicit attention,
with the fused ``F.scaled_dot_product_attention``, and with ``torch.nn.Transformer`` of the
same shape in place of our encoder and decoder, all measured in the same run; with ``--compile``
also both compiled (``torch.compile``), each compared with its like. One batch shape is timed
here, so a compiled model compiles once; over a real run's many shapes, and with the compile
time counted, see benchmarks/bench_compile.py.

    python benchmarks/bench_training.py                         # multi30k-cpu on CPU, -gpu on CUDA
    python benchmarks/bench_training.py --config multi30k-gpu --steps 20
    python benchmarks/bench_training.py --config multi30k-small --json results/gpu/bench_small.json
    python benchmarks/bench_training.py --config multi30k-small --profile runs/profile   # where the time goes
    python benchmarks/bench_training.py --config multi30k-small --pairs 2 --steps 40     # the host's share
    python benchmarks/bench_training.py --config multi30k-small --pairs 2 --bf16 --profile runs/profile  # autocast

The ``torch.nn.Transformer`` model keeps our embeddings, positions, dropout, tied output layer,
loss, Adam and autocast (the same ``Trainer.train_step``), so the ratio measures the encoder
and decoder stacks alone. Its final LayerNorms are removed: the paper's Post-LN stack has none.

Batches are synthetic but shaped like Multi30k under the configuration's token budget:
source 22 and target 24 positions per sentence pair (the corpus's mean lengths in subwords
plus EOS / BOS, padding included), as many pairs as the budget allows. Throughput counts
target tokens (the unit of the paper's batch size), like the trainer's progress bar.

``--pairs 2`` shrinks the batch until the arithmetic is small and a step's time is mostly the
host's: Python, PyTorch's dispatcher, autograd, one call per operator. On a CPU that is a proxy
for a GPU on which the host, launching kernels one by one, sets the pace (an H100 on these small
models: results/gpu/STATUS.md); it cannot show what launching a CUDA kernel costs.

MFU = (model FLOPs per step / seconds per step) / peak, FLOPs counted from the shapes
(``aiayn.experiments.mfu``). The peak is the GPU's data-sheet dense bf16 rate; on a CPU there
is no standard figure, so MFU is printed only when ``--peak-tflops`` states one.
"""

import argparse
import statistics
import time
from pathlib import Path

import torch
from torch import nn
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity

from machine import describe
from aiayn.data.batch import Batch
from aiayn.experiments.mfu import peak_bf16_tflops, training_flops
from aiayn.experiments.record import Recorder
from aiayn.pt.model import Transformer
from aiayn.train.configs import CONFIGS
from aiayn.train.trainer import Trainer, choose_precision, native_bf16

SRC_LEN, TGT_LEN = 22, 24
PROFILED_STEPS = 5


class TorchTransformer(nn.Module):
    """Our model with ``torch.nn.Transformer`` as its encoder-decoder stack (same shape)."""

    def __init__(self, config):
        super().__init__()
        ours = Transformer(config)
        self.config = config  # the Trainer reads d_model (schedule) and checkpoints it
        self.src_embed, self.tgt_embed, self.pos = ours.src_embed, ours.tgt_embed, ours.pos
        self.dropout, self.out_proj = ours.dropout, ours.out_proj
        self.stack = nn.Transformer(config.d_model, config.num_heads, config.num_layers, config.num_layers,
                                    config.d_ff, config.dropout, activation="relu", batch_first=True,
                                    norm_first=config.norm_first)
        if not config.norm_first:
            self.stack.encoder.norm = self.stack.decoder.norm = None

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_pad, tgt_pad = src == self.config.pad_id, tgt == self.config.pad_id  # True: ignore
        causal = torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool, device=tgt.device).triu(1)
        hidden = self.stack(self.dropout(self.pos(self.src_embed(src))), self.dropout(self.pos(self.tgt_embed(tgt))),
                            tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                            memory_key_padding_mask=src_pad, tgt_is_causal=True)
        return self.out_proj(hidden)


def build(run, device, model_class, fused: bool, compiled: bool, pairs: int | None = None,
          bf16: bool | None = None):
    """A Trainer of ``model_class`` for ``run`` and one synthetic batch of ``pairs`` sentence
    pairs, by default as many as the run's token budget allows."""
    torch.manual_seed(0)
    model = model_class(run.model_config(run.vocab_size))
    trainer = Trainer(model, run.train_config(device, max_steps=10**9, progress=False, fused_attention=fused,
                                              bf16=bf16, compile=compiled, checkpoint_every=None))
    if pairs and device == "cpu":
        # As on a GPU, Adam updates every parameter in one fused kernel: the trainer's CPU default,
        # a Python loop over the parameters, would make a host-bound step mostly optimizer, and
        # our model (q, k and v projected apart) has more parameter tensors than torch.nn.Transformer
        # (169 to 121 in multi30k-small).
        for group in trainer.optimizer.param_groups:
            group["fused"] = True
    pairs = pairs or run.max_tokens // TGT_LEN
    batch = Batch(torch.randint(4, run.vocab_size, (pairs, SRC_LEN)),
                  torch.randint(4, run.vocab_size, (pairs, TGT_LEN)))
    return trainer, batch


def timed_step(trainer, batch, device) -> float:
    """Seconds of one training step, the GPU's queue emptied before and after."""
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    trainer.train_step(batch)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def measure(built: dict, device, steps: int, warmup: int) -> dict:
    """Seconds per training step of each ``label: (trainer, batch)``, the median over ``steps``
    after ``warmup`` untimed ones (the first of which compiles, when the trainer compiles).
    The variants take turns, one step each per round: a machine that slows down for a while
    (another tenant, the clock) then slows all of them alike instead of the one running then."""
    for trainer, batch in built.values():
        for _ in range(warmup):
            timed_step(trainer, batch, device)
    times = {label: [] for label in built}
    for _ in range(steps):
        for label, (trainer, batch) in built.items():
            times[label].append(timed_step(trainer, batch, device))
    return {label: statistics.median(t) for label, t in times.items()}


def profile(trainer, batch, device, steps: int) -> tuple[dict, str]:
    """Where a step's time goes, from ``torch.profiler`` over ``steps`` (warm) steps: per step,
    the PyTorch operators called (nested ones included), and on a GPU the kernels launched and
    the time the GPU spent in them. GPU time well below the step time means the host, issuing
    kernels one by one, sets the pace; then fewer operators make a faster step. Also returns the
    profiler's table of the operators that took the most time."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            trainer.train_step(batch)
        if device == "cuda":
            torch.cuda.synchronize()
    events = prof.key_averages()
    on_gpu = [e for e in events if e.device_type == DeviceType.CUDA]
    summary = {"profiled_steps": steps,
               "operators_per_step": sum(e.count for e in events if e.key.startswith("aten::")) / steps}
    if device == "cuda":
        summary |= {"kernels_per_step": sum(e.count for e in on_gpu) / steps,
                    "gpu_busy_ms_per_step": sum(e.self_device_time_total for e in on_gpu) / steps / 1e3}
    sort = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    return summary, events.table(sort_by=sort, row_limit=30)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS))
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--pairs", type=int, help="sentence pairs per batch (default: the configuration's token "
                                              "budget); 2 leaves mostly the host's work")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when there is one")
    p.add_argument("--peak-tflops", type=float, help="the device's peak, for MFU (needed on CPU)")
    p.add_argument("--compile", action="store_true", help="also time compiled models (torch.compile)")
    p.add_argument("--bf16", action="store_true", help="autocast in bf16 on a CPU too (the default on a GPU): with "
                   "--pairs 2, the host proxy then makes the casts a GPU run makes")
    p.add_argument("--json", help="also write the measurements to this results file")
    p.add_argument("--profile", metavar="DIR",
                   help="also profile a few steps of each eager variant (torch.profiler): per step, operators, "
                        "and on a GPU kernels and GPU-busy time; the profiler's tables go to DIR")
    args = p.parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device is visible to PyTorch")
    rec = Recorder()
    run = CONFIGS[args.config or ("multi30k-gpu" if device == "cuda" else "multi30k-cpu")]
    if args.pairs is not None and args.pairs < 1:
        p.error(f"--pairs must be at least 1, got {args.pairs}")
    pairs = args.pairs or run.max_tokens // TGT_LEN
    flops = training_flops(run.model_config(run.vocab_size), pairs, SRC_LEN, TGT_LEN)
    peak = args.peak_tflops or (peak_bf16_tflops() if device == "cuda" else None)
    bf16 = True if args.bf16 else None  # None: the Trainer's choice (float32 on a CPU)
    precision = choose_precision(device, bf16, native_bf16(torch.device(device)))
    print(f"machine: {describe()}")
    print(f"config {run.name}: d_model {run.d_model}, {run.num_layers}+{run.num_layers} layers, vocabulary "
          f"{run.vocab_size}; batch {pairs} pairs x ({SRC_LEN} src, {TGT_LEN} tgt); "
          f"{flops / 1e12:.3g} TFLOP per step; precision: {precision}")
    print(f"peak: {f'{peak:g} TFLOP/s' if peak else 'n/a (pass --peak-tflops)'}")
    variants = [("explicit", Transformer, False, False), ("fused", Transformer, True, False),
                ("torch.nn.Transformer", TorchTransformer, None, False)]
    if args.compile:
        variants += [("fused, compiled", Transformer, True, True),
                     ("torch.nn.Transformer, compiled", TorchTransformer, None, True)]
    built = {label: build(run, device, model_class, fused, compiled, pairs, bf16)
             for label, model_class, fused, compiled in variants}
    rows = {}
    for label, seconds in measure(built, device, args.steps, args.warmup).items():
        achieved = flops / seconds / 1e12
        rows[label] = {"seconds_per_step": seconds, "target_tokens_per_s": pairs * (TGT_LEN - 1) / seconds,
                       "tflops": achieved, "mfu": achieved / peak if peak else None}
    for label, model_class, fused, compiled in variants:
        if args.profile and not compiled:
            rows[label]["profile"], table = profile(*built[label], device, PROFILED_STEPS)
            folder = Path(args.profile)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{run.name}_{label.replace(' ', '_')}.txt").write_text(table, encoding="utf8")
    for label, row in rows.items():  # compiled against compiled, eager against eager
        peer = "torch.nn.Transformer, compiled" if label.endswith("compiled") else "torch.nn.Transformer"
        row["speed_vs_torch_nn"] = rows[peer]["seconds_per_step"] / row["seconds_per_step"]
        mfu = f"{100 * row['mfu']:.1f}%" if row["mfu"] else "n/a"
        print(f"{label:>31}: {row['seconds_per_step'] * 1e3:8.1f} ms/step  {row['target_tokens_per_s']:10,.0f} "
              f"target tokens/s  {row['tflops']:8.3g} TFLOP/s  MFU {mfu}  x{row['speed_vs_torch_nn']:.2f} "
              "of torch.nn.Transformer's tokens/s")
        if "profile" in row:
            print(f"{'':>33}per step: " + ", ".join(f"{k.removesuffix('_per_step').replace('_', ' ')} {v:,.1f}"
                                                    for k, v in row["profile"].items() if k.endswith("_per_step")))
    values = {"config": run.name, "device": device, "precision": precision, "pairs": pairs,
              "src_len": SRC_LEN, "tgt_len": TGT_LEN, "flops_per_step": flops, "peak_tflops": peak,
              "steps": args.steps, "warmup": args.warmup, "rows": rows}
    if args.json:
        rec.write(args.json, values)
        print(f"written: {args.json}")
    return values


if __name__ == "__main__":
    main()
