"""The Multi30k recipe (issue 14): every named configuration trains; the ranking, test, budget
and throughput commands write complete results files; the budget run's early models are those
of shorter runs; the GPU script's dry run works on CPU; the committed results match the code.

The experiments themselves take hours; here each command runs a few updates of a small model
on a slice of Multi30k (``--set`` / ``--tiny``), which exercises the same code paths."""

import dataclasses
import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from aiayn.data.batching import TokenBatches, source_ids, target_ids
from aiayn.experiments import budget, decoding, gpu, recipes
from aiayn.experiments.mfu import training_flops
from aiayn.experiments.recipe_runs import run_config, train_command
from aiayn.experiments.recipe_table import (Row, Spread, Table, chapter_numbers, compare_rows, one_run_against,
                                            recipe_table)
from aiayn.experiments.record import Recorder, processor_name, read_results
from aiayn.inference.bleu import corpus_bleu
from aiayn.machine import describe
from aiayn.pt.model import Transformer
from aiayn.train.checkpoint import load_checkpoint
from aiayn.train.cli import train
from aiayn.train.configs import CONFIGS
from aiayn.train.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (Path(__import__("os").environ.get("AIAYN_DATA") or DATA) / "multi30k").is_dir(),
    reason="Multi30k not found (set AIAYN_DATA)")
