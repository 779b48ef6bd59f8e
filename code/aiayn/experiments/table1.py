"""Table 1 of the paper, measured: the chapter "Why self-attention" reads the file this writes.

    python -m aiayn.experiments.table1 --cpu 1               # writes results/table1/cpu.json
    python -m aiayn.experiments.table1 --lengths 16 64 --rounds 2 --path-lengths 8 --out /tmp/t1.json

For every layer type (aiayn.lab.complexity.KINDS: the two recurrent ones are the course's Elman
RNN, a Python loop, and torch.nn.RNN, the same layer looping in C++) and sequence length n:
  - multiply-adds by formula, and FLOPs counted by torch.utils.flop_counter;
  - peak bytes of live tensors (aiayn.lab.complexity.peak_bytes), and at the largest n, as a
    cross-check, the growth of the process's resident memory (Linux VmHWM, reset before the
    run) in a fresh Python process per layer type;
  - CPU time of one forward pass on one sentence (B = 1), one thread, every round's time and
    its spread (min, quartiles, max), all layers interleaved round by round
    (aiayn.lab.layer_timing.time_layers); the wall clock's median and minimum beside it;
  - at the largest n, CPU seconds of one matrix-vector and one matrix-matrix product of the
    width d (aiayn.lab.layer_timing.product_seconds): the rate of a recurrent step's sequential
    half, h_{t-1} U, against the rate of the products that run on all positions at once.
And for every layer type of Table 1's last column, the number of stacked layers after which the
last position depends on the first (aiayn.lab.path_length.layers_to_connect).

Run it on a quiet machine: nothing else running (wait until the load average has fallen near
0). The file records the machine, the CPU the process was pinned to (--cpu), the load average
before and after, and the CPU time other processes used during the run (Linux /proc/stat). The default settings take
about two minutes of CPU time.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import torch

from ..lab.complexity import KINDS, Layer, count_flops, macs, peak_bytes, table1_term
from ..lab.layer_timing import product_seconds, time_layers
from ..lab.path_length import layers_to_connect
from .record import REPOSITORY, Recorder

DEFAULT_OUT = REPOSITORY / "results" / "table1" / "cpu.json"
# (kind, width): width is the kernel k for convolutions, the neighbourhood r for restricted attention
PATH_SETTINGS = [("self_attention", None), ("recurrent", None), ("convolution", 3), ("convolution", 9),
                 ("dilated", 3), ("restricted", 9), ("restricted", 33)]


def lengths(values: dict) -> list[int]:
    """The sequence lengths of a results file's "complexity" rows, ascending."""
    return sorted({row["n"] for row in values["complexity"]})


def series(values: dict, kind: str, field: str) -> list:
    """One field of one layer type, ordered by n: ``series(v, "recurrent", "cpu_min_s")``."""
    rows = sorted((row for row in values["complexity"] if row["kind"] == kind), key=lambda row: row["n"])
    if not rows:
        raise ValueError(f"kind {kind!r} is not in the results file")
    return [row[field] for row in rows]


def complexity_rows(lengths, d: int, k: int, r: int, heads: int, rounds: int, seed: int = 0,
                    log=print) -> list[dict]:
    """One row per (n, kind): MACs (formula), FLOPs (counted), Table 1's term, peak bytes, and
    the CPU times of the rounds with their spread."""
    rows = []
    for n in lengths:
        torch.manual_seed(seed)
        layers = {kind: Layer(kind, d, k, r, heads).eval() for kind in KINDS}
        x = torch.randn(1, n, d)
        times = time_layers(layers, x, rounds=rounds)
        for kind, layer in layers.items():
            rows.append({"n": n, "kind": kind, "macs": macs(kind, n, d, k, r)["total"],
                         "flops_counted": count_flops(layer, x),
                         "table1_term": table1_term(kind, n, d, k, r),
                         "peak_bytes": peak_bytes(lambda: layer(x)), **times[kind]})
        log(f"n = {n:5d}: " + ", ".join(f"{kind} {times[kind]['cpu_min_s'] * 1e3:.1f} ms"
                                        for kind in KINDS))
    return rows


_RSS_SCRIPT = """
import re, sys, torch
from aiayn.lab.complexity import Layer
torch.set_num_threads(1)
kind, n, d, k, r, heads = sys.argv[1], *map(int, sys.argv[2:])
def status(key):
    return int(re.search(key + r":\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
torch.manual_seed(0)
layer, x = Layer(kind, d, k, r, heads).eval(), torch.randn(1, n, d)
with torch.no_grad():
    layer(x[:, :8])  # first call: lazy initialisation outside the measurement
    before = status("VmRSS")
    open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM, the peak resident memory
    out = layer(x)
    print(status("VmHWM") - before)
"""


