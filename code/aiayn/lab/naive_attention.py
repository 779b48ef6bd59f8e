"""Multi-head attention written the slow ways, to compare with ``aiayn.np.attention``.

``multi_head_attention_loop`` follows the paper's formula literally: one Python iteration
per head, each with its own projection matrices W_i^Q, W_i^K, W_i^V. This is how most
tutorials write it. ``multi_head_attention_views`` batches the heads into one matmul but
feeds NumPy strided views, to measure whether the contiguous copy in ``split_heads`` matters
(``aiayn.lab.head_loop_timing`` times all three). Both take the weights of an
``aiayn.np.attention.MultiHeadAttention`` and must give exactly its result.
"""

import copy
import math
import time

import numpy as np

from .._checks import check_mask, check_mha_inputs
from ..np.attention import masked_softmax


def head_weights(mha, i: int) -> dict:
    """The paper's per-head matrices of head ``i``, in the paper's layout (x @ W).

    ``mha.w_q.weight`` is (h * d_k, d_model) in PyTorch's (out, in) layout; head i owns
    output rows i*d_k .. (i+1)*d_k - 1, so W_i^Q = w_q.weight[rows].T, shape (d_model, d_k)
    (``w_v`` likewise with d_v). W^O is not per head: head i's output meets columns
    i*d_v .. (i+1)*d_v - 1 of w_o.weight.
    """
    weights = {}
    for name in ("w_q", "w_k", "w_v"):
        linear = getattr(mha, name)
        width = linear.weight.shape[0] // mha.num_heads  # d_k for w_q and w_k, d_v for w_v
        rows = slice(i * width, (i + 1) * width)
        weights[name] = (linear.weight[rows].T, linear.bias[rows])
    return weights


def multi_head_attention_loop(mha, query, key, value, mask=None):
    """head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), one head per iteration;
    MultiHead = Concat(head_1, ..., head_h) W^O. Same inputs and outputs as ``mha(...)``:
    query (B, T_q, d_model), key/value (B, T_k, d_model), mask broadcastable to
    (B, H, T_q, T_k) -> (out (B, T_q, d_model), weights (B, H, T_q, T_k))."""
    check_mha_inputs(query, key, value, mha.d_model)
    H = mha.num_heads
    target = (query.shape[0], H, query.shape[1], key.shape[1])
    if mask is not None:
        check_mask(mask, getattr(mask, "dtype", None) == np.bool_, target)
        mask = np.broadcast_to(mask, target)
    heads, weights = [], []
    for i in range(H):
        w = head_weights(mha, i)
        q = query @ w["w_q"][0] + w["w_q"][1]  # (B, T_q, d_k)
        k = key @ w["w_k"][0] + w["w_k"][1]  # (B, T_k, d_k)
        v = value @ w["w_v"][0] + w["w_v"][1]  # (B, T_k, d_v)
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)
        a = masked_softmax(scores, None if mask is None else mask[:, i])
        heads.append(a @ v)
        weights.append(a)
    concat = np.concatenate(heads, axis=-1)  # (B, T_q, H * d_v)
    return mha.w_o(concat), np.stack(weights, axis=1)


def multi_head_attention_views(mha, query, key, value, mask=None):
    """All heads in one batched matmul, like ``mha(...)``, but on the strided views that
    ``reshape(...).transpose(0, 2, 1, 3)`` returns, without ``np.ascontiguousarray``.
    Same result; NumPy's matmul copies or falls back to slower loops for such operands."""
    check_mha_inputs(query, key, value, mha.d_model)
    H = mha.num_heads
    if mask is not None:
        target = (query.shape[0], H, query.shape[1], key.shape[1])
        check_mask(mask, getattr(mask, "dtype", None) == np.bool_, target)

    def split(x):  # (B, T, d_model) -> (B, H, T, d_k), a view, not a copy
        B, T, D = x.shape
        return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)

    q, k, v = split(mha.w_q(query)), split(mha.w_k(key)), split(mha.w_v(value))
    weights = masked_softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]), mask)
    out = (weights @ v).transpose(0, 2, 1, 3)  # (B, T_q, H, d_v), strided
    return mha.w_o(out.reshape(out.shape[0], out.shape[1], -1)), weights


def astype(module, dtype):
    """A copy of a NumPy module with every parameter cast to ``dtype`` (e.g. float32 for a
    benchmark; the course's NumPy model is float64 and ``load_state_dict`` keeps that)."""
    result = copy.deepcopy(module)
    for name, _ in module.named_parameters():
        *path, attr = name.split(".")
        owner = result
        for part in path:
            owner = owner[int(part)] if part.isdigit() else getattr(owner, part)
        setattr(owner, attr, getattr(owner, attr).astype(dtype))
    return result


def best_times_ms(variants: dict, calls: int = 1, rounds: int = 7,
                  budget_s: float | None = None, clock=time.perf_counter) -> dict:
    """Best time per call, in milliseconds, of each zero-argument callable in ``variants``.

    The variants are timed in interleaved rounds (each one ``calls`` times per round, the
    starting variant rotating), so load from other processes hits all of them alike; the
    minimum over rounds is the measurement least disturbed by such load. ``budget_s`` caps
    the total time: no new round starts once it is spent (the first round always runs), so a
    notebook stays quick on a busy machine, at the price of fewer rounds. ``clock``: wall time
    by default; ``time.process_time`` counts this process's CPU time only (for single-threaded
    work on a machine shared with other processes)."""
    names = list(variants)
    best = dict.fromkeys(names, math.inf)
    start_all = time.perf_counter()
    for r in range(rounds):
        if r and budget_s is not None and time.perf_counter() - start_all >= budget_s:
            break
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = clock()
            for _ in range(calls):
                variants[name]()
            best[name] = min(best[name], (clock() - start) / calls * 1e3)
    return best
