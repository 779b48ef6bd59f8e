"""Training throughput: tokens per second and model-FLOPs utilisation (MFU) of full training
steps (forward, backward, Adam update) of a named configuration, with our explicit attention
and with the fused ``F.scaled_dot_product_attention``, measured in the same run.

    python benchmarks/bench_training.py                         # multi30k-cpu on CPU, -gpu on CUDA
    python benchmarks/bench_training.py --config multi30k-gpu --steps 20

Batches are synthetic but shaped like Multi30k under the configuration's token budget:
source 22 and target 24 positions per sentence pair (the corpus's mean lengths in subwords
plus EOS / BOS, padding included), as many pairs as the budget allows. Throughput counts
target tokens (the unit of the paper's batch size), like the trainer's progress bar.

MFU = (model FLOPs per step / seconds per step) / peak. Model FLOPs are counted from the
shapes (every matrix product, attention's included, forward x 3 for forward + backward;
the causal half of decoder self-attention counted in full, as the explicit path computes
it). The peak is the GPU's dense bf16 rate; on a CPU there is no standard figure, so MFU is
printed only when ``--peak-tflops`` states one.
"""

import argparse
import statistics
import time

import torch

from machine import describe
from aiayn.data.batch import Batch
from aiayn.pt.model import Transformer
from aiayn.train.configs import CONFIGS
from aiayn.train.trainer import Trainer

SRC_LEN, TGT_LEN = 22, 24
# Dense bf16 tensor-core peaks from the vendors' data sheets (TFLOP/s, without sparsity).
PEAK_BF16_TFLOPS = {"H100 SXM": 989.0, "H100 80GB HBM3": 989.0, "H100 PCIe": 756.0, "H100 NVL": 835.0,
                    "H200": 989.0, "A100": 312.0, "L4": 121.0, "L40S": 362.0, "A10": 125.0}


def training_flops(config, batch: int, src_len: int, tgt_len: int) -> float:
    """FLOPs of one training step (3 x forward) from the shapes; 2 per multiply-add."""
    d, f, B, S, T = config.d_model, config.d_ff, batch, src_len, tgt_len
    encoder = 2 * B * S * (4 * d * d + 2 * d * f) + 2 * 2 * B * S * S * d
    decoder = (2 * B * T * (4 * d * d + 2 * d * d + 2 * d * f) + 2 * B * S * 2 * d * d  # projections, FFN
               + 2 * 2 * B * T * T * d + 2 * 2 * B * T * S * d)                      # self, cross scores
    output = 2 * B * T * d * config.tgt_vocab_size
    return 3.0 * (config.num_layers * (encoder + decoder) + output)


def peak_tflops(override):
    if override:
        return override
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name()
        return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)
    return None


def measure(run, device, fused: bool, steps: int, warmup: int) -> float:
    """Seconds per training step, median over ``steps`` after ``warmup`` untimed ones."""
    torch.manual_seed(0)
    model = Transformer(run.model_config(run.vocab_size))
    trainer = Trainer(model, run.train_config(device, max_steps=10**9, progress=False,
                                              fused_attention=fused, checkpoint_every=None))
    pairs = run.max_tokens // TGT_LEN
    batch = Batch(torch.randint(4, run.vocab_size, (pairs, SRC_LEN)),
                  torch.randint(4, run.vocab_size, (pairs, TGT_LEN)))
    times = []
    for i in range(warmup + steps):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        trainer.train_step(batch)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times[warmup:])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS))
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--peak-tflops", type=float, help="the device's peak, for MFU (needed on CPU)")
    args = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    run = CONFIGS[args.config or ("multi30k-gpu" if device == "cuda" else "multi30k-cpu")]
    pairs = run.max_tokens // TGT_LEN
    flops = training_flops(run.model_config(run.vocab_size), pairs, SRC_LEN, TGT_LEN)
    peak = peak_tflops(args.peak_tflops)
    print(f"machine: {describe()}")
    print(f"config {run.name}: d_model {run.d_model}, {run.num_layers}+{run.num_layers} layers, vocabulary "
          f"{run.vocab_size}; batch {pairs} pairs x ({SRC_LEN} src, {TGT_LEN} tgt); "
          f"{flops / 1e12:.3g} TFLOP per step; bf16 autocast: {device == 'cuda'}")
    print(f"peak: {f'{peak:g} TFLOP/s' if peak else 'n/a (pass --peak-tflops)'}")
    baseline = None
    for fused in (False, True):
        seconds = measure(run, device, fused, args.steps, args.warmup)
        baseline = baseline or seconds
        achieved = flops / seconds / 1e12
        mfu = f"{100 * achieved / peak:.1f}%" if peak else "n/a"
        print(f"{'fused' if fused else 'explicit':>8} attention: {seconds * 1e3:8.1f} ms/step  "
              f"{pairs * (TGT_LEN - 1) / seconds:10,.0f} target tokens/s  {achieved:8.3g} TFLOP/s  "
              f"MFU {mfu}  speed-up x{baseline / seconds:.2f}")


if __name__ == "__main__":
    main()
