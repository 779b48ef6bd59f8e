"""Helpers for graders of ``nn.Module`` exercises: build the reader's module, copy the course's
weights into it by name, and run both on the same inputs."""

import numpy as np
import torch

from ..compare import of_shape
from ..core import CheckFailed, need
from ..language import tr


def build(mod, name: str, *args, **kwargs):
    """``mod.<name>(*args, **kwargs)`` in float64 and eval mode (dropout off)."""
    module = need(mod, name)(*args, **kwargs)
    if not isinstance(module, torch.nn.Module):
        raise CheckFailed(tr(f"{name} to be an nn.Module", f"{name} 是一个 nn.Module"),
                          type(module).__name__,
                          tr(f"class {name}(nn.Module), with super().__init__() first in __init__",
                             f"写成 class {name}(nn.Module)，__init__ 的第一行调用 "
                             "super().__init__()"))
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
            tr(f"the course's {len(want)} parameter names", f"课程模型的 {len(want)} 个参数名"),
            tr(f"{len(missing)} missing, {len(extra)} unexpected",
               f"缺少 {len(missing)} 个，多出 {len(extra)} 个"),
            tr("name the sub-modules as the docstring says, so the grader can copy the course's "
               f"weights into yours; missing: {few(missing)}; unexpected: {few(extra)}",
               "按文档字符串的说法给子模块命名，评分程序才能把课程模型的权重复制到你的模块里；"
               f"缺少：{few(missing)}；多出：{few(extra)}"))
    for key, value in want.items():
        if tuple(have[key].shape) != tuple(value.shape):
            raise CheckFailed(of_shape(key, tuple(value.shape)),
                              tr(f"shape {tuple(have[key].shape)}",
                                 f"形状为 {tuple(have[key].shape)}"),
                              tr("nn.Linear(in, out) stores its weight as (out, in); check the "
                                 "sizes you pass to the constructors",
                                 "`nn.Linear(in, out)` 把权重存成 `(out, in)`；检查你传给构造函数的"
                                 "尺寸"))
    reader.load_state_dict(want, strict=False)  # strict would trip over the reader's buffers


def few(names: list, shown: int = 6) -> str:
    if not names:
        return tr("none", "无")
    more = (tr(f" and {len(names) - shown} more", f" 等，另有 {len(names) - shown} 个")
            if len(names) > shown else "")
    return tr(", ", "、").join(names[:shown]) + more


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
