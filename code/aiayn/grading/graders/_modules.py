"""Helpers for graders of ``nn.Module`` exercises: build the reader's module, copy the course's
weights into it by name, and run both on the same inputs."""

import numpy as np
import torch

from ..core import CheckFailed, need


def build(mod, name: str, *args, **kwargs):
    """``mod.<name>(*args, **kwargs)`` in float64 and eval mode (dropout off)."""
    module = need(mod, name)(*args, **kwargs)
    if not isinstance(module, torch.nn.Module):
        raise CheckFailed(f"{name} to be an nn.Module", type(module).__name__,
                          f"class {name}(nn.Module), with super().__init__() first in __init__")
    return module.double().eval()


def copy_weights(reader, course, key_map=lambda key: key) -> None:
    """Loads ``course.state_dict()`` into ``reader`` under the reader's names (``key_map``);
    a missing or extra parameter fails with the names the reader's class should use."""
    want = {key_map(k): v for k, v in course.state_dict().items()}
    # Parameters only, tied ones under each of their names: a buffer of the reader's (say a
    # persistent positional table) is the reader's business, not a naming mistake.
    have = {k: p.detach() for k, p in reader.named_parameters(remove_duplicate=False)}
    missing, extra = sorted(want.keys() - have.keys()), sorted(have.keys() - want.keys())
    if missing or extra:
        raise CheckFailed(
            f"the course's {len(want)} parameter names", f"{len(missing)} missing, "
            f"{len(extra)} unexpected", "name the sub-modules as the docstring says, so the "
            f"grader can copy the course's weights into yours; missing: {few(missing)}; "
            f"unexpected: {few(extra)}")
    for key, value in want.items():
        if tuple(have[key].shape) != tuple(value.shape):
            raise CheckFailed(f"{key} of shape {tuple(value.shape)}",
                              f"shape {tuple(have[key].shape)}",
                              "nn.Linear(in, out) stores its weight as (out, in); check the "
                              "sizes you pass to the constructors")
    reader.load_state_dict(want, strict=False)  # strict would trip over the reader's buffers


def few(names: list, shown: int = 6) -> str:
    if not names:
        return "none"
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def tensor(rng, *shape, scale=1.0):
    return torch.from_numpy(scale * rng.standard_normal(shape))


def head_dims(rng):
    """(B, H, d_k, d_model) with H >= 2: a mistake that mixes heads cannot hide behind H = 1."""
    B, H, d_k = int(rng.integers(2, 4)), int(rng.integers(2, 5)), int(rng.integers(3, 6))
    return B, H, d_k, H * d_k


def token_ids(rng, B, T, vocab, pad_id, min_len=2):
    """(B, T) int64 ids in [0, vocab) without pad_id, each row padded after a random length
    (row 0 is never padded, so T is the true maximum length)."""
    ids = rng.integers(0, vocab - 1, size=(B, T))
    ids = np.where(ids >= pad_id, ids + 1, ids)  # skip pad_id
    lengths = rng.integers(min_len, T + 1, size=B)
    lengths[0] = T
    ids[np.arange(T)[None, :] >= lengths[:, None]] = pad_id
    return torch.from_numpy(ids.astype(np.int64))


def grads_of(module) -> dict:
    return {k: p.grad for k, p in module.named_parameters()}
