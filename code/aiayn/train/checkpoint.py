"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)``, averaged.

A checkpoint is a dict of plain tensors, numbers, strings, lists and dicts, so reading it
never runs pickled code (``weights_only=True``): model state, optimizer and scheduler state,
step, data position, random-number-generator states, and the configurations as dicts.

A file that is not such a checkpoint (random bytes, a truncated file, pickled objects, a dict
without the model) raises ``CheckpointError``, a ValueError saying which file and what is wrong.
"""

import os
import re
import tempfile
import warnings
from pathlib import Path

import torch

from ..config import TransformerConfig
from ..pt.model import Transformer

_STEP_NAME = re.compile(r"^step_(\d+)\.pt$")


class CheckpointError(ValueError):
    """A file that is not a checkpoint of this course, or not a complete one."""


def checkpoint_name(step: int) -> str:
    return f"step_{step:07d}.pt"


def checkpoint_step(path: str | os.PathLike) -> int:
    """The update count in a checkpoint's file name (``checkpoint_name``'s inverse)."""
    match = _STEP_NAME.match(Path(path).name)
    if match is None:
        raise ValueError(f"{path}: not a checkpoint name like {checkpoint_name(1)!r}")
    return int(match.group(1))


def save_checkpoint(state: dict, path: str | os.PathLike) -> None:
    """Writes to a temporary file in the same folder, then renames: a crash mid-write leaves
    the previous checkpoint intact, never a truncated file under the final name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """The checkpoint's dict. OSError when the file cannot be opened (missing, a folder, not
    readable); CheckpointError when torch.load cannot read what is in it."""
    try:
        with warnings.catch_warnings(record=True) as caught:  # none about a file it refuses
            warnings.simplefilter("always")
            state = torch.load(path, map_location=map_location, weights_only=True)
    except OSError:
        raise
    except Exception as err:  # bytes torch.load cannot parse surface as many exception types
        raise CheckpointError(f"{path} is not a checkpoint torch.load can read "
                              f"({_why_unreadable(err)})") from err
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} holds a {type(state).__name__}, not a checkpoint's dict")
    return state


def _why_unreadable(err: Exception) -> str:
    """A short reason from torch.load's exception (its messages run to several paragraphs)."""
    text = str(err)
    objects = re.search(r"Unsupported global: GLOBAL (\S+)", text)
    if objects:
        return f"it holds pickled Python objects ({objects.group(1)}), not only tensors and values"
    unpickler = re.search(r"WeightsUnpickler error:\s*(.+)", text)
    first = unpickler.group(1) if unpickler else (text.strip().splitlines() or [""])[0]
    first = first.split(". ")[0].strip()[:120]
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def checkpoint_paths(folder: str | os.PathLike) -> list[Path]:
    """The ``step_*.pt`` files of ``folder``, oldest (lowest step) first."""
    folder = Path(folder)
    found = [(checkpoint_step(p), p) for p in folder.glob("step_*.pt") if _STEP_NAME.match(p.name)]
    return [p for _, p in sorted(found)]


def average_checkpoints(paths) -> dict[str, torch.Tensor]:
    """The element-wise mean of the model weights in ``paths`` (§6.1: "we used a single model
    obtained by averaging the last 5 checkpoints"). Accepts trainer checkpoints (weights under
    "model") or bare state dicts. Averages in float64, returns each tensor's own dtype;
    integer tensors must agree and are copied."""
    paths = list(paths)
    if not paths:
        raise ValueError("average_checkpoints needs at least one path")
    total = None
    for path in paths:
        ckpt = load_checkpoint(path)
        state = ckpt.get("model", ckpt)
        if total is None:
            dtypes = {k: v.dtype for k, v in state.items()}
            total = {k: v.double() if v.is_floating_point() else v.clone() for k, v in state.items()}
            continue
        if state.keys() != total.keys():
            raise ValueError(f"{path} holds other weights than {paths[0]}: "
                             f"{sorted(state.keys() ^ total.keys())[:5]}")
        for k, v in state.items():
            if v.shape != total[k].shape:
                raise ValueError(f"{path}: {k} has shape {tuple(v.shape)}, {paths[0]} has {tuple(total[k].shape)}")
            if v.is_floating_point():
                total[k] += v.double()
            elif not torch.equal(v, total[k]):
                raise ValueError(f"{path}: integer tensor {k} differs from {paths[0]}'s; cannot average")
    return {k: (v / len(paths)).to(dtypes[k]) if dtypes[k].is_floating_point else v for k, v in total.items()}


def build_model(checkpoint: dict | str | os.PathLike, device="cpu") -> Transformer:
    """The Transformer saved in a checkpoint (its config is stored as a dict), in eval mode.
    CheckpointError if the checkpoint lacks the model or its weights do not fit its config."""
    ckpt = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)
    where = "" if isinstance(checkpoint, dict) else f"{checkpoint}: "
    missing = [key for key in ("model", "model_config") if not isinstance(ckpt.get(key), dict)]
    if missing:
        raise CheckpointError(f"{where}it has no {' and no '.join(missing)} dict: it is not a "
                              "model written by aiayn-train")
    try:
        model = Transformer(TransformerConfig(**ckpt["model_config"]))
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{where}its model_config is not valid ({err})") from err
    try:
        model.load_state_dict(ckpt["model"])
    except (RuntimeError, TypeError, AttributeError) as err:
        why = " ".join(str(err).split())[:160]  # torch's message spans several lines
        raise CheckpointError(f"{where}its weights do not fit its model_config ({why} ...)") from err
    return model.to(device).eval()
