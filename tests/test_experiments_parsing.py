"""The parsing experiment (§6.3): the committed results file matches the code that wrote it.

CI re-runs a small part of the committed run: the treebank (its checksums), the first training
steps (the loss and learning rate of the committed history), and the baselines' scores; and it
runs the whole pipeline, command line included, on a tiny configuration."""

import json

import pytest
import torch
from nltk import Tree

from aiayn.data.treebank import Treebank, checksum, flat
from aiayn.experiments import parsing
from aiayn.experiments.record import read_results
from aiayn.inference.evalb import Score


@pytest.fixture(scope="module")
def record():
    return read_results(parsing.RESULTS)


@pytest.fixture(scope="module")
def data():
    return Treebank().split(**parsing.DATA)


def test_committed_run_used_this_configuration_and_the_papers_decoding(record):
    values = record["values"]
    assert values["model"] == parsing.MODEL
    assert {k: values["training"][k] for k in parsing.TRAINING} == parsing.TRAINING
    assert {k: values["decoding"][k] for k in parsing.DECODING} == parsing.DECODING
    assert parsing.DECODING == {"beam_size": 21, "alpha": 0.3, "max_extra_len": 300}  # §6.3
    assert values["data"]["split"] == "test" and values["data"]["scored"] == parsing.DATA["test"]
    assert record["command"] == "python -m aiayn.experiments.parsing" and record["threads"] == 1
    assert values["training"]["cpu_seconds"] <= 180, "the budget: three minutes of one CPU thread"
    t = parsing.TRAINING  # the model scored is the average of the last checkpoints (§6.1)
    last = t["max_steps"] - (t["average_last"] - 1) * t["checkpoint_every"]
    assert values["training"]["averaged_steps"] == list(range(last, t["max_steps"] + 1, t["checkpoint_every"]))


def test_treebank_reproduces_its_checksums(record, data):
    assert {name: checksum(trees) for name, trees in data.items()} == record["values"]["data"]["checksums"]


def test_first_training_steps_reproduce_the_committed_history(record, data):
    torch.set_num_threads(1)
    every = parsing.TRAINING["log_every"]
    trainer, per_epoch = parsing.train(data, 2 * every, parsing.DATA["seed"])
    committed = record["values"]["training"]["history"][:2]
    assert [h["step"] for h in trainer.history] == [h["step"] for h in committed] == [every, 2 * every]
    for ours, theirs in zip(trainer.history, committed):
        assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-4)  # other CPUs round differently
        assert ours["lr"] == pytest.approx(theirs["lr"], rel=1e-9)
    assert record["values"]["training"]["epochs"] == pytest.approx(parsing.TRAINING["max_steps"] / per_epoch)


def test_baselines_and_totals_reproduce(record, data):
    values = record["values"]
    golds = data["test"][:values["data"]["scored"]]
    for name, make in (("right_branching", parsing.right_branching), ("flat", parsing.flat_tree)):
        assert parsing.evaluate(golds, [make(g) for g in golds]) == values["scores"][name]
    for name, s in values["scores"].items():
        total = Score(s["matched"], s["gold"], s["test"], s["sentences"], s["complete_match"])
        assert (total.precision, total.recall, total.f1) == (s["precision"], s["recall"], s["f1"]), name
        parts = sum((Score(b["matched"], b["gold"], b["test"], b["sentences"], b["complete_match"])
                     for b in s["by_length"].values()), Score())
        assert parts == total, f"{name}: the length bins cover every sentence"
    for failure in values["failures"]:
        gold = golds[failure["index"]]
        assert failure["gold"] == flat(gold) and failure["f1"] < 100


def test_right_branching_and_flat_trees():
    gold = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (PRP her))) (. .))")
    assert flat(parsing.right_branching(gold)) == "(S (DT the) (NP (NN dog) (NP (VBD saw) (NP (PRP her) (. .)))))"
    assert flat(parsing.flat_tree(gold)) == "(S (DT the) (NN dog) (VBD saw) (PRP her) (. .))"


def test_the_whole_pipeline_on_a_tiny_configuration(monkeypatch, tmp_path, capsys):
    # Same code path as the committed run, sized to take seconds: a small treebank, a tiny
    # model, a few updates, outputs of at most input length + 5 tokens (an untrained model
    # would use all 300). Its trees are malformed and get repaired.
    torch.set_num_threads(1)
    monkeypatch.setitem(parsing.DECODING, "max_extra_len", 5)
    monkeypatch.setitem(parsing.DATA, "train", 300)
    monkeypatch.setitem(parsing.DATA, "test", 6)
    monkeypatch.setattr(parsing, "MODEL", {**parsing.MODEL, "d_model": 16, "num_heads": 2, "d_ff": 32})
    monkeypatch.setattr(parsing, "TRAINING", {**parsing.TRAINING, "checkpoint_every": 1, "average_last": 2})
    out = tmp_path / "parsing.json"
    assert parsing.main(["--steps", "3", "--out", str(out)]) == 0
    values = json.loads(out.read_text())["values"]
    assert values["data"]["scored"] == 6 and len(values["training"]["history"]) == 1
    assert values["training"]["seed"] == parsing.DATA["seed"]
    rows = values["per_sentence"]
    assert len(rows["length"]) == len(rows["transformer"]) == len(rows["transformer_greedy"]) == 6
    for name in ("transformer", "transformer_greedy"):  # the sentences add up to the corpus score
        s = values["scores"][name]
        assert [sum(column) for column in zip(*rows[name])] == [s["matched"], s["gold"], s["test"]]
    assert values["training"]["averaged_steps"] == [2, 3]  # the last two checkpoints, averaged
    assert set(values["scores"]) == {"transformer", "transformer_greedy", "grammar", "right_branching", "flat"}
    assert values["scores"]["grammar"]["f1"] > 50 and values["scores"]["flat"]["precision"] == 100.0
    assert all(f["repairs"] for f in values["failures"] if "TOP" in f["predicted"])
    capsys.readouterr()


def test_the_seed_moves_the_training_and_keeps_the_treebank(data):
    torch.set_num_threads(1)
    every = parsing.TRAINING["log_every"]
    small = {"train": data["train"][:200]}
    first, again, other = (parsing.train(small, every, seed)[0].history[0]["loss"] for seed in (0, 0, 1))
    assert first == again and first != other  # same seed, same loss; another seed, another


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--sentences", "1001"], ["--split", "dev", "--sentences", "501"],
                                  ["--seed", "-1"]])
def test_bad_command_lines_exit_2_with_one_line(argv, capsys):
    assert parsing.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m aiayn.experiments.parsing: error:")


def test_sentences_of_several_seeds_are_summed_into_one_row_each():
    runs = [{"per_sentence": {"length": [5, 25], "transformer": [[3, 4, 4], [10, 20, 18]]}},
            {"per_sentence": {"length": [5, 25], "transformer": [[4, 4, 4], [12, 20, 19]]}}]
    assert parsing.by_sentence(runs, "transformer") == [[7, 8, 8], [22, 40, 37]]
    assert parsing.by_sentence(runs, "transformer", longer_than=20) == [[22, 40, 37]]
    with pytest.raises(ValueError, match="^runs: not the same sentences"):
        parsing.by_sentence([runs[0], {"per_sentence": {"length": [5, 26], "transformer": [[0, 0, 0]] * 2}}], "transformer")
    with pytest.raises(ValueError, match="^runs: needs"):
        parsing.by_sentence([], "transformer")
