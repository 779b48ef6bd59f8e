"""aiayn-train / aiayn-translate end to end on the tiny configuration, resumed, and under
torchrun with two processes (DDP, gloo on CPU): the same losses as one process."""

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from aiayn.train.checkpoint import checkpoint_paths, load_checkpoint
from aiayn.train.cli import train, translate_main

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AIAYN_DATA") or ROOT.parent / "shared" / "data")
pytestmark = pytest.mark.skipif(not (DATA / "multi30k").is_dir(),
                                reason=f"Multi30k not found in {DATA}/multi30k (set AIAYN_DATA)")
TINY = ["--config", "multi30k-tiny", "--data-dir", str(DATA), "--quiet", "--device", "cpu"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """One run of ``aiayn-train --config multi30k-tiny`` in this process."""
    out = tmp_path_factory.mktemp("single")
    torch.set_num_threads(1)
    return out, train(TINY + ["--out", str(out)])


def losses(out: Path, key="loss"):
    return [h[key] for h in json.loads((out / "history.json").read_text()) if key in h]


def test_train_writes_model_history_and_scores(single):
    out, result = single
    assert losses(out) and len(losses(out)) == 6 and len(losses(out, "val_loss")) == 2
    assert [p.name for p in checkpoint_paths(out / "checkpoints")] == ["step_0000004.pt", "step_0000006.pt"]
    averaged = load_checkpoint(out / "averaged.pt")
    assert averaged["averaged"] == ["step_0000004.pt", "step_0000006.pt"] and "tokenizer" in averaged["metadata"]
    assert json.loads((out / "results.json").read_text()) == pytest.approx(result)
    assert result["steps"] == 6 and 0 <= result["bleu"] <= 100
    assert "case:mixed" in result["signature"] and "tok:13a" in result["signature"]
    assert "case:lc" in result["signature_lowercase"]
    assert len((out / "test_2016_flickr.hyp.de").read_text(encoding="utf-8").splitlines()) == 8


def test_translate_reads_a_file_or_stdin_line_by_line(single, tmp_path, capsys, monkeypatch):
    out, _ = single
    text = "A man is riding a bike.\n\nTwo dogs play in the snow.\n"
    (tmp_path / "in.en").write_text(text, encoding="utf-8")
    translate_main(["--checkpoint", str(out / "averaged.pt"), "--beam", "2", "--device", "cpu",
                    str(tmp_path / "in.en")])
    from_file = capsys.readouterr().out.split("\n")
    assert len(from_file) == 4 and from_file[1] == "" and from_file[3] == ""  # 3 lines, the empty one kept
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    translate_main(["--checkpoint", str(out / "averaged.pt"), "--beam", "2", "--device", "cpu"])
    assert capsys.readouterr().out.split("\n") == from_file


def test_label_smoothing_can_be_switched_off(single, tmp_path):
    out, result = single
    plain = train(TINY + ["--out", str(tmp_path), "--steps", "2", "--no-eval", "--label-smoothing", "0"])
    assert result["label_smoothing"] == 0.1 and plain["label_smoothing"] == 0.0
    smoothed, unsmoothed = losses(out)[:2], losses(tmp_path)
    # Same initial weights and first batch: the first logged losses differ only by the objective.
    assert len(unsmoothed) == 2 and all(map(math.isfinite, unsmoothed))
    assert unsmoothed[0] != pytest.approx(smoothed[0], abs=1e-4)


def test_set_changes_configuration_fields_and_rejects_unknown_ones(tmp_path):
    result = train(TINY + ["--out", str(tmp_path), "--no-eval", "--set", "max_steps=2", "max_tokens=300",
                           "clip_grad_norm=1"])
    assert result["steps"] == 2 and result["changed"] == "clip_grad_norm=1 max_steps=2 max_tokens=300"
    assert math.isfinite(result["averaged_val_loss"])
    # Table 3's model variations are configuration fields too: narrow heads, learned positions.
    varied = train(TINY + ["--out", str(tmp_path / "varied"), "--no-eval", "--set", "max_steps=1",
                           "d_k=4", "d_v=8", "positional=learned"])
    config = load_checkpoint(tmp_path / "varied" / "averaged.pt")["model_config"]
    assert (config["d_k"], config["d_v"], config["positional"]) == (4, 8, "learned"), config
    assert varied["changed"] == "d_k=4 d_v=8 max_steps=1 positional=learned"
    for bad in ("max_tokens", "colour=red", "max_tokens=lots"):
        with pytest.raises(SystemExit) as exit_info:
            train(TINY + ["--out", str(tmp_path), "--set", bad])
        assert exit_info.value.code == 2


def test_resume_continues_the_run_exactly(single, tmp_path):
    out, _ = single
    train(TINY + ["--out", str(tmp_path), "--steps", "3", "--no-eval"])
    train(TINY + ["--out", str(tmp_path), "--resume", "--no-eval"])
    assert losses(tmp_path) == losses(out)


def test_two_processes_take_the_same_steps_as_one(single, tmp_path):
    out, _ = single
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "aiayn.train", *TINY, "--out", str(tmp_path), "--no-eval"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 process(es)" in proc.stdout
    assert losses(tmp_path) == pytest.approx(losses(out), rel=1e-5)
    assert losses(tmp_path, "val_loss") == pytest.approx(losses(out, "val_loss"), rel=1e-5)
    assert losses(tmp_path, "lr") == losses(out, "lr")


# A user's mistake is one line on stderr, exit status 2, no traceback --------------------------
def one_line_error(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def checkpoint_cases(averaged: Path, folder: Path) -> dict:
    """Files that are not usable checkpoints, each with what its message must say."""
    good = load_checkpoint(averaged)
    data = averaged.read_bytes()
    cases = {"missing.pt": (None, "not found"), "folder.pt": (None, "is a folder"),
             "random.pt": (os.urandom(4096), "not a checkpoint torch.load can read"),
             "truncated.pt": (data[: len(data) // 2], "not a checkpoint torch.load can read"),
             "empty.pt": (b"", "not a checkpoint torch.load can read"),
             "module.pt": (torch.nn.Linear(2, 2), "pickled Python objects"),
             "list.pt": ([1, 2], "holds a list"),
             "no_keys.pt": ({"step": 3}, "no tokenizer"),
             "state_dict.pt": (good["model"], "no tokenizer"),
             "bad_config.pt": (good | {"model_config": good["model_config"] | {"d_model": 7}},
                               "model_config is not valid"),
             "few_weights.pt": (good | {"model": dict(list(good["model"].items())[:2])},
                                "weights do not fit"),
             "bad_tokenizer.pt": (good | {"metadata": {"tokenizer": "{not json"}},
                                  "tokenizer cannot be read")}
    (folder / "folder.pt").mkdir()
    for name, (content, _) in cases.items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        elif content is not None:
            torch.save(content, folder / name)
    return {name: words for name, (_, words) in cases.items()}


def test_translate_with_a_bad_checkpoint_says_which_and_why(single, tmp_path, capsys):
    out, _ = single
    (tmp_path / "in.en").write_text("A dog runs.\n", encoding="utf-8")
    for name, words in checkpoint_cases(out / "averaged.pt", tmp_path).items():
        err = one_line_error(translate_main, ["--checkpoint", str(tmp_path / name), "--device",
                                              "cpu", str(tmp_path / "in.en")], capsys)
        assert words in err and name in err and "aiayn-train" in err, err


def test_translate_with_bad_input_says_which_and_why(single, tmp_path, capsys, monkeypatch):
    out, _ = single
    args = ["--checkpoint", str(out / "averaged.pt"), "--device", "cpu"]
    files = {"utf16.en": ("A dog".encode("utf-16"), "is not UTF-8 text (byte 0xff at offset 0)"),
             "latin1.en": ("Ein Mädchen".encode("latin-1"), "is not UTF-8 text (byte 0xe4"),
             "empty.en": (b"", "is empty"), "blank.en": (b"\n \n\n", "is empty"),
             "missing.en": (None, "not found"), "folder.en": (None, "is a folder")}
    (tmp_path / "folder.en").mkdir()
    for name, (content, words) in files.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        err = one_line_error(translate_main, args + [str(tmp_path / name)], capsys)
        assert words in err and f"input file {tmp_path / name}" in err, err
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(PermissionError()))
    assert "permission denied" in one_line_error(translate_main, args + ["x.en"], capsys)
    monkeypatch.undo()
    for stdin, words in ((b"\xff\xfe", "standard input is not UTF-8"), (b"", "standard input is empty")):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        assert words in one_line_error(translate_main, args, capsys)
    for bad, words in ((["--beam", "0"], "--beam must be"), (["--device", "potato"], "not a device")):
        assert words in one_line_error(translate_main, args + bad + ["x.en"], capsys)


def test_train_with_an_invalid_configuration_stops_before_reading_data(tmp_path, capsys):
    for bad, words in ((["--set", "d_k=0"], "d_k must be a positive int, got 0"),
                       (["--set", "vocab_size=3"], "vocab_size=3 leaves no room"),
                       (["--steps", "-2"], "max_steps must be a positive int, got -2")):
        err = one_line_error(train, TINY[:2] + ["--data-dir", str(tmp_path / "none"), "--out",
                                                str(tmp_path)] + bad, capsys)
        assert words in err and "change the --set" in err, err


def test_train_without_its_data_says_where_to_put_it(tmp_path, capsys, monkeypatch):
    from aiayn.data import multi30k
    monkeypatch.setattr(multi30k, "BASE_URL", "http://127.0.0.1:9/")  # nothing listens: refused
    args = TINY[:2] + ["--out", str(tmp_path / "out"), "--device", "cpu", "--data-dir"]
    err = one_line_error(train, args + [str(tmp_path)], capsys)
    assert f"{tmp_path / 'multi30k' / 'train.en.gz'} is missing and downloading" in err
    assert "AIAYN_DATA" in err and "--data-dir" in err and "a typo?" not in err
    err = one_line_error(train, args + [str(tmp_path / "typo")], capsys)
    assert f"({tmp_path / 'typo'} did not exist: a typo?)" in err
    (tmp_path / "multi30k" / "train.en.gz").write_bytes(b"not the corpus")
    err = one_line_error(train, args + [str(tmp_path)], capsys)
    assert "train.en.gz is corrupt or incomplete" in err and "Delete the file" in err


def test_the_console_script_exits_2_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-c", "from aiayn.train.cli import translate_main; "
                           "translate_main()", "--checkpoint", str(tmp_path / "none.pt")],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"aiayn-translate: error: checkpoint {tmp_path / 'none.pt'} not found; pass a checkpoint "
        "written by aiayn-train, e.g. runs/multi30k-cpu/averaged.pt (aiayn-train --config "
        "multi30k-cpu writes that one)"]