# A small model on 400 training pairs, scored on 8 sentences: seconds per run.
SMALL = ["max_train_pairs=400", "max_test_pairs=8", "vocab_size=300", "d_model=32", "num_heads=2",
         "num_layers=1", "d_ff=64", "max_tokens=400"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.mark.parametrize("name", ["multi30k-cpu", "multi30k-laptop", "multi30k-small"])
def test_every_recipe_configuration_takes_two_steps(name):
    """(multi30k-gpu and multi30k-tiny: tests/test_train_trainer.py and test_train_cli.py.)"""
    run = CONFIGS[name]
    torch.manual_seed(0)
    model = Transformer(run.model_config(run.vocab_size))
    pairs = [(source_ids([5, 6, 7]), target_ids([8, 9])), (source_ids([10, 11]), target_ids([12, 13, 14]))]
    history = Trainer(model, run.train_config("cpu", max_steps=2, log_every=1, progress=False)).fit(
        TokenBatches(pairs, 100))
    assert len(history) == 2 and all(math.isfinite(h["loss"]) for h in history)


def test_training_flops_equal_torch_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode
    config = CONFIGS["multi30k-small"].model_config(300)
    model = Transformer(config)
    with FlopCounterMode(display=False) as counter:
        model(torch.randint(4, 300, (3, 7)), torch.randint(4, 300, (3, 5))).sum().backward()
    assert counter.get_total_flops() == training_flops(config, 3, 7, 5)


@needs_data
def test_rank_test_and_table_write_complete_files(tmp_path):
    common = ["--candidates", "small", "--seeds", "0", "1", "--results", str(tmp_path / "recipes"),
              "--runs", str(tmp_path / "runs")]
    assert recipes.main(["rank", *common, "--steps", "4", "--set", *SMALL]) == 0
    assert recipes.main(["test", *common]) == 0
    for seed in (0, 1):
        record = read_results(tmp_path / "recipes" / "rank" / f"small_seed{seed}.json")
        values = record["values"]
        assert values["steps"] == 4 and values["val_sentences"] == 8 and 0 <= values["val_bleu"] <= 100
        assert "tok:13a" in values["val_signature"] and record["cpu_seconds"] > 0
        assert values["aiayn_train"].startswith("aiayn-train --config multi30k-cpu --set d_model=")
        assert "dropout=0.3" in values["aiayn_train"] and f"--seed {seed} " in values["aiayn_train"]
        test = read_results(tmp_path / "recipes" / "test" / f"small_seed{seed}.json")["values"]
        assert test["test_2016_flickr_sentences"] == 8
    row = recipe_table(tmp_path / "recipes").row("small")
    assert row.seeds == (0, 1) and row.test_bleu is not None and len(row.val_loss.values) == 2
    numbers = chapter_numbers(tmp_path)
    assert numbers["recipe_best"] == "small" and numbers["recipe_small_seeds"] == 2
    assert numbers["recipe_small_val_bleu"] == round(row.val_bleu.mean, 1) and "recipe_small_test_bleu" in numbers
    # The stored command is the run: aiayn-train with it gives the same averaged model.
    argv = shlex.split(read_results(tmp_path / "recipes" / "rank" / "small_seed1.json")["values"]["aiayn_train"])
    again = tmp_path / "again"
    train(argv[1:argv.index("--out")] + ["--out", str(again), "--no-eval", "--quiet"])
    first = load_checkpoint(tmp_path / "runs" / "small_seed1" / "averaged.pt")["model"]
    assert all(torch.equal(v, load_checkpoint(again / "averaged.pt")["model"][k]) for k, v in first.items())


@needs_data
def test_budget_keeps_the_models_that_shorter_runs_give(tmp_path):
    results, out = tmp_path / "results", tmp_path / "budget"
    assert recipes.main(["budget", "--config", "multi30k-tiny", "--threads", "1", "--steps-at", "1=2", "2=4",
                         "--results", str(results), "--out", str(out), "--quiet"]) == 0
    points = read_results(results / "multi30k-tiny.json")["values"]["points"]
    assert [(p["minutes"], p["step"]) for p in points] == [(1, 2), (2, 4)]
    assert all(p["val_sentences"] == 8 and p["cpu_seconds"] > 0 for p in points)
    # The test set is sealed: no budget decodes it (decoding does, once, for the model chosen).
    assert not any(key.startswith("test_2016_flickr") for p in points for key in p)
    assert points[0]["train_seconds"] < points[1]["train_seconds"]
    # The model kept after 2 updates is the one a 2-update run ends with.
    short = tmp_path / "short"
    train(["--config", "multi30k-tiny", "--steps", "2", "--out", str(short), "--no-eval", "--quiet",
           "--device", "cpu"])
    kept, fresh = load_checkpoint(out / "averaged_step2.pt")["model"], load_checkpoint(short / "averaged.pt")["model"]
    assert all(torch.equal(v, fresh[k]) for k, v in kept.items())


@needs_data
def test_budget_resume_adds_longer_budgets_and_keeps_the_earlier_points(tmp_path):
    results, out = tmp_path / "results", tmp_path / "budget"
    command = ["budget", "--config", "multi30k-tiny", "--threads", "1", "--results", str(results), "--out", str(out),
               "--quiet", "--steps-at", "1=2"]
    assert recipes.main(command) == 0
    first = read_results(results / "multi30k-tiny.json")
    assert recipes.main(command + ["2=4", "--resume"]) == 0
    record = read_results(results / "multi30k-tiny.json")
    points = record["values"]["points"]
    assert points[0] == first["values"]["points"][0]  # neither trained nor scored again
    assert [(p["minutes"], p["step"]) for p in points] == [(1, 2), (2, 4)]
    assert points[1]["train_seconds"] > points[0]["train_seconds"] and points[1]["val_sentences"] == 8
    assert record["values"]["resumed"] == {"command": first["command"], "commit": first["commit"],
                                           "machine": first["machine"], "seconds": first["seconds"], "steps": [2]}
    assert "--resume" in record["values"]["aiayn_train"]
    # Exact: the model kept at 4 updates is the one a 4-update run ends with.
    straight = tmp_path / "straight"
    train(["--config", "multi30k-tiny", "--steps", "4", "--out", str(straight), "--no-eval", "--quiet", "--device", "cpu"])
    kept, fresh = load_checkpoint(out / "averaged_step4.pt")["model"], load_checkpoint(straight / "averaged.pt")["model"]
    assert all(torch.equal(v, fresh[k]) for k, v in kept.items())
    # Carried on again: every earlier part's command stays in the file, the older ones nested.
    assert recipes.main(command + ["2=4", "3=6", "--resume"]) == 0
    third = read_results(results / "multi30k-tiny.json")
    assert third["values"]["resumed"]["command"] == record["command"] and third["values"]["resumed"]["steps"] == [2, 4]
    assert third["values"]["resumed"]["resumed"] == record["values"]["resumed"]
    assert [p["step"] for p in third["values"]["points"]] == [2, 4, 6]
    assert [part["command"] for part in budget.run_parts(third)] == [first["command"], record["command"], third["command"]]
    # What cannot be resumed says why, with exit status 2.
    assert recipes.main(command + ["2=4", "--resume"]) == 2  # nothing longer to add
    assert recipes.main(command + ["2=3", "3=6", "--resume"]) == 2  # 3 updates lie before the run's end
    assert recipes.main(command + ["2=6", "--resume", "--out", str(tmp_path / "elsewhere")]) == 2  # not its folder
    assert recipes.main(command + ["2=6", "--resume", "--results", str(tmp_path / "none")]) == 2  # no earlier file


@needs_data
def test_budget_with_set_names_its_file_after_the_changes(tmp_path):
    results, out = tmp_path / "results", tmp_path / "budget"
    assert recipes.main(["budget", "--config", "multi30k-tiny", "--threads", "1", "--steps-at", "1=2",
                         "--set", "dropout=0.2", "--results", str(results), "--out", str(out), "--quiet"]) == 0
    assert [p.name for p in results.iterdir()] == ["multi30k-tiny_dropout0.2.json"]
    values = read_results(results / "multi30k-tiny_dropout0.2.json")["values"]
    assert values["changes"] == {"dropout": "0.2"} and values["run"]["dropout"] == 0.2
    assert "--set dropout=0.2" in values["aiayn_train"]
    assert load_checkpoint(out / "averaged_step2.pt")["model_config"]["dropout"] == 0.2


@needs_data
def test_decoding_is_chosen_and_gated_on_validation_then_decodes_test_once(tmp_path, monkeypatch):
    train(["--config", "multi30k-tiny", "--steps", "2", "--out", str(tmp_path / "run"), "--no-eval", "--quiet",
           "--device", "cpu"])
    decoded = []  # which split each translate call decoded, by its number of sentences
    sizes = {}
    real_translate = decoding.translate

    def counting_translate(model, tokenizer, sources, beam, alpha):
        decoded.append((sizes[len(sources)], beam, alpha))
        return real_translate(model, tokenizer, sources, beam, alpha)

    monkeypatch.setattr(decoding, "translate", counting_translate)
    sizes |= {8: "val"}  # --max-sentences 8 for validation ...
    real_load = decoding.load_split

    def load(split, data_dir=None):  # ... and 7 for the test set, to tell the two apart
        src, ref = real_load(split, data_dir)
        if split == decoding.TEST_SPLIT:
            sizes[7] = split
            return src[:7], ref[:7]
        return src, ref

    monkeypatch.setattr(decoding, "load_split", load)
    assert recipes.main(["decoding", "--model", str(tmp_path / "run" / "averaged.pt"), "--name", "tiny",
                         "--beams", "1", "2", "--alphas", "0.6", "--max-sentences", "8",
                         "--results", str(tmp_path / "decoding")]) == 0
    values = read_results(tmp_path / "decoding" / "tiny.json")["values"]
    # The grid, plus the paper's beam 4 / alpha 0.6; the best on validation, the first of equals.
    assert [(r["beam_size"], r["alpha"]) for r in values["grid"]] == [(1, 0.6), (2, 0.6), (4, 0.6)]
    best = max(r["val_bleu"] for r in values["grid"])
    first_best = next(r for r in values["grid"] if r["val_bleu"] == best)
    assert values["chosen"] == {"beam_size": first_best["beam_size"], "alpha": first_best["alpha"]}
    chosen, paper = decoding.setting_name(**values["chosen"]), decoding.setting_name(*decoding.PAPER)
    # The gate runs on validation: a p-value only when the best is not the paper's.
    assert ("val_p_value" in values) == (chosen != paper) and "test_p_value" not in values
    if chosen != paper:  # Holm over every distinct setting of the grid against the paper's, the best picked from them
        others = {decoding.setting_name(r["beam_size"], r["alpha"]) for r in values["grid"]} - {paper}
        assert chosen in values["val_p_values"] and set(values["val_p_values"]) <= others and "Holm" in values["val_test"]
        assert values["val_p_value"] == decoding.holm_corrected(values["val_p_values"], chosen) >= values["val_p_values"][chosen]
    adopted = chosen if values.get("val_p_value", 1.0) < 0.05 else paper
    assert decoding.setting_name(**values["adopted"]) == values["test_setting"] == adopted
    assert set(values["val_hypotheses"]) == {paper, chosen}
    assert all(len(h) == values["val_sentences"] == 8 for h in values["val_hypotheses"].values())
    # The test set, decoded once, with the adopted setting, after every validation decoding.
    assert [d for d in decoded if d[0] == "test_2016_flickr"] == [("test_2016_flickr", *values["adopted"].values())]
    assert decoded[-1][0] == "test_2016_flickr" and len(decoded) == len(values["grid"]) + 1
    assert values["test_sentences"] == 7 and 0 <= values["test_bleu"] <= 100 and "case:lc" in values["signature_lowercase"]
    # Every setting's brevity penalty and length ratio on validation, kept beside its BLEU.
    assert all(0 <= r["brevity_penalty"] <= 1 and r["length_ratio"] > 0 for r in values["grid"])


def test_settings_that_decode_the_same_translations_count_once():
    a, b, c = ["ein hund"], ["eine katze"], ["ein hund"]
    assert list(decoding.distinct({"paper": a, "x": b, "y": c, "z": list(b)})) == ["paper", "x"]
    short = decoding.lengths(["ein hund"], ["ein großer hund läuft"])
    assert short["length_ratio"] == 0.5 and short["brevity_penalty"] == pytest.approx(math.exp(1 - 2))
    with pytest.raises(ValueError, match="^hypotheses:"):
        decoding.lengths([], [])
    # From a stored file: equal BLEU to the last bit and an equal p-value make a duplicate.
    grid = [{"beam_size": b, "alpha": a, "val_bleu": bleu} for b, a, bleu in
            [(1, 0.0, 30.0), (1, 0.6, 30.0), (2, 0.0, 31.0), (2, 0.6, 31.0000001), (4, 0.6, 30.5)]]
    p = {"beam 1, alpha 0.0": 0.2, "beam 1, alpha 0.6": 0.2, "beam 2, alpha 0.0": 0.04, "beam 2, alpha 0.6": 0.03}
    assert decoding.duplicates(grid, p) == {"beam 1, alpha 0.0": ["beam 1, alpha 0.6"], "beam 2, alpha 0.0": [],
                                            "beam 2, alpha 0.6": []}
    corrected = decoding.holm_over_distinct(grid, p)
    assert corrected["beam 1, alpha 0.6"] == corrected["beam 1, alpha 0.0"] == pytest.approx(0.2)
    assert corrected["beam 2, alpha 0.6"] == pytest.approx(0.09)  # three distinct settings, not four
    with pytest.raises(ValueError, match="^p_values: settings not in the grid"):
        decoding.duplicates(grid, {"beam 9, alpha 0.0": 0.5})


def test_the_committed_grid_counts_beam_1_once():
    """The stored grid (its translations not kept): beam 1 decodes the same whatever alpha (equal
    BLEU and p); beam 2's three alphas differ in BLEU's fourth decimal, so they stay three. Holm over
    the 12 distinct settings keeps every verdict the 14 gave."""
    values = read_results(ROOT / "results" / "recipes" / "decoding" / "multi30k-laptop_seed1.json")["values"]
    kept = decoding.duplicates(values["grid"], values["val_p_values"])
    assert kept["beam 1, alpha 0.0"] == ["beam 1, alpha 0.6", "beam 1, alpha 1.0"] and len(kept) == 12
    over_12 = decoding.holm_over_distinct(values["grid"], values["val_p_values"])
    over_14 = dict(zip(values["val_p_values"], decoding.stats.holm(list(values["val_p_values"].values()))))
    assert {k: v < 0.05 for k, v in over_12.items()} == {k: v < 0.05 for k, v in over_14.items()}
    assert all(over_12[k] <= over_14[k] for k in over_12)


def test_the_validation_test_separates_a_better_system_and_not_an_equal_one():
    references = [f"ein hund läuft über die wiese nummer {i} am morgen" for i in range(80)]
    worse = [r.split()[0] + " katze" for r in references]
    assert decoding.randomisation_p_values({"paper": worse, "candidate": references}, references) == {
        "candidate": pytest.approx(1 / (decoding.TRIALS + 1))}
    assert decoding.randomisation_p_values({"paper": references, "same": list(references)}, references) == {"same": 1.0}
    mixed = [r if i % 2 else w for i, (r, w) in enumerate(zip(references, worse))]
    assert decoding.randomisation_p_values({"paper": mixed, "shifted": mixed[1:] + mixed[:1]}, references)["shifted"] > 0.05
    # Holm over the family the candidate was picked from: three systems, the candidate's p times 2 or 3.
    family = {"paper": mixed, "better": references, "same": list(mixed), "worse": worse}
    assert decoding.gate_p_value(family, references, "better") == pytest.approx(3 / (decoding.TRIALS + 1))
    with pytest.raises(ValueError, match="^hypotheses:"):
        decoding.randomisation_p_values({"one": references}, references)
    with pytest.raises(ValueError, match="^candidate:"):
        decoding.gate_p_value(family, references, "paper")


def _noisy_systems(rng, systems: int, sentences: int, noise):
    """Synthetic references and ``systems`` outputs: each word replaced by a random one with
    probability ``noise`` (one value per system, or one for all)."""
    vocabulary = [f"w{i}" for i in range(300)]
    references = [" ".join(rng.choice(vocabulary, size=rng.integers(8, 15))) for _ in range(sentences)]
    noise = np.broadcast_to(noise, (systems,))
    outputs = [[" ".join(w if rng.random() > q else rng.choice(vocabulary) for w in r.split()) for r in references]
               for q in noise]
    return references, outputs


def test_the_decoding_gate_adopts_an_equal_setting_at_most_5_percent_of_the_time():
    """The gate as ``decoding.choose`` runs it, simulated under the null: a baseline and three
    settings that translate equally well (each word of each output replaced at random with the
    same probability), the best of the three by BLEU picked and tested. Adopted in at most 5 %
    of draws (with 300 draws, up to 5 % plus 2.6 standard errors). The rule it replaced, sacreBLEU's
    paired bootstrap on the best alone, adopted an equal setting well over 5 % of the time; and
    the gate does adopt a setting that is better."""
    rng = np.random.default_rng(0)
    draws, trials, adopted, adopted_before = 300, 200, 0, 0
    for _ in range(draws):
        references, outputs = _noisy_systems(rng, 4, 40, 0.3)
        family = {f"s{i}": h for i, h in enumerate(outputs)}  # s0: the paper's setting
        bleu = {name: corpus_bleu(h, references).score for name, h in family.items()}
        best = max(list(family)[1:], key=bleu.get)
        if bleu[best] <= bleu["s0"]:
            continue  # the paper's setting is the best: nothing to adopt
        adopted += decoding.gate_p_value(family, references, best, trials) < 0.05
        _, scores = PairedTest([("s0", family["s0"]), (best, family[best])], {"BLEU": BLEU()}, [references],
                               test_type="bs", n_samples=trials)()
        adopted_before += scores["BLEU"][1].p_value < 0.05
    assert adopted / draws <= 0.05 + 2.6 * math.sqrt(0.05 * 0.95 / draws)
    assert adopted_before / draws > 0.08
    references, outputs = _noisy_systems(rng, 4, 40, [0.3, 0.3, 0.1, 0.3])
    family = {f"s{i}": h for i, h in enumerate(outputs)}
    assert decoding.gate_p_value(family, references, "s2", trials) < 0.05


def test_budget_files_of_other_seeds_and_their_glue_keys(tmp_path):
    assert budget.budget_name("multi30k-laptop", {}) == "multi30k-laptop"
    assert budget.budget_name("multi30k-laptop", {"dropout": "0.1"}, 1) == "multi30k-laptop_dropout0.1_seed1"
    assert budget.budget_path(tmp_path, "multi30k-laptop", None, 2).name == "multi30k-laptop_seed2.json"
    point = {"minutes": 60, "step": 3950, "train_seconds": 3600.0, "val_bleu": 38.8,
             "test_2016_flickr_bleu": 39.0, "averaged_val_loss": 1.647}
    for seed, bleu in ((0, 39.0), (1, 38.5)):
        values = {"config": "multi30k-laptop", "seed": seed, "points": [point | {"test_2016_flickr_bleu": bleu}]}
        Recorder().write(budget.budget_path(tmp_path / "budget", "multi30k-laptop", None, seed), values)
    numbers = chapter_numbers(tmp_path)
    assert numbers["budget_60min_test_bleu"] == 39.0 and numbers["budget_seed1_60min_test_bleu"] == 38.5
    assert numbers["budget_config"] == "multi30k-laptop"
    assert numbers["budget_seed1_machine"] == numbers["budget_machine"] == processor_name({"machine": describe()})


def test_files_of_the_sealed_test_set_give_their_keys(tmp_path):
    """Since the test set is sealed, a budget file holds validation scores only and a decoding
    file one test score, the adopted setting's; the keys of both formats are read."""
    point = {"minutes": 60, "step": 3950, "train_seconds": 3600.0, "val_bleu": 38.84, "averaged_val_loss": 1.647}
    Recorder().write(budget.budget_path(tmp_path / "budget", "multi30k-laptop"),
                     {"config": "multi30k-laptop", "seed": 0, "points": [point]})
    grid = [{"beam_size": 4, "alpha": 0.6, "val_bleu": 39.32}, {"beam_size": 5, "alpha": 1.0, "val_bleu": 39.38}]
    Recorder().write(tmp_path / "recipes" / "decoding" / "sealed.json", {
        "grid": grid, "paper": {"beam_size": 4, "alpha": 0.6}, "chosen": {"beam_size": 5, "alpha": 1.0},
        "adopted": {"beam_size": 4, "alpha": 0.6}, "val_p_value": 0.31, "test_setting": "beam 4, alpha 0.6",
        "test_bleu": 39.94})
    numbers = chapter_numbers(tmp_path)
    assert numbers["budget_60min_val_bleu"] == 38.8 and "budget_60min_test_bleu" not in numbers
    assert numbers["decoding_sealed_adopted_test_bleu"] == numbers["decoding_sealed_paper_test_bleu"] == 39.9
    assert "decoding_sealed_chosen_test_bleu" not in numbers and numbers["decoding_sealed_chosen_val_bleu"] == 39.4
    assert numbers["decoding_sealed_val_p_value"] == 0.31


@pytest.mark.parametrize("machine, name", [("Intel(R) Xeon(R) Processor; 2 logical CPUs; Python 3.11.7", "Intel Xeon"),
                                           ("AMD EPYC; 2 logical CPUs; Python 3.11.7", "AMD EPYC"),
                                           ("Intel(R) Core(TM) i7-1165G7 CPU @ 2.80GHz; 8 logical CPUs", "Intel Core i7-1165G7 CPU @ 2.80GHz")])
def test_processor_name_is_the_machine_fields_first_part_without_trademarks(machine, name):
    assert processor_name({"machine": machine}) == name


def test_gpu_files_of_other_seeds_and_changed_recipes_keep_their_own_glue_keys(tmp_path):
    """A second seed, `--set max_tokens=8192` or `--compile`, of multi30k-small must not overwrite the keys
    of seed 0 that both chapters glue; two seeds add their mean and spread."""
    def values(test, val):
        return {"configuration": "multi30k-small", "test_2016_flickr_bleu": test, "val_bleu": val,
                "averaged_val_loss": 1.55, "steps": 8000, "train_and_eval_seconds": 526.0,
                "train_seconds": 480.0, "tokens_per_s": 67718.0, "mfu": 0.0008}
    for stem, test, val in (("multi30k-small_seed0", 39.12, 40.13), ("multi30k-small_seed1", 39.94, 40.41),
                            ("multi30k-small_max_tokens8192_seed0", 40.5, 41.0),
                            ("multi30k-small_compiled_seed0", 38.8, 39.7)):  # gpu.py --stages small --compile
        Recorder().write(tmp_path / "gpu" / f"{stem}.json", values(test, val))
    numbers = chapter_numbers(tmp_path)
    assert numbers["gpu_multi30k_small_test_bleu"] == 39.1 and numbers["gpu_multi30k_small_val_bleu"] == 40.1
    assert numbers["gpu_multi30k_small_seed1_test_bleu"] == 39.9
    assert numbers["gpu_multi30k_small_max_tokens8192_test_bleu"] == 40.5
    assert numbers["gpu_multi30k_small_compiled_test_bleu"] == 38.8
    assert numbers["gpu_multi30k_small_seeds"] == 2  # neither the changed recipe nor the compiled run is a seed
    assert numbers["gpu_multi30k_small_test_bleu_mean"] == 39.5
    assert numbers["gpu_multi30k_small_test_bleu_spread"] == 0.8
    assert "gpu_multi30k_small_max_tokens8192_seeds" not in numbers  # one seed: no spread to show


@needs_data
def test_throughput_file_and_budget_steps(tmp_path):
    assert recipes.main(["throughput", "--config", "multi30k-tiny", "--threads", "1", "--steps", "5",
                         "--results", str(tmp_path)]) == 0
    values = read_results(budget.throughput_path(tmp_path, "multi30k-tiny", 1))["values"]
    assert values["timed_updates"] == 5 and values["updates_per_second"] > 0 and values["cpu_seconds"] > 0
    assert budget.budget_steps([10, 30, 60], 1.0, 50) == {10: 600, 30: 1800, 60: 3600}
    assert budget.budget_steps([1], 0.001, 50) == {1: 50}  # at least one checkpoint interval


@needs_data
def test_gpu_script_dry_run_on_cpu(tmp_path, monkeypatch):
    monkeypatch.setattr(torch, "compile", lambda model, **options: model)  # --compile's wiring only
    out, results = tmp_path / "out", tmp_path / "results"
    assert gpu.main(["--device", "cpu", "--tiny", "--stages", "machine", "compile", "bench", "small", "--out",
                     str(out), "--results", str(results), "--runs", str(tmp_path / "runs"), "--compile",
                     "--seed", "1", "--set", "label_smoothing=0.2"]) == 0
    small_name = "multi30k-small_label_smoothing0.2_compiled_seed1"  # named after --set, --compile and --seed
    assert sorted(p.name for p in out.iterdir()) == [
        "bench_multi30k-tiny.json", "compile_multi30k-tiny.json", "machine.json", f"{small_name}.averaged.pt",
        f"{small_name}.json", "multi30k-tiny_explicit.txt", "multi30k-tiny_fused.txt",
        "multi30k-tiny_torch.nn.Transformer.txt"]
    assert "aten::addmm" in (out / "multi30k-tiny_fused.txt").read_text()  # the profiler's table
    timed = read_results(out / "compile_multi30k-tiny.json")["values"]["rows"]
    assert list(timed) == ["eager"] and sorted(timed["eager"]["elapsed_after"]) == ["1", "3"]
    rows = read_results(out / "bench_multi30k-tiny.json")["values"]["rows"]
    assert rows["torch.nn.Transformer"]["speed_vs_torch_nn"] == 1.0 and rows["fused"]["target_tokens_per_s"] > 0
    # Our attention, spelled out, calls more operators than the fused kernel; on a CPU no kernels are counted.
    assert rows["explicit"]["profile"]["operators_per_step"] > rows["fused"]["profile"]["operators_per_step"] > 0
    assert "kernels_per_step" not in rows["fused"]["profile"]
    small = read_results(out / f"{small_name}.json")["values"]
    assert small["model_tflops_per_s"] > 0 and small["mfu"] is None  # no peak for a CPU
    assert {"val_bleu", "train_and_eval_seconds"} <= set(small) and small["compiled"]
    assert "test_2016_flickr_bleu" not in small  # a changed recipe (--set) is a candidate: validation only
    assert small["config"]["seed"] == 1 and "--seed 1 " in small["aiayn_train"]
    assert small["config"]["label_smoothing"] == 0.2 and "label_smoothing=0.2" in small["aiayn_train"]


def test_gpu_notebook_stage_executes_and_copies(tmp_path):
    pytest.importorskip("nbclient")
    import nbformat
    notebook = tmp_path / "en" / "chapter.ipynb"
    notebook.parent.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, notebook)
    copy = gpu.notebook_stage(notebook, tmp_path)
    assert copy.name == "chapter.en.ipynb"
    assert "".join(json.loads(copy.read_text())["cells"][0]["outputs"][0]["text"]) == "42\n"
    # A deadline stops a cell that runs too long; what ran until then is still handed back.
    nb.cells.append(nbformat.v4.new_code_cell("import time\nprint('started', flush=True)\ntime.sleep(60)"))
    nbformat.write(nb, notebook)
    start = time.perf_counter()
    with pytest.raises(subprocess.CalledProcessError):
        gpu.notebook_stage(notebook, tmp_path, deadline=8)
    assert time.perf_counter() - start < 40
    cells = json.loads(copy.read_text())["cells"]
    assert "".join(cells[0]["outputs"][0]["text"]) == "42\n" and "".join(cells[1]["outputs"][0]["text"]) == "started\n"


