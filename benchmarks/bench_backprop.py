"""A training step in NumPy (backpropagation by hand) against the same step in PyTorch (autograd),
on the CPU, with the same configuration, dtype, batch and number of threads: time and memory.

A step is forward, loss (label smoothing 0.1), backward and an Adam update. By default the model
is the multi30k-cpu configuration (d_model 128, 4 heads, 2 + 2 layers, d_ff 512, a joint
vocabulary of 6,000 with tied embeddings, dropout 0.1) and the batch is shaped like Multi30k
under its budget of 1,000 tokens: 45 sentence pairs of 22 source and 24 target positions.

  time     the two steps alternate in interleaved rounds (a burst of load from another process
           hits both); the median and the minimum over rounds, and NumPy / PyTorch of each.
  memory   each library in a fresh process: the peak resident memory of one step above the
           resident memory before it (glibc is told to return every block of 64 KiB or more to
           the system when it is freed, so the resident memory follows what is allocated), and
           the activations kept for the backward pass (NumPy: what the modules saved; PyTorch:
           what autograd saved, through saved_tensors_hooks), parameters excluded.

Before anything is timed, both start from the same weights in float64 with dropout 0 and must
compute the same loss, and the same weights after one update.

    .venv/bin/python benchmarks/bench_backprop.py [--dtype float32] [--threads 1] [--rounds 10]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

from machine import describe

SRC_LEN, TGT_LEN, PAIRS = 22, 24, 45
# NumPy, PyTorch and the course are imported inside the functions: BLAS and OpenMP read their
# thread counts at import time, and --threads must set them first.


def build(dtype_name: str, dropout: float, seed: int = 0) -> dict:
    """The two models with the same weights, the batch (NumPy arrays), and two zero-argument
    callables that make one update each on that batch and return the loss."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    import aiayn.np
    from aiayn.convert import numpy_state
    from aiayn.data.specials import PAD_ID
    from aiayn.np.model import Transformer as NumpyTransformer
    from aiayn.np.train import Adam, train_step
    from aiayn.pt.model import Transformer as TorchTransformer
    from aiayn.train.configs import CONFIGS

    run = CONFIGS["multi30k-cpu"]
    config = run.model_config(run.vocab_size)
    config = type(config)(**{**config.__dict__, "dropout": dropout})
    torch.manual_seed(seed)
    aiayn.np.manual_seed(seed)
    dtype = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64)}[dtype_name]
    pt_model = TorchTransformer(config).to(dtype[1]).train()
    np_model = NumpyTransformer(config)
    np_model.load_state_dict(numpy_state(pt_model.state_dict()))
    cast(np_model, dtype[0])
    rng = np.random.default_rng(seed)
    src = rng.integers(4, config.src_vocab_size, size=(PAIRS, SRC_LEN))
    tgt = rng.integers(4, config.tgt_vocab_size, size=(PAIRS, TGT_LEN + 1))
    tgt[:, 0] = 1  # <s>
    src_t, tgt_t = torch.from_numpy(src), torch.from_numpy(tgt)
    num_tokens = int((tgt[:, 1:] != PAD_ID).sum())
    lr = 1e-4
    pt_optimizer = torch.optim.Adam(pt_model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    np_optimizer = Adam(np_model)

    def torch_step():
        logits = pt_model(src_t, tgt_t[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_t[:, 1:].flatten(), ignore_index=PAD_ID,
                               label_smoothing=0.1, reduction="sum") / num_tokens
        pt_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        pt_optimizer.step()
        return loss.item()

    def numpy_step():
        return train_step(np_model, np_optimizer, src, tgt, lr, 0.1)

    return {"numpy_step": numpy_step, "torch_step": torch_step, "np_model": np_model,
            "pt_model": pt_model, "src": src, "tgt": tgt}


def cast(model, dtype) -> None:
    """Every float array of a NumPy model (parameters and buffers) in ``dtype``, ties kept."""
    import numpy as np

    converted = {}
    for module in model.modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                if id(value) not in converted:
                    converted[id(value)] = value.astype(dtype)
                setattr(module, name, converted[id(value)])


def check_agreement() -> tuple[float, float]:
    """float64, dropout 0: the two first losses, and the weights after one update, agree."""
    import numpy as np

    built = build("float64", dropout=0.0)
    loss_diff = abs(built["numpy_step"]() - built["torch_step"]())
    state = built["np_model"].state_dict()
    weight_diff = max(float(np.abs(state[k] - v.detach().numpy()).max())
                      for k, v in built["pt_model"].state_dict().items())
    if loss_diff > 1e-10 or weight_diff > 1e-10:
        raise RuntimeError(f"NumPy and PyTorch disagree: loss {loss_diff:.1e}, weights {weight_diff:.1e}")
    return loss_diff, weight_diff


def time_interleaved(variants: dict, rounds: int, warmup: int = 2) -> dict:
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            variants[name]()
    times = {name: [] for name in names}
    order = random.Random(0)
    for _ in range(rounds):
        order.shuffle(names)
        for name in names:
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
    return times


def memory_child(library: str, dtype_name: str, dropout: float) -> dict:
    """Runs in a fresh process: one step's peak resident memory above the start, and the
    bytes of activations kept for the backward pass, in MiB."""
    built = build(dtype_name, dropout)
    step = built["numpy_step" if library == "numpy" else "torch_step"]
    step()
    step()  # warm: Adam's moments and the gradients' arrays exist from now on
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak resident size, VmHWM
    before = _status_bytes("VmRSS")
    step()
    peak = _status_bytes("VmHWM") - before
    kept = (numpy_kept_bytes if library == "numpy" else torch_kept_bytes)(built)
    return {"peak_mib": peak / 2**20, "saved_mib": kept / 2**20}


def numpy_kept_bytes(built) -> int:
    """What the modules saved during a forward pass (``saved_nbytes``: each array once), plus
    the logits, which the loss's backward needs."""
    model, src, tgt = built["np_model"], built["src"], built["tgt"]
    model.train()
    model.zero_grad()
    logits = model(src, tgt[:, :-1])
    kept = model.saved_nbytes() + logits.nbytes
    model.zero_grad()
    return kept


def torch_kept_bytes(built) -> int:
    """What autograd saved for the backward pass of forward + loss, each storage counted once,
    the parameters (which it saves too, for the products) left out."""
    import torch
    import torch.nn.functional as F

    model, src, tgt = built["pt_model"], torch.from_numpy(built["src"]), torch.from_numpy(built["tgt"])
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(src, tgt[:, :-1])
        F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0, label_smoothing=0.1)
    return sum(storages.values())


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) * 1024


