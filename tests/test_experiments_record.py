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