@pytest.mark.parametrize("argv, message", [
    (["rank", "--candidates", "huge"], "unknown candidate(s) huge"),
    (["rank", "--steps", "1"], "--steps must be at least 2"),
    (["budget", "--config", "multi30k-tiny", "--threads", "1", "--steps-at", "ten=600"], "--steps-at takes"),
    (["throughput", "--config", "multi30k-tiny", "--threads", "0"], "--threads must be at least 1"),
    (["budget", "--config", "multi30k-tiny", "--threads", "1", "--steps-at", "1=2", "--set", "dropout"], "--set takes"),
    (["budget", "--config", "multi30k-tiny", "--threads", "1", "--steps-at", "1=2", "--set", "droput=0.1"],
     "'droput' is not a RunConfig field"),
    (["decoding", "--model", "no/such/averaged.pt", "--name", "x"], "--model no/such/averaged.pt: no such file"),
    (["decoding", "--model", "x.pt", "--name", "x", "--beams", "0", "4"], "--beams must be at least 1"),
])
def test_command_line_errors_are_one_line_and_status_2(argv, message, capsys):
    try:
        status = recipes.main(argv)
    except SystemExit as exit:
        status = exit.code
    assert status == 2 and message in capsys.readouterr().err


@needs_data
def test_gpu_script_dry_run_keeps_out_of_the_committed_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default checkpoint folder, runs/gpu, is relative
    committed = {p: p.stat().st_mtime_ns for p in gpu.RESULTS.glob("*")}
    out = tmp_path / "out"
    assert gpu.main(["--device", "cpu", "--tiny", "--stages", "machine", "small", "--out", str(out)]) == 0
    assert {p: p.stat().st_mtime_ns for p in gpu.RESULTS.glob("*")} == committed  # nothing written or touched
    assert (out / "results" / "machine.json").is_file() and (out / "results" / "multi30k-small_seed0.json").is_file()
    assert (out / "runs").is_dir() and not (tmp_path / "runs").exists()


