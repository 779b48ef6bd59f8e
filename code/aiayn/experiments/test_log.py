"""Every decode of test_2016_flickr behind the recipe's pages (multi30k_recipe, lab_recipe): which
model, with which decoding setting, at which commit, and whether before or after the seal.

    from aiayn.experiments.test_log import decodes
    for d in decodes():
        print(d.commit, d.model, d.setting, round(d.bleu, 2), "sealed" if d.sealed else "before the seal")

The test set is sealed since commit ``SEAL["commit"]``: from then on ``budget`` scores validation
only, and ``decoding`` decodes the test set once, for the model and setting that validation chose
(a GPU run without ``--set``, a configuration already chosen, reports test too). Before the seal,
``budget`` decoded test at every point of every run, a GPU run decoded it, and the first version
of ``decoding`` decoded it with two settings and compared them there. The results files under
``results/`` hold most of these decodes; the decoding files that later runs replaced do not, so
``REPLACED`` keeps what they decoded, each with the git object it came from
(tests/test_experiments_recipes.py checks them against git where the history is at hand). A
decode is "sealed" when its run finished after the seal's commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .budget import run_parts
from .record import REPOSITORY, read_results

RESULTS = REPOSITORY / "results"
SEAL = {"commit": "8e9f0ec", "time": "2026-11-28T11:21:19+00:00"}
SPLIT = "test_2016_flickr"
REPLACED = (
    {"source": "ceb238e:results/recipes/decoding/multi30k-laptop_seed1.json", "commit": "9bc1b13",
     "finished": "2026-11-27T04:07:45+00:00", "model": "multi30k-laptop, seed 1, 3,950 updates",
     "decodes": {"beam 4, alpha 0.6": 39.94, "beam 5, alpha 1.0": 39.87}},
    {"source": "474f82e:results/recipes/decoding/multi30k-laptop_seed1.json", "commit": "401981c",
     "finished": "2026-11-28T14:08:13+00:00", "model": "multi30k-laptop, seed 1, 3,950 updates",
     "decodes": {"beam 4, alpha 0.6": 39.63}},
)


@dataclass(frozen=True)
class Decode:
    """One decode of the test set: ``source`` the file (or git object) that holds its score."""

    source: str
    commit: str
    finished: str
    model: str
    setting: str
    bleu: float

    @property
    def sealed(self) -> bool:
        """Decoded after the seal (ISO times in UTC compare in order as text)."""
        return self.finished >= SEAL["time"]


def _averaged_step(checkpoint: str) -> int:
    """3950 of ``runs/budget/<run>/averaged_step3950.pt`` (``budget`` names its averaged models so)."""
    found = re.fullmatch(r"averaged_step(\d+)\.pt", Path(checkpoint).name)
    if not found:
        raise ValueError(f"checkpoint: not an averaged model of a budget run (averaged_step<N>.pt): {checkpoint!r}")
    return int(found.group(1))


def _name(values: dict) -> str:
    changes = "".join(f" {k}={v}" for k, v in (values.get("changes") or {}).items())
    return f"{values['config']}{changes}, seed {values['seed']}"


def budget_decodes(path: Path) -> list[Decode]:
    """The test decodes of one ``budget`` results file: every point that holds a test score,
    attributed to the part of the run (``--resume``) that trained it."""
    record = read_results(path)
    parts = run_parts(record)
    found = []
    for point in record["values"]["points"]:
        if f"{SPLIT}_bleu" not in point:
            continue
        part = next((p for p in parts[:-1] if point["step"] in (p.get("steps") or ())), parts[-1])
        found.append(Decode(path.relative_to(RESULTS.parent).as_posix() if path.is_relative_to(RESULTS.parent) else str(path),
                            part["commit"], record["finished"], f"{_name(record['values'])}, {point['step']:,} updates",
                            f"beam {point['beam_size']}, alpha {point['alpha']}", point[f"{SPLIT}_bleu"]))
    return found


def decodes(results: Path = RESULTS) -> list[Decode]:
    """Every test decode of the recipe, oldest first: the budget runs, the GPU runs, the decoding
    files and the decoding files that were replaced (``REPLACED``)."""
    results = Path(results)
    found = [d for path in sorted((results / "budget").glob("multi30k-laptop*.json")) for d in budget_decodes(path)]
    for path in sorted((results / "gpu").glob("multi30k-*_seed*.json")):
        record = read_results(path)
        v = record["values"]
        if f"{SPLIT}_bleu" in v:
            found.append(Decode(f"results/gpu/{path.name}", record["commit"], record["finished"],
                                f"{v['configuration']}, {v['steps']:,} updates (GPU)",
                                f"beam {v['beam_size']}, alpha {v['alpha']}", v[f"{SPLIT}_bleu"]))
    for entry in REPLACED:
        found += [Decode(entry["source"], entry["commit"], entry["finished"], entry["model"], setting, bleu)
                  for setting, bleu in entry["decodes"].items()]
    for path in sorted((results / "recipes" / "decoding").glob("*.json")):
        record = read_results(path)
        v = record["values"]
        found.append(Decode(f"results/recipes/decoding/{path.name}", record["commit"], record["finished"],
                            f"{path.stem.replace('_seed', ', seed ')}, {_averaged_step(v['checkpoint']):,} updates",
                            v["test_setting"], v["test_bleu"]))
    return sorted(found, key=lambda d: d.finished)


def in_language(text: str) -> str:
    """A model or setting of the log as the notebook's language writes it ("seed 1, 3,950 updates",
    "beam 4, alpha 0.6" on a Chinese page: 种子 1，3,950 次更新；束宽 4，α = 0.6)."""
    from ..plotting import current_language
    if current_language() != "zh":
        return text
    text = re.sub(r"\bseed (\d+)", r"种子 \1", text)
    text = re.sub(r"([\d,]+) updates", r"\1 次更新", text)
    text = re.sub(r"beam (\d+), alpha ([\d.]+)", r"束宽 \1，α = \2", text)
    return text.replace(", ", "，").replace(" (GPU)", "（GPU）")


def log_rows(found: list[Decode]) -> tuple[list, list]:
    """(headers, rows) for ``aiayn.show.table``: one row per decode, the sealed ones marked."""
    from ..plotting import tr
    headers = [tr("commit", "提交"), tr("model", "模型"), tr("decoding", "解码设置"), tr("test BLEU", "测试集 BLEU"),
               tr("when", "时间")]
    rows = [[d.commit, in_language(d.model), in_language(d.setting), f"{d.bleu:.2f}",
             tr("after the seal", "封存之后") if d.sealed else tr("before the seal*", "封存之前*")] for d in found]
    return headers, rows
