"""aiayn.train.run_cache: a run stored once is reused only when everything it depends on is equal,
the reused trainer is the one training would have left, and a second process waits for the first."""

import json
import threading
import time

import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.data.batching import TokenBatches
from aiayn.pt.model import Transformer
from aiayn.train import run_cache
from aiayn.train.checkpoint import average_checkpoints, checkpoint_paths
from aiayn.train.run_cache import cached_fit, code_fingerprint, run_key
from aiayn.train.trainer import TrainConfig, Trainer
from conftest import copy_pairs

VOCAB = 12
CONFIG = TransformerConfig(VOCAB, VOCAB, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.1,
                           max_len=32, share_embeddings=True)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def pairs(n=24, seed=0):
    return copy_pairs(n, seed, VOCAB, (2, 7))


def new_trainer(tmp_path, folder="ckpt", seed=0, **changes):
    torch.manual_seed(seed)
    model = Transformer(CONFIG)
    config = TrainConfig(**{"max_steps": 12, "warmup_steps": 4, "log_every": 4, "eval_every": 6,
                            "checkpoint_every": 3, "keep_last": 2, "progress": False,
                            "checkpoint_dir": str(tmp_path / folder), "seed": seed} | changes)
    return Trainer(model, config)


def data(seed=0):
    return TokenBatches(pairs(), 60, seed=seed), TokenBatches(pairs(8, seed=1), 60, shuffle=False)


def test_a_second_trainer_reuses_the_run_and_holds_what_training_would_have_left(tmp_path):
    root = tmp_path / "cache"
    first = new_trainer(tmp_path, "a")
    ran = cached_fit(first, *data(), name="tiny", root=root)
    generator_after_training = torch.get_rng_state()
    assert not ran.reused and ran.seconds > 0 and first.step == 12
    second = new_trainer(tmp_path, "b")
    reused = cached_fit(second, *data(), name="tiny", root=root)
    assert reused.reused and reused.folder == ran.folder and reused.history == ran.history
    assert reused.seconds == ran.seconds and second.step == 12 and second.history == ran.history
    assert torch.equal(torch.get_rng_state(), generator_after_training)  # as training leaves it
    # Trained again without the cache: the same weights, bit for bit (the cache's premise on a CPU).
    third = new_trainer(tmp_path, "c")
    assert not cached_fit(third, *data(), name="tiny", root=tmp_path / "elsewhere").reused
    for a, b, c in zip(first.model.state_dict().values(), second.model.state_dict().values(),
                       third.model.state_dict().values()):
        assert torch.equal(a, b) and torch.equal(a, c)
    # The kept checkpoints come back (weights only) and average as the trained ones do.
    names = [p.name for p in checkpoint_paths(tmp_path / "b")]
    assert names == [p.name for p in checkpoint_paths(tmp_path / "a")] == ["step_0000009.pt", "step_0000012.pt"]
    for a, b in zip(average_checkpoints(checkpoint_paths(tmp_path / "a")).values(),
                    average_checkpoints(checkpoint_paths(tmp_path / "b")).values()):
        assert torch.equal(a, b)


def test_anything_the_run_depends_on_changes_the_key(tmp_path):
    base = run_key(new_trainer(tmp_path), *data())
    assert run_key(new_trainer(tmp_path), *data()) == base
    assert run_key(new_trainer(tmp_path, seed=1), *data()) != base            # weights and dropout
    assert run_key(new_trainer(tmp_path, max_steps=13), *data()) != base      # the configuration
    assert run_key(new_trainer(tmp_path), *data(seed=1)) != base              # the batches
    assert run_key(new_trainer(tmp_path, progress=True), *data()) == base     # how loudly: not
    assert run_key(new_trainer(tmp_path, "elsewhere"), *data()) == base       # where: not


def test_the_code_fingerprint_reads_the_training_code(tmp_path):
    package = tmp_path / "aiayn"
    (package / "train").mkdir(parents=True)
    (package / "lab").mkdir()
    (package / "train" / "trainer.py").write_text("x = 1\n")
    for name in ("_checks.py", "config.py", "stats.py"):
        (package / name).write_text("z = 1\n")
    (package / "lab" / "plots.py").write_text("y = 1\n")
    before = code_fingerprint(package)
    (package / "lab" / "plots.py").write_text("y = 2\n")  # not training code
    (package / "stats.py").write_text("z = 2\n")
    assert code_fingerprint(package) == before
    (package / "config.py").write_text("z = 2\n")  # the model's configuration: training code
    assert code_fingerprint(package) != before
    (package / "train" / "trainer.py").write_text("x = 2\n")
    assert code_fingerprint(package) != before


def test_a_run_cut_short_or_from_another_key_is_not_reused(tmp_path):
    root = tmp_path / "cache"
    ran = cached_fit(new_trainer(tmp_path, "a"), *data(), name="tiny", root=root)
    record = json.loads((ran.folder / "run.json").read_text())
    record["key"] = "0" * 64  # a folder whose record names another run
    (ran.folder / "run.json").write_text(json.dumps(record))
    assert not cached_fit(new_trainer(tmp_path, "b"), *data(), name="tiny", root=root).reused
    assert not list(root.glob("*.partial"))


def test_off_always_trains_and_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(run_cache, "DEFAULT_ROOT", tmp_path / "cache")
    monkeypatch.setenv("AIAYN_RUN_CACHE", "off")
    result = cached_fit(new_trainer(tmp_path), *data(), name="tiny")
    assert not result.reused and result.folder is None and not (tmp_path / "cache").exists()
    monkeypatch.setenv("AIAYN_RUN_CACHE", str(tmp_path / "mine"))
    assert cached_fit(new_trainer(tmp_path, "b"), *data(), name="tiny").folder.parent == tmp_path / "mine"


def test_older_runs_of_a_name_are_pruned(tmp_path):
    root = tmp_path / "cache"
    folders = []
    for steps in (6, 7, 8):
        folders.append(cached_fit(new_trainer(tmp_path, f"s{steps}", max_steps=steps), *data(),
                                  name="tiny", root=root).folder)
        time.sleep(0.01)
    kept = sorted(p for p in root.iterdir() if p.is_dir())
    assert len(kept) == run_cache.KEEP_PER_NAME and folders[0] not in kept


@pytest.mark.skipif(run_cache.fcntl is None, reason="no file lock on this platform")
def test_a_second_caller_waits_for_the_lock(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    trainer = new_trainer(tmp_path)
    key = run_key(trainer, *data())
    lock = root / f"tiny-{key[:16]}.lock"
    done = []
    with run_cache._locked(lock):  # another process "training"
        thread = threading.Thread(target=lambda: done.append(cached_fit(trainer, *data(), name="tiny", root=root)))
        thread.start()
        time.sleep(0.5)
        assert not done  # still waiting
    thread.join(60)
    assert done and not done[0].reused


def test_bad_calls_raise(tmp_path):
    trainer = new_trainer(tmp_path)
    with pytest.raises(ValueError, match="name"):
        cached_fit(trainer, *data(), name="../x", root=tmp_path / "cache")
    trainer.step = 3
    with pytest.raises(ValueError, match="already made 3 updates"):
        cached_fit(trainer, *data(), name="tiny", root=tmp_path / "cache")
