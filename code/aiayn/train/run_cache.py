"""A finished training run kept on disk, so that a page executed twice on one machine trains once.

    result = cached_fit(trainer, batches, val_batches, name="multi30k-cpu")
    result.history, result.seconds, result.reused

The English and the Chinese training chapter run the same cells. The first to execute trains
(``trainer.fit``) and stores the run under ``runs/cache/`` (git-ignored): the final weights, the
checkpoints the trainer still keeps (weights only), the history and how long training took. The
second, on the same machine, loads that run instead of training again, so both pages show one
run, and it is the run the second page would have computed: training on a CPU with a fixed
thread count is deterministic, and the key holds everything the result depends on. That key is
a hash of the training configuration, the model's configuration and initial weights, every batch
of the first epoch and the batching parameters, the validation batches, the source of the code
that trains (``aiayn.pt``, ``aiayn.train``, ``aiayn.data``, ``aiayn.config``, ``aiayn._checks``), the
machine (processor, PyTorch, threads, GPU) and the numeric environment variables. A file lock
makes a second process wait while the first trains (where ``fcntl`` exists, i.e. not on Windows).

A reused trainer holds the final weights, step, data position and history (and PyTorch's random
generator is left as the run left it), not the optimizer's state: it can evaluate, decode and average, not train further. ``AIAYN_RUN_CACHE=off`` always
trains; ``AIAYN_RUN_CACHE=<folder>`` keeps the runs there.
"""

import contextlib
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..machine import describe
from .checkpoint import checkpoint_paths, load_checkpoint, save_checkpoint

try:
    import fcntl
except ImportError:  # Windows: no lock; two processes at once would both train
    fcntl = None

PACKAGE = Path(__file__).resolve().parents[1]  # code/aiayn
DEFAULT_ROOT = PACKAGE.parents[1] / "runs" / "cache"
TRAINING_CODE = ("pt", "train", "data", "_checks.py", "config.py")  # what aiayn.train.trainer imports
NUMERIC_ENVIRONMENT = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "MKL_CBWR", "OPENBLAS_CORETYPE",
                       "ATEN_CPU_CAPABILITY", "CUBLAS_WORKSPACE_CONFIG")
KEEP_PER_NAME = 2  # runs of one name kept; older ones are removed when a new one is stored


@dataclass
class CachedRun:
    """What a run left: its history (``Trainer.fit``'s), the wall and CPU seconds it trained
    for, the machine it trained on, whether this call reused it, and its folder."""

    history: list
    seconds: float
    cpu_seconds: float
    machine: str
    reused: bool
    folder: Path


def code_fingerprint(package: Path = PACKAGE) -> str:
    """SHA-256 over the source of the modules that train (TRAINING_CODE), path and text."""
    files = []
    for part in TRAINING_CODE:
        files += [package / part] if part.endswith(".py") else sorted((package / part).rglob("*.py"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _update_tensor(digest, tensor: torch.Tensor) -> None:
    t = tensor.detach().cpu().contiguous()
    digest.update(f"{t.dtype}{tuple(t.shape)}".encode())
    digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


def _update_batches(digest, batches) -> None:
    if batches is None:
        digest.update(b"no batches")
        return
    for attribute in ("max_tokens", "seed", "shuffle", "sort"):  # TokenBatches: later epochs' order
        digest.update(f"{attribute}={getattr(batches, attribute, None)!r};".encode())
    if hasattr(batches, "set_epoch"):
        batches.set_epoch(0)
    for batch in batches:
        _update_tensor(digest, batch.src)
        _update_tensor(digest, batch.tgt)


def run_key(trainer, batches, val_batches) -> str:
    """The hash that names a run (module docstring): equal keys, equal runs."""
    digest = hashlib.sha256()
    config = trainer.config.to_dict()
    for field in ("progress", "checkpoint_dir"):  # where and how loudly, not what
        config.pop(field, None)
    machine = {"machine": describe(), "precision": trainer.precision, "device": str(trainer.device),
               "world_size": trainer.world_size, "torch": torch.__version__,
               "environment": {k: os.environ.get(k) for k in NUMERIC_ENVIRONMENT}}
    digest.update(json.dumps({"train": config, "model": repr(trainer.model.config), "machine": machine,
                              "code": code_fingerprint()}, sort_keys=True, default=str).encode())
    for name, tensor in sorted(trainer.model.state_dict().items()):
        digest.update(name.encode())
        _update_tensor(digest, tensor)
    _update_batches(digest, batches)
    _update_batches(digest, val_batches)
    return digest.hexdigest()


def cache_root() -> Path | None:
    """Where runs are kept: $AIAYN_RUN_CACHE, runs/cache by default; None when it is "off"."""
    setting = os.environ.get("AIAYN_RUN_CACHE", "")
    if setting.lower() in ("off", "0", "no", "false"):
        return None
    return Path(setting) if setting else DEFAULT_ROOT


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)  # waits while another process holds it
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _weights(path) -> dict:
    checkpoint = load_checkpoint(path)
    return checkpoint.get("model", checkpoint)


def _store(trainer, folder: Path, record: dict) -> None:
    """Writes the run into a temporary folder beside ``folder``, then renames it: a run cut
    short leaves nothing a later call would take for complete."""
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "checkpoints").mkdir(parents=True)
    save_checkpoint(trainer.model.state_dict(), partial / "final.pt")
    save_checkpoint({"torch": torch.get_rng_state()}, partial / "rng.pt")  # dropout's generator after the run
    if trainer.config.checkpoint_dir:
        for path in checkpoint_paths(trainer.config.checkpoint_dir):
            save_checkpoint(_weights(path), partial / "checkpoints" / path.name)
    (partial / "run.json").write_text(json.dumps(record, indent=1), encoding="utf8")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)