def test_gpu_script_refuses_a_long_cpu_run(capsys):
    with pytest.raises(SystemExit) as exit:
        gpu.main(["--device", "cpu", "--out", "/tmp/unused"])
    assert exit.value.code == 2 and "--tiny" in capsys.readouterr().err


@pytest.mark.parametrize("changes, message", [(["droput=0.1"], "--set: 'droput' is not a RunConfig field"),
                                              (["dropout"], "--set: --set takes FIELD=VALUE pairs")])
def test_gpu_script_checks_set_before_any_stage(tmp_path, changes, message, capsys):
    with pytest.raises(SystemExit) as exit:
        gpu.main(["--device", "cpu", "--tiny", "--stages", "machine", "small", "--set", *changes,
                  "--out", str(tmp_path / "out"), "--results", str(tmp_path)])
    assert exit.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "machine.json").exists()  # no stage ran


def ranked_row(name, bleus, losses=None, changes="max_tokens=4096", steps=600, machine="machine", seeds=None):
    """A row as recipe_table gives it (best mean first in a Table)."""
    bleu, loss = Spread(tuple(bleus)), Spread(tuple(losses or [1.6] * len(bleus)))
    return Row(name, changes, tuple(seeds or range(len(bleus))), loss, bleu, None, 1, steps, bleu, bleu, 1, machine)


