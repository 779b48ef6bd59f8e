"""CPU time of Table 1's layers, with its spread, and the two rates a recurrence lives between.

    time_layers(layers, x)         CPU and wall time of every layer, interleaved round by round;
                                   per layer the CPU time of each round and its spread
    spread(values)                 min, quartiles, max
    crossover(ns, a, b)            the n at which series a overtakes series b
    crossover_by_round(ns, a, b)   the same, once per round: a crossover with its spread
    product_seconds(d, n)          CPU seconds of one matrix-vector product (1 x d by d x d: the
                                   recurrence's step, h_{t-1} U) and of one matrix-matrix product
                                   (n x d by d x d: the projections, x W for all t at once)

CPU time, not wall time: on a machine shared with other jobs the wall clock also counts the time
the process waited for a core. A headline reads the minimum or the median, beside the spread.
"""

import math
import statistics
import time

import torch

from .._checks import check_positive


def spread(values) -> dict:
    """min, q1, median, q3, max of ``values`` (quartiles inclusive of the extremes)."""
    values = sorted(values)
    if not values:
        raise ValueError("values must not be empty")
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return {"min": values[0], "q1": q1, "median": median, "q3": q3, "max": values[-1]}


def time_layers(layers: dict, x: torch.Tensor, rounds: int = 5, budget_s: float | None = None,
                warmup: int = 1) -> dict:
    """Times of ``layer(x)`` for every layer in ``layers`` (name -> module), forward pass, no
    gradients. Each round runs every layer once, the first one rotating, so that a burst of load
    from another process hits all layers alike. ``budget_s`` stops starting new rounds once spent
    (the first round always runs). Returns name -> {"cpu_s": [one CPU time per round],
    "cpu_min_s", "cpu_q1_s", "cpu_median_s", "cpu_q3_s", "cpu_max_s", "wall_s": [per round],
    "median_s", "min_s" (wall), "runs"}. On a GPU only the wall clock means anything, and only
    when each call synchronises."""
    check_positive("rounds", rounds)
    names = list(layers)
    wall, cpu = {name: [] for name in names}, {name: [] for name in names}
    with torch.no_grad():
        for name in names:
            for _ in range(warmup):
                layers[name](x)
        start_all = time.perf_counter()
        for i in range(rounds):
            if i and budget_s is not None and time.perf_counter() - start_all >= budget_s:
                break
            for name in names[i % len(names):] + names[:i % len(names)]:
                start, start_cpu = time.perf_counter(), time.process_time()
                layers[name](x)
                cpu[name].append(time.process_time() - start_cpu)
                wall[name].append(time.perf_counter() - start)
    out = {}
    for name in names:
        s = spread(cpu[name])
        out[name] = {"cpu_s": cpu[name], **{f"cpu_{key}_s": value for key, value in s.items()},
                     "wall_s": wall[name], "median_s": statistics.median(wall[name]),
                     "min_s": min(wall[name]), "runs": len(cpu[name])}
    return out


def crossover(lengths, a, b) -> float | None:
    """The length n at which ``a`` (say, one layer's times) overtakes ``b``: the first pair of
    neighbouring lengths with a < b at the first and a >= b at the second, interpolated there
    linearly in log n and log(a / b). None when a never rises from below b to above it."""
    if not len(lengths) == len(a) == len(b):
        raise ValueError(f"lengths, a and b must have the same length, got {len(lengths)}, "
                         f"{len(a)}, {len(b)}")
    log_ratio = [math.log(x / y) for x, y in zip(a, b)]
    for i in range(len(lengths) - 1):
        if log_ratio[i] < 0 <= log_ratio[i + 1]:
            f = -log_ratio[i] / (log_ratio[i + 1] - log_ratio[i])
            return math.exp(math.log(lengths[i]) + f * (math.log(lengths[i + 1]) - math.log(lengths[i])))
    return None


def crossover_by_round(lengths, a_rounds, b_rounds) -> list:
    """``crossover`` once per round: ``a_rounds[i][j]`` is series a's time at ``lengths[i]`` in
    round j (the lists ``cpu_s`` of ``time_layers``, one per length). Rounds ran interleaved, so
    round j of a and of b met the same load. One value per round (None where a never overtook b)."""
    if not len(lengths) == len(a_rounds) == len(b_rounds):
        raise ValueError(f"lengths, a_rounds and b_rounds must have the same length, got "
                         f"{len(lengths)}, {len(a_rounds)}, {len(b_rounds)}")
    rounds = min(len(times) for times in (*a_rounds, *b_rounds))
    return [crossover(lengths, [times[j] for times in a_rounds], [times[j] for times in b_rounds])
            for j in range(rounds)]


def _cpu_seconds_per_call(fn, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def product_seconds(d: int, n: int, rounds: int = 15, calls: int = 200, seed: int = 0) -> dict:
    """CPU seconds of one (1, d) @ (d, d) product, the part of a recurrent step that must wait
    for the step before, and of one (n, d) @ (d, d) product, the shape of every projection that
    runs on all positions at once; each the mean over ``calls`` calls (a single matrix-vector
    product is too short for the clock), per round, interleaved. Returns {"matrix_vector":
    {"macs", "seconds": [per round], min .. max}, "matrix_matrix": {...}}.

    A matrix-vector product reads each weight once for one multiply-add; a matrix-matrix product
    reuses it for n rows, so the processor's vector units stay fed: its rate per multiply-add is
    the higher one, and only the recurrence is held to the lower."""
    for name, value in (("d", d), ("n", n), ("rounds", rounds), ("calls", calls)):
        check_positive(name, value)
    generator = torch.Generator().manual_seed(seed)
    u = torch.randn(d, d, generator=generator)
    h, x = torch.randn(1, d, generator=generator), torch.randn(n, d, generator=generator)
    products = {"matrix_vector": (lambda: h @ u, d * d, calls),
                "matrix_matrix": (lambda: x @ u, n * d * d, max(1, calls // n))}
    seconds = {name: [] for name in products}
    with torch.no_grad():
        for fn, _, repeat in products.values():
            _cpu_seconds_per_call(fn, min(repeat, 5))  # warm-up
        for _ in range(rounds):
            for name, (fn, _, repeat) in products.items():
                seconds[name].append(_cpu_seconds_per_call(fn, repeat))
    return {name: {"macs": macs, "seconds": seconds[name], **spread(seconds[name])}
            for name, (_, macs, _) in products.items()}


__all__ = ["crossover", "crossover_by_round", "product_seconds", "spread", "time_layers"]