def measure_memory(library: str, args) -> dict:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")  # fixed: freed blocks leave RSS
    command = [sys.executable, __file__, "--memory-child", library, "--dtype", args.dtype,
               "--dropout", str(args.dropout), "--threads", str(args.threads)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for NumPy and PyTorch (both get the same)")
    parser.add_argument("--memory-child", choices=("numpy", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    if args.memory_child:
        print(json.dumps(memory_child(args.memory_child, args.dtype, args.dropout)))
        return

    print(describe())
    print(f"multi30k-cpu model (dropout {args.dropout}), {PAIRS} pairs x ({SRC_LEN} source, "
          f"{TGT_LEN} target) positions, {args.dtype}, {args.threads} thread(s); one step = "
          "forward, label-smoothed loss, backward, Adam")
    loss_diff, weight_diff = check_agreement()
    print(f"float64, dropout 0, same weights: loss differs by {loss_diff:.1e}, weights after one "
          f"update by {weight_diff:.1e}")
    built = build(args.dtype, args.dropout)
    times = time_interleaved({"PyTorch (autograd)": built["torch_step"],
                              "NumPy (by hand)": built["numpy_step"]}, args.rounds)
    base, ours = times["PyTorch (autograd)"], times["NumPy (by hand)"]
    print(f"{'step':22s} {'median ms':>10s} {'min ms':>8s}")
    for name, ts in times.items():
        print(f"{name:22s} {statistics.median(ts) * 1e3:10.1f} {min(ts) * 1e3:8.1f}")
    print(f"NumPy / PyTorch time: {statistics.median(ours) / statistics.median(base):.2f} (medians), "
          f"{min(ours) / min(base):.2f} (minima)")
    memory = {library: measure_memory(library, args) for library in ("torch", "numpy")}
    print(f"{'memory of one step, MiB':26s} {'peak above start':>17s} {'kept for backward':>18s}")
    for library, name in (("torch", "PyTorch (autograd)"), ("numpy", "NumPy (by hand)")):
        print(f"{name:26s} {memory[library]['peak_mib']:17.1f} {memory[library]['saved_mib']:18.1f}")
    print(f"NumPy / PyTorch memory: {memory['numpy']['peak_mib'] / memory['torch']['peak_mib']:.2f} "
          f"(peak), {memory['numpy']['saved_mib'] / memory['torch']['saved_mib']:.2f} (kept for backward)")


if __name__ == "__main__":
    main()
