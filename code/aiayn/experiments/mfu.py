"""Model-FLOPs utilisation (MFU): the FLOPs a training step needs, over its time, over a peak.

    flops = training_flops(model.config, batch=180, src_len=22, tgt_len=24)   # one step
    mfu = flops * steps / seconds / (peak_bf16_tflops(torch.cuda.get_device_name()) * 1e12)

The count is made from the shapes: every matrix product (attention's two included), forward
times 3 for forward + backward, 2 FLOPs per multiply-add; softmax, LayerNorm, dropout and Adam
are left out, as MFU conventionally does. The causal half of decoder self-attention is counted
in full, as the explicit attention computes it. ``torch.utils.flop_counter`` gives the same
number for a forward and backward pass of our model (tests/test_experiments_recipes.py).
"""

import time

import torch

# Dense bf16 tensor-core peaks from the vendors' data sheets (TFLOP/s, without sparsity).
PEAK_BF16_TFLOPS = {"H100 SXM": 989.0, "H100 80GB HBM3": 989.0, "H100 PCIe": 756.0, "H100 NVL": 835.0,
                    "H200": 989.0, "A100": 312.0, "L4": 121.0, "L40S": 362.0, "A10": 125.0, "T4": 65.0}


def training_flops(config, batch: int, src_len: int, tgt_len: int) -> float:
    """FLOPs of one training step (3 x forward) of a TransformerConfig on (batch, src_len)
    source and (batch, tgt_len) decoder-input ids."""
    d, f, B, S, T = config.d_model, config.d_ff, batch, src_len, tgt_len
    h, dk, dv = config.num_heads, config.d_k or d // config.num_heads, config.d_v or d // config.num_heads
    qkv, out = 2 * d * h * dk + d * h * dv, h * dv * d  # projections per position (multiply-adds)
    encoder = 2 * B * S * (qkv + out + 2 * d * f) + 2 * B * h * S * S * (dk + dv)
    decoder = (2 * B * T * (qkv + out + d * h * dk + out + 2 * d * f) + 2 * B * S * (d * h * dk + d * h * dv)
               + 2 * B * h * T * T * (dk + dv) + 2 * B * h * T * S * (dk + dv))
    output = 2 * B * T * d * config.tgt_vocab_size
    return 3.0 * (config.num_layers * (encoder + decoder) + output)


def epoch_flops(config, batches) -> float:
    """Mean FLOPs of a training step over one epoch of Batches (their padded shapes)."""
    total = count = 0
    for b in batches:
        total += training_flops(config, b.src.shape[0], b.src.shape[1], b.decoder_input.shape[1])
        count += 1
    return total / count


def peak_bf16_tflops(device_name: str | None = None) -> float | None:
    """The data-sheet bf16 peak of a GPU by name (default: the current CUDA device), or None."""
    if device_name is None:
        if not torch.cuda.is_available():
            return None
        device_name = torch.cuda.get_device_name()
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in device_name), None)


def measured_matmul_tflops(size: int = 8192, repeats: int = 20, device: str = "cuda") -> float:
    """The rate of a bf16 size^3 matrix product on ``device``: the practical ceiling (on the
    H100s used so far about 800 TFLOP/s, against a data-sheet 989)."""
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    sync()
    return 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e12