def resident_growth(kind: str, n: int, d: int, k: int, r: int, heads: int) -> int | None:
    """Peak growth of resident memory, in bytes, while one layer runs in a fresh process
    (Linux only; None where /proc cannot be read or reset)."""
    result = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, kind, str(n), str(d), str(k), str(r),
                             str(heads)], capture_output=True, text=True, timeout=600)
    match = re.fullmatch(r"-?\d+", result.stdout.strip())
    return int(match.group()) if result.returncode == 0 and match else None


def path_rows(lengths, log=print) -> list[dict]:
    rows = []
    for n in lengths:
        for kind, width in PATH_SETTINGS:
            rows.append({"n": n, "kind": kind, "width": width,
                         "layers": layers_to_connect(kind, n, width)})
        log(f"n = {n:5d}: " + ", ".join(f"{r['kind']}{r['width'] or ''} {r['layers']}"
                                        for r in rows[-len(PATH_SETTINGS):]))
    return rows


def machine_busy_seconds() -> float | None:
    """CPU seconds every processor of the machine has spent busy since boot (Linux /proc/stat:
    user, nice, system, irq, softirq and steal time), or None where it cannot be read. Its growth
    over a run, less the run's own CPU time, is what other processes used meanwhile."""
    try:
        fields = open("/proc/stat").readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def other_processes(busy_before: float | None, busy_after: float | None, own_cpu_s: float,
                    wall_s: float) -> dict | None:
    """What other processes used while the run ran: their CPU seconds (the machine's busy time
    less the run's own, floored at 0: the two clocks tick at different resolutions) and that as
    a share of the run's wall time (1.0: one other core kept busy throughout). None without
    /proc/stat."""
    if busy_before is None or busy_after is None or wall_s <= 0:
        return None
    others = max(0.0, busy_after - busy_before - own_cpu_s)
    return {"cpu_s": round(others, 2), "cores_busy": round(others / wall_s, 3)}


def processor() -> dict:
    """What the timings depend on beyond the machine's name: the vector instructions PyTorch's
    kernels use, and the CPUs this process may run on."""
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {"capability": torch.backends.cpu.get_cpu_capability(), "affinity": affinity}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+",
                        default=[16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
    parser.add_argument("--d", type=int, default=512)
    parser.add_argument("--k", type=int, default=3, help="kernel width of the convolutions")
    parser.add_argument("--r", type=int, default=33, help="neighbourhood of restricted attention")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--path-lengths", type=int, nargs="+",
                        default=[8, 16, 32, 64, 128, 256, 512])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu", type=int, default=None,
                        help="pin the process to this CPU (Linux), away from interrupts and other jobs")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    for name in ("d", "k", "r", "heads", "rounds", "threads"):
        if getattr(args, name) < 1:
            parser.exit(2, f"table1: --{name} must be at least 1, got {getattr(args, name)}\n")
    if args.cpu is not None:
        try:
            os.sched_setaffinity(0, {args.cpu})
        except (AttributeError, OSError, ValueError) as error:
            parser.exit(2, f"table1: cannot pin to CPU {args.cpu} ({error}); "
                           f"choose one of {sorted(os.sched_getaffinity(0))} or leave out --cpu\n")
    torch.set_num_threads(args.threads)

    load_before = os.getloadavg()
    busy_before, own_before, wall_before = machine_busy_seconds(), time.process_time(), time.perf_counter()
    with Recorder() as recorder:
        paths = path_rows(args.path_lengths)  # quick: first, so that an error costs little
        rows = complexity_rows(args.lengths, args.d, args.k, args.r, args.heads, args.rounds)
        n_max = max(args.lengths)
        products = product_seconds(args.d, n_max, rounds=args.rounds)
        print(f"at n = {n_max}: one matrix-vector product {products['matrix_vector']['min'] * 1e6:.1f} us, "
              f"one matrix-matrix product {products['matrix_matrix']['min'] * 1e3:.2f} ms (min)")
        resident = {kind: resident_growth(kind, n_max, args.d, args.k, args.r, args.heads)
                    for kind in KINDS}
        print(f"resident memory growth at n = {n_max}:", json.dumps(resident))
    # The resident-memory runs are child processes: their CPU time counts as the run's own.
    own = time.process_time() - own_before + sum(os.times()[2:4])
    others = other_processes(busy_before, machine_busy_seconds(), own, time.perf_counter() - wall_before)
    record = recorder.write(args.out, {
        "d": args.d, "k": args.k, "r": args.r, "heads": args.heads, "batch_size": 1,
        "rounds": args.rounds, "processor": processor(), "complexity": rows,
        "products": {"n": n_max, **products},
        # a quiet machine has a load average near 1 (this process) before and after
        "load_average": {"before": load_before, "after": os.getloadavg()},
        # what other processes used during the run (a quiet machine: cores_busy near 0)
        "other_processes": others,
        "resident_growth_bytes": {"n": n_max, **resident}, "path_lengths": paths})
    print(f"wrote {args.out} ({record['seconds']} s, {record['cpu_seconds']} s of CPU, "
          f"on {record['machine']})")


if __name__ == "__main__":
    main()
