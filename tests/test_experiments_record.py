"""Results files carry their provenance, and a reader refuses one that does not."""

import json

import pytest

from aiayn.experiments.record import Recorder, read_results


def test_written_file_records_values_and_how_they_were_obtained(tmp_path):
    with Recorder(command="python -m aiayn.experiments.demo --seed 0") as rec:
        sum(range(10_000))
    record = rec.write(tmp_path / "sub" / "run.json", {"bleu": 21.6, "seed": 0})
    on_disk = read_results(tmp_path / "sub" / "run.json")
    assert on_disk == record
    assert on_disk["values"] == {"bleu": 21.6, "seed": 0}
    assert on_disk["command"] == "python -m aiayn.experiments.demo --seed 0"
    assert len(on_disk["commit"]) >= 7 and isinstance(on_disk["code_changes"], list)
    assert "logical CPUs" in on_disk["machine"] and on_disk["threads"] >= 1
    assert 0 <= on_disk["cpu_seconds"] and 0 <= on_disk["seconds"] < 60
    assert not list(tmp_path.rglob("*.tmp")), "the write is atomic: no temporary file left"


def test_reader_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="no results file"):
        read_results(tmp_path / "absent.json")
    (tmp_path / "bare.json").write_text(json.dumps({"values": {}}))
    with pytest.raises(ValueError, match="lacks command, commit, machine, threads, seconds"):
        read_results(tmp_path / "bare.json")


def test_provenance_names_changed_files_whole_and_a_copied_trees_commit(monkeypatch):
    """`git status --porcelain` lines begin with a space (" M code/..."): the path keeps its first
    letter. A working tree copied to another machine names its commit in $AIAYN_COMMIT."""
    from aiayn.experiments import record
    status = " M code/aiayn/train/trainer.py\n?? code/aiayn/new.py\n"
    monkeypatch.setattr(record.subprocess, "run", lambda args, **kw: type(
        "Done", (), {"returncode": 0, "stdout": status if "status" in args else "abc1234\n"})())
    monkeypatch.delenv("AIAYN_COMMIT", raising=False)
    assert record.provenance() == {"commit": "abc1234",
                                   "code_changes": ["code/aiayn/new.py", "code/aiayn/train/trainer.py"]}
    monkeypatch.setenv("AIAYN_COMMIT", "ddc9f65")
    assert record.provenance() == {"commit": "ddc9f65", "code_changes": []}