def test_the_best_candidate_needs_two_seeds():
    table = Table([ranked_row("one-seed", [30.0]), ranked_row("a", [25.0, 26.0]), ranked_row("c", [20.0, 21.0])])
    assert table.best.candidate == "a"  # not the single seed above it
    with pytest.raises(ValueError, match="2 seeds"):
        Table([ranked_row("one-seed", [30.0])]).best


def test_comparisons_use_the_tests_of_aiayn_stats():
    # Seed k of both shares the batch order (same seeds, same max_tokens): paired, and a
    # consistent gain on every seed passes; the old rule ("every seed beats every seed") with
    # two seeds each called 1 in 3 null comparisons a difference (tests/test_stats.py).
    a = ranked_row("a", [25.0, 26.0, 27.0], [1.50, 1.52, 1.48])
    b = ranked_row("b", [24.0, 25.1, 25.9], [1.60, 1.63, 1.57])  # loss differences not all equal: se > 0
    assert compare_rows(a, b).method == "paired t"
    table = Table([a, b, ranked_row("c", [24.5, 26.5, 24.0])])
    assert table.compare("a", "b").kind == "better" and table.compare("b", "a").label("zh") == "更差"
    assert table.compare("a", "b", "val_loss").kind == "better"  # lower loss is better
    assert table.compare("a", "c").kind == "inconclusive"        # no consistent sign
    # Other batches (max_tokens) or other seeds: Welch's t with Hsu's df, never paired.
    other = ranked_row("b2048", [24.0, 25.1, 25.9], changes="max_tokens=2048", steps=1200)  # same tokens
    assert compare_rows(a, other).method == "Welch (Hsu df)"
    assert compare_rows(a, ranked_row("b", [24.0, 25.1, 25.9], seeds=(3, 4, 5))).method == "Welch (Hsu df)"
    # Two seeds each separated by their whole range no longer count as "better" by themselves.
    two = Table([ranked_row("a", [25.0, 26.0]), ranked_row("c", [24.0, 24.8])])
    assert two.compare("a", "c").kind == "inconclusive"
    # One family: Holm over every ranked candidate against the reference.
    assert set(table.judge("b")) == {"a", "c"}
    assert table.compare("a", "b", margin=5.0, margin_label="±5 BLEU").kind == "better"


