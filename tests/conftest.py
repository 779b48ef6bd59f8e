"""Shared fixtures: the two implementations behind one interface, so every behavioural test
runs against both (LLMs-from-scratch style: parametrised over implementations)."""

import types

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import aiayn.np as anp_pkg
from aiayn.np import attention as np_attention, decoding as np_decoding, embeddings as np_embeddings
from aiayn.np import feedforward as np_feedforward
from aiayn.np import masks as np_masks, model as np_model, nn as np_nn
from aiayn.pt import attention as pt_attention, decoding as pt_decoding, embeddings as pt_embeddings
from aiayn.pt import feedforward as pt_feedforward
from aiayn.pt import masks as pt_masks, model as pt_model

# The modules that exist in both aiayn.np and aiayn.pt with the same public names.
MIRRORED = ["attention", "decoder", "decoding", "embeddings", "encoder", "feedforward",
            "incremental", "masks", "model", "normalization",
            # the later choices of the part "After the paper" (issue 57)
            "chunked", "decoder_only", "gqa", "rmsnorm", "rotary", "swiglu", "variant_cache", "variants"]

NUMPY = types.SimpleNamespace(
    name="numpy", attention=np_attention, feedforward=np_feedforward, masks=np_masks, embeddings=np_embeddings,
    model=np_model, decoding=np_decoding, seed=np_nn.manual_seed,
    array=lambda x: np.asarray(x), to_numpy=lambda x: np.asarray(x),
)
TORCH = types.SimpleNamespace(
    name="torch", attention=pt_attention, feedforward=pt_feedforward, masks=pt_masks, embeddings=pt_embeddings,
    model=pt_model, decoding=pt_decoding, seed=torch.manual_seed,
    array=lambda x: torch.as_tensor(np.asarray(x)), to_numpy=lambda x: x.detach().numpy(),
)


@pytest.fixture(params=[NUMPY, TORCH], ids=["numpy", "torch"])
def impl(request):
    return request.param


@pytest.fixture
def style():
    """The course's matplotlib style (its CJK font) for one test, restored and every figure
    closed afterwards (the figure tests)."""
    from aiayn.plotting import use_course_style

    with matplotlib.rc_context():
        use_course_style()
        yield
    plt.close("all")


@pytest.fixture(autouse=True)
def _seed_everything():
    np.random.seed(0)
    torch.manual_seed(0)
    anp_pkg.manual_seed(0)


# The files that take longest, longest first: seconds of work per file in CI on a 2-core machine
# (pytest --durations of a run of tools/test.sh at the learner-first rewrite, the book build
# measured with the browser test). pytest.ini turns off xdist's own order (files with the most
# tests first) with --no-loadscope-reorder, so files are handed to the two workers in the order
# below, then in collection order. Starting the longest first (longest-processing-time
# scheduling) keeps one worker from running a long file alone at the end while the other has
# finished.
LONGEST_FIRST = (
    "tests/test_browser.py",                 # ~220 s, most of it building the book
    "chapters/en/training_multi30k.ipynb",   # ~160 s, most of it the CPU training run
    "tests/test_portable_outputs.py",        # ~90 s: nbval again under a second numeric environment
    "tests/test_jupyterlab.py",              # ~50-80 s: JupyterLab and Chromium, both languages
    "chapters/en/copy_task.ipynb",           # ~50 s
    "chapters/zh/copy_task.ipynb",
    "tests/test_experiments_table3.py",      # ~35 s
    "tests/test_experiments_recipes.py",
    # ~30 s after the English run it reuses (aiayn.train.run_cache); earlier, it waits on its lock
    "chapters/zh/training_multi30k.ipynb",
    "tests/test_explorers_browser.py",
    "tests/test_after_multi30k.py",
    "chapters/en/from_scratch.ipynb",
    "chapters/zh/from_scratch.ipynb",
    "tests/test_grading_time_limit.py",
    "tests/test_train_trainer.py",
    "tests/test_train_cli.py",
    "tests/test_lab.py",
    "chapters/en/constituency_parsing.ipynb",
    "chapters/zh/constituency_parsing.ipynb",
)


def pytest_collection_modifyitems(items):
    """Reorders files longest first (LONGEST_FIRST); a stable sort keeps every file's tests, and
    every notebook's cells, in their own order."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.fixture
def one_thread():
    """One torch thread for the test (tiny models: a second thread only adds synchronisation, and
    stalls on a busy machine); the count before is put back."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


_LARGEST = {}


def record_difference(kind: str, diff: float) -> None:
    """Keeps the largest difference measured per comparison kind, reported at the end."""
    _LARGEST[kind] = max(diff, _LARGEST.get(kind, 0.0))


def pytest_terminal_summary(terminalreporter):
    for kind, diff in sorted(_LARGEST.items()):  # shown when run without xdist
        terminalreporter.write_line(f"largest max-abs difference, {kind}: {diff:.3e}")


def copy_pairs(n: int, seed: int, vocab: int, lengths: tuple[int, int]) -> list[tuple[list, list]]:
    """n (source ids, target ids) pairs of the copy task over symbols 4..vocab-1, each of
    lengths[0] to lengths[1] - 1 symbols: training data small enough for a test."""
    from aiayn.data.batching import source_ids, target_ids

    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        seq = torch.randint(4, vocab, (int(torch.randint(*lengths, (1,), generator=g)),), generator=g).tolist()
        out.append((source_ids(seq), target_ids(seq)))
    return out


def rand(*shape, seed=0):
    """float64 standard normal, reproducible per call site."""
    return np.random.default_rng(seed).standard_normal(shape)


def tokens(batch, length, vocab, seed=0, pad_tail=None, pad_id=0):
    """Token ids in [1, vocab); ``pad_tail[b]`` trailing positions of row b set to ``pad_id``."""
    ids = np.random.default_rng(seed).integers(1, vocab, size=(batch, length))
    for b, n in enumerate(pad_tail or []):
        if n:
            ids[b, -n:] = pad_id
    return ids
