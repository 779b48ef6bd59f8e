"""Two referees for a backward pass written by hand (the backpropagation chapter).

A hand-written backward pass returns dL/d(input) for some scalar L. To judge it we pick
L = sum(f(x) * g) with a random g, so that dL/d(output) = g, and ask

- PyTorch's autograd for the gradient of the same L (``autograd_gradients``), and
- central finite differences, which need nothing but forward passes (``finite_differences``):
  (L(x + h e_i) - L(x - h e_i)) / 2h. Their error is of order h^2 from the Taylor series plus
  about 1e-16 / h from rounding in float64, hence h = 1e-6 and agreement to about 1e-7.

    grads = autograd_gradients(lambda x, w: x @ w.T, [x, w], g)
    slopes = finite_differences(lambda: (x @ w.T * g).sum(), w, sample_coordinates(w.shape, 5, rng))
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def autograd_gradients(forward: Callable, inputs: Sequence[np.ndarray],
                       grad_out: np.ndarray) -> list[np.ndarray]:
    """PyTorch's gradients of sum(forward(*inputs) * grad_out), one NumPy array per input.

    ``forward`` takes torch tensors (leaves built from ``inputs``, same dtype) and returns a
    tensor shaped like ``grad_out``."""
    import torch

    leaves = [torch.tensor(np.asarray(x), requires_grad=True) for x in inputs]
    out = forward(*leaves)
    if tuple(out.shape) != tuple(np.shape(grad_out)):
        raise ValueError(f"grad_out: shape {np.shape(grad_out)} differs from the output's "
                         f"{tuple(out.shape)}")
    (out * torch.as_tensor(grad_out, dtype=out.dtype)).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


def finite_differences(loss: Callable[[], float], x: np.ndarray, coordinates: Sequence[tuple],
                       h: float = 1e-6) -> np.ndarray:
    """dL/dx at each of ``coordinates`` by central differences; ``loss()`` reads ``x``, which is
    moved in place and put back exactly (the saved value is restored, not recomputed)."""
    if not h > 0:
        raise ValueError(f"h must be positive, got {h}")
    slopes = []
    for i in coordinates:
        saved = x[i]
        x[i] = saved + h
        up = loss()
        x[i] = saved - h
        down = loss()
        x[i] = saved
        slopes.append((up - down) / (2 * h))
    return np.array(slopes)


def sample_coordinates(shape: tuple, n: int, rng: np.random.Generator) -> list[tuple]:
    """``n`` distinct random coordinates (index tuples) of an array of this ``shape``."""
    size = int(np.prod(shape))
    if not 0 < n <= size:
        raise ValueError(f"n must be between 1 and the array's {size} entries, got {n}")
    return [np.unravel_index(i, shape) for i in rng.choice(size, n, replace=False)]


def autograd_saved_nbytes(run: Callable[[], object], parameters) -> int:
    """Bytes of the tensors autograd saves for the backward pass while ``run()`` builds its
    graph, each storage once, the ``parameters``' storages excluded: what PyTorch keeps for
    backward, comparable with ``aiayn.np`` modules' ``saved_nbytes()``."""
    import torch

    excluded = {p.untyped_storage().data_ptr() for p in parameters}
    kept = {}

    def keep(tensor):  # called by autograd for every tensor it saves
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in excluded:
            kept[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda tensor: tensor):
        run()
    return sum(kept.values())