def test_comparisons_refuse_other_budgets_hardware_and_single_runs():
    a = ranked_row("a", [25.0, 26.0, 27.0])
    # The same tokens in twice the updates of half the batch is the same budget.
    assert compare_rows(a, ranked_row("b2048", [24.0, 25.0, 26.0], changes="max_tokens=2048", steps=1200)).p < 1
    for other, field in ((ranked_row("long", [24.0, 25.0], steps=1200), "budget"),
                         (ranked_row("gpu", [24.0, 25.0], machine="NVIDIA H100"), "machine")):
        with pytest.raises(ValueError, match=f"^b: .*{field}"):
            compare_rows(a, other)
    with pytest.raises(ValueError, match="^b: one-seed has 1 seed"):
        compare_rows(a, ranked_row("one-seed", [24.0]))
    with pytest.raises(ValueError, match="^metric:"):
        compare_rows(a, a, "bleu")
    # One new run against the seeds of a row: only at the row's budget, machine and threads.
    one = one_run_against(31.0, a, "val_bleu", steps=600, machine="machine", threads=1)
    assert one.method == "one run against seeds" and one.df == 2 and one.difference == pytest.approx(5.0)
    for kwargs, field in ((dict(steps=1200, machine="machine", threads=1), "steps"),
                          (dict(steps=600, machine="other", threads=1), "machine"),
                          (dict(steps=600, machine="machine", threads=2), "threads"),
                          (dict(machine="machine", threads=1), "steps")):
        with pytest.raises(ValueError, match=f"^{field}:"):
            one_run_against(31.0, a, **kwargs)