def _restore(trainer, folder: Path, record: dict) -> None:
    trainer.model.load_state_dict(load_checkpoint(folder / "final.pt"))
    trainer.step, trainer.epoch, trainer.batch_in_epoch = record["step"], record["epoch"], record["batch_in_epoch"]
    trainer.history = record["history"]
    torch.set_rng_state(load_checkpoint(folder / "rng.pt")["torch"])  # as if it had just trained
    if trainer.config.checkpoint_dir:
        target = Path(trainer.config.checkpoint_dir)
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted((folder / "checkpoints").glob("step_*.pt")):
            shutil.copyfile(path, target / path.name)


def _prune(root: Path, name: str, keep: int = KEEP_PER_NAME) -> None:
    runs = sorted((p for p in root.glob(f"{name}-*") if p.is_dir() and (p / "run.json").is_file()),
                  key=lambda p: (p / "run.json").stat().st_mtime, reverse=True)
    for old in runs[keep:]:
        shutil.rmtree(old, ignore_errors=True)
        (root / f"{old.name}.lock").unlink(missing_ok=True)


def cached_fit(trainer, batches, val_batches=None, name: str = "run", root=None) -> CachedRun:
    """``trainer.fit(batches, val_batches)``, or the same run loaded from the cache (module
    docstring). Call it on a trainer that has not trained yet; ``name`` (a configuration's
    name) prefixes the run's folder."""
    if trainer.step != 0:
        raise ValueError(f"trainer has already made {trainer.step} updates; cached_fit starts a run")
    if not name or any(c in name for c in "/\\") or name.startswith("."):
        raise ValueError(f"name must be a plain folder name, got {name!r}")
    root = cache_root() if root is None else Path(root)
    if root is None:
        return _fit(trainer, batches, val_batches, None)
    root.mkdir(parents=True, exist_ok=True)
    key = run_key(trainer, batches, val_batches)
    folder = root / f"{name}-{key[:16]}"
    with _locked(root / f"{folder.name}.lock"):
        if (folder / "run.json").is_file():
            record = json.loads((folder / "run.json").read_text(encoding="utf8"))
            if record.get("key") == key:
                _restore(trainer, folder, record)
                return CachedRun(record["history"], record["seconds"], record["cpu_seconds"],
                                 record["machine"], True, folder)
        result = _fit(trainer, batches, val_batches, folder)
        record = {"key": key, "name": name, "step": trainer.step, "epoch": trainer.epoch,
                  "batch_in_epoch": trainer.batch_in_epoch, "history": result.history,
                  "seconds": result.seconds, "cpu_seconds": result.cpu_seconds,
                  "machine": result.machine, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _store(trainer, folder, record)
    _prune(root, name)
    return result


def _fit(trainer, batches, val_batches, folder) -> CachedRun:
    start, cpu_start = time.perf_counter(), time.process_time()
    history = trainer.fit(batches, val_batches)
    return CachedRun(history, time.perf_counter() - start, time.process_time() - cpu_start,
                     describe(), False, folder)


__all__ = ["CachedRun", "cache_root", "cached_fit", "code_fingerprint", "run_key"]
