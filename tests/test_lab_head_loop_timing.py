"""aiayn.lab.head_loop_timing: the loop over heads against the batched module, timed."""

import json

import pytest
import torch

from aiayn.lab.head_loop_timing import main, measure, print_table, ratios, torch_heads_loop
from aiayn.pt.attention import MultiHeadAttention


def test_the_torch_loop_computes_the_module():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).double()
    x = torch.randn(2, 7, 32, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(torch_heads_loop(mha, x), mha(x, x, x)[0], atol=1e-12)


def test_measure_times_every_variant_at_every_length(capsys):
    values = measure(lengths=(4, 8), d_model=32, heads=4, budget_s=0.01, rounds=2)
    assert values["lengths"] == [4, 8]
    for library, variants in (("numpy_ms", ("loop", "views", "course")), ("torch_ms", ("loop", "batched"))):
        for variant in variants:
            assert len(values[library][variant]) == 2
            assert all(ms > 0 for ms in values[library][variant])
    assert set(values["softmax_ms"]) == {"at once", "head by head"}
    r = ratios(values)
    assert r["numpy_loop"][0] == values["numpy_ms"]["loop"][0] / values["numpy_ms"]["course"][0]
    print_table(values)
    assert "loop / batched" in capsys.readouterr().out


@pytest.mark.parametrize("kwargs, match", [(dict(lengths=()), "lengths"), (dict(budget_s=0), "budget_s")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        measure(**kwargs)


def test_command_writes_a_results_file(tmp_path, capsys):
    out = tmp_path / "heads_loop.json"
    assert main(["--out", str(out), "--budget", "0.01", "--lengths", "4"]) == 0
    record = json.loads(out.read_text())
    assert record["values"]["lengths"] == [4]
    assert {"command", "commit", "machine", "threads", "seconds"} <= set(record)
    assert "written to" in capsys.readouterr().out