RESULTS = ROOT / "results" / "recipes"


@pytest.mark.skipif(not (RESULTS / "rank").is_dir(), reason="no committed ranking results yet")
def test_committed_ranking_results_are_the_current_candidates():
    """Each committed file's aiayn-train command is what its candidate means now: a change to
    CANDIDATES, LITERATURE or RANKING without new runs fails here."""
    for path in sorted((RESULTS / "rank").glob("*.json")):
        values = read_results(path)["values"]
        changes = recipes.candidate_changes(values["candidate"])
        sets = " ".join(f"{k}={v}" for k, v in changes.items())
        assert f"--set {sets} --seed {values['seed']} " in values["aiayn_train"], path.name


@pytest.mark.parametrize("path", sorted((ROOT / "results" / "budget").glob("multi30k-*.json")), ids=lambda p: p.name)
def test_committed_budget_runs_are_the_current_configurations(path):
    """A budget file's run is its configuration now, with the file's --set changes: changing
    multi30k-laptop without running its hour again fails here."""
    values = read_results(path)["values"]
    changes = values.get("changes") or {}
    assert path.name == budget.budget_path(path.parent, values["config"], changes, values["seed"]).name
    now = dataclasses.replace(run_config(values["config"], changes), seed=values["seed"])
    assert values["run"] == dataclasses.asdict(now)
    assert values["aiayn_train"].startswith(shlex.join(["aiayn-train", *train_command(
        values["config"], changes, values["seed"], Path("runs/budget") / path.stem)]))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_chapter_numbers_are_those_of_the_results_files(lang):
    """Every number the recipe's pages glue from the results files equals what the files hold now
    (a re-run that changed a file without re-executing the pages fails here). The lab notebook
    (appendix) glues them all and pastes them with roles (the landing page reads its test score
    there); the lesson glues none and states its numbers plainly (asserted in hidden cells:
    tests/test_prose_numbers.py)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import landing
    expected = chapter_numbers(ROOT / "results")
    pages = {name: ROOT / "chapters" / lang / f"{name}.ipynb" for name in ("multi30k_recipe", "lab_recipe")}
    glued = {name: landing.glued_values(path) for name, path in pages.items()}
    assert glued["multi30k_recipe"] == {}  # the lesson states its numbers plainly; the landing page reads lab_recipe
    for name, values in {"lab_recipe": glued["lab_recipe"]}.items():
        recipe_keys = [k for k in values if k.startswith(("recipe_", "budget_", "gpu_", "decoding_"))]
        assert recipe_keys, f"{name} glues no recipe numbers"
        assert {k: values[k] for k in recipe_keys} == {k: expected.get(k, "missing from the results files")
                                                      for k in recipe_keys}
    assert set(expected) <= set(glued["lab_recipe"])  # every number, in one page
    markdown = "".join("".join(c["source"]) for c in json.loads(pages["lab_recipe"].read_text(encoding="utf8"))["cells"]
                       if c["cell_type"] == "markdown")
    for key in ("recipe_best", "recipe_steps"):
        assert f"`{key}" in markdown, f"the lab notebook does not paste {key}"


def test_the_log_of_test_decodes_holds_every_one_and_the_seal():
    """aiayn.experiments.test_log: every budget point with a test score is in the log, decoded
    before the seal; after it, only decoding files' adopted settings decoded the test set."""
    from aiayn.experiments import test_log
    found = test_log.decodes()
    points = sum(len([p for p in read_results(path)["values"]["points"] if "test_2016_flickr_bleu" in p])
                 for path in (ROOT / "results" / "budget").glob("multi30k-laptop*.json"))
    assert len([d for d in found if d.source.startswith("results/budget/")]) == points
    assert [d.finished for d in found] == sorted(d.finished for d in found)
    sealed = [d for d in found if d.sealed]
    assert sealed and all(d.source.endswith("decoding/multi30k-laptop_seed1.json") for d in sealed)
    adopted = read_results(ROOT / "results" / "recipes" / "decoding" / "multi30k-laptop_seed1.json")["values"]
    assert {d.setting for d in sealed} == {adopted["test_setting"]}
    headers, rows = test_log.log_rows(found)
    assert len(rows) == len(found) and rows[-1][-1] == "after the seal" and rows[0][-1] == "before the seal*"
    with pytest.raises(ValueError, match="^checkpoint:"):
        test_log._averaged_step("runs/x/step_0000040.pt")


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(_git("cat-file", "-e", "ceb238e^{commit}").returncode != 0, reason="no git history here")
def test_the_replaced_decoding_files_are_what_git_holds():
    """test_log.REPLACED keeps the test decodes of files that later runs replaced; git still has them."""
    from aiayn.experiments import test_log
    for entry in test_log.REPLACED:
        record = json.loads(_git("show", entry["source"]).stdout)
        v = record["values"]
        held = v["test_bleu"] if isinstance(v["test_bleu"], dict) else {v["test_setting"]: v["test_bleu"]}
        assert {k: round(b, 2) for k, b in held.items()} == entry["decodes"]
        assert (record["commit"], record["finished"]) == (entry["commit"], entry["finished"])
    seal = _git("show", "-s", "--format=%cI", test_log.SEAL["commit"]).stdout.strip()
    assert seal.replace("Z", "+00:00") == test_log.SEAL["time"]


def test_the_log_speaks_the_notebooks_language(monkeypatch):
    from aiayn.experiments import test_log
    monkeypatch.setenv("AIAYN_LANG", "zh")
    assert test_log.in_language("multi30k-laptop dropout=0.1, seed 0, 3,950 updates") == \
        "multi30k-laptop dropout=0.1，种子 0，3,950 次更新"
    assert test_log.in_language("beam 4, alpha 0.6") == "束宽 4，α = 0.6"
    assert test_log.in_language("multi30k-small, 8,000 updates (GPU)") == "multi30k-small，8,000 次更新（GPU）"
    monkeypatch.setenv("AIAYN_LANG", "en")
    assert test_log.in_language("beam 4, alpha 0.6") == "beam 4, alpha 0.6"
