"""The graders are sound: every reference solution passes its grader, every untouched stub fails
every check, every exercise has a stub, a solution and a grader (walked both ways), and each
plausible wrong solution in tests/wrong_solutions/ is rejected by the check it targets with a
message that names the mistake.

And they speak the reader's language (issue 55): every check, title and hint has a Chinese form
(checked over the registry and over the graders' source), and the Chinese runs of this file (the
untouched stubs, the second seed of the reference solutions and of every wrong solution) print
reports whose every line is Chinese or code by the rule of tests/test_zh_outputs.py, with no
English hint, expected or got text."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from aiayn.grading import REGISTRY, format_result, language, promises, run_exercise
from aiayn.grading.__main__ import main
from aiayn.grading.core import Exercise
from aiayn.grading.language import Text
from aiayn.grading.report import wrap
from test_zh_outputs import english_words, line_faults

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"
SOLUTIONS = EXERCISES / "solutions"
WRONG = Path(__file__).resolve().parent / "wrong_solutions"
IDS = sorted(REGISTRY)
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
GRADING = ROOT / "code" / "aiayn" / "grading"


def chinese_report_faults(report: str) -> list[str]:
    """What in a Chinese report is not Chinese by the rule of tests/test_zh_outputs.py: a line
    with Chinese and English words, an English line of the frame (title, status, label), or a
    labelled text (expected, got, hint, error, ...) in English. Lines that quote (a promise of
    the stub's English docstring, the message of the reader's exception, code) continue a
    labelled line and may be English; what the reader's code printed is not read."""
    faults, printed = [], False
    for line in report.splitlines():
        printed = line.startswith(" " * 8 + "输出：") or (printed and line.startswith(" " * 18 + "| "))
        if printed or not line.strip():
            continue
        faults += [f"[{f.rule}] {line}" for f in line_faults(line)]
        indent = len(line) - len(line.lstrip(" "))
        if indent in (0, 2, 8) and not HAN.search(line):  # the frame, a check, a label
            faults.append(f"[English frame] {line}")
        if indent == 8:  # "期望：    <text>": Chinese, or code (a name, a formula, values)
            text = line.strip().split("：", 1)[-1].strip()
            if text and not HAN.search(text) and len(english_words(text)) >= 2:
                faults.append(f"[English text] {line}")
    return faults


def python_files(folder: Path, skip: Path | None = None) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*.py")
            if "__pycache__" not in p.parts and (skip is None or skip not in p.parents)}


def test_every_stub_has_a_grader_and_every_grader_a_stub():
    stubs = python_files(EXERCISES, skip=SOLUTIONS)
    graded = {ex.file for ex in REGISTRY.values()}
    assert stubs, "no exercises found"
    assert stubs - graded == set(), "stubs that no grader checks"
    assert graded - stubs == set(), "graders whose stub is missing"


def test_every_solution_has_a_stub_and_every_stub_a_solution():
    assert python_files(SOLUTIONS) == python_files(EXERCISES, skip=SOLUTIONS)


@pytest.mark.parametrize("exercise_id", IDS)
def test_exercise_belongs_to_a_chapter_and_has_named_checks(exercise_id):
    ex = REGISTRY[exercise_id]
    assert (ROOT / "chapters" / "en" / f"{ex.chapter}.ipynb").is_file(), "no such chapter"
    assert len(ex.checks) >= 1
    assert len({c.name for c in ex.checks}) == len(ex.checks)


def top_level_api(path: Path) -> dict[str, set[str]]:
    """Top-level functions and classes of a file, with each class's methods."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    return {node.name: {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("file", sorted(python_files(SOLUTIONS)))
def test_solution_defines_everything_the_stub_asks_for(file):
    stub, solution = top_level_api(EXERCISES / file), top_level_api(SOLUTIONS / file)
    for name, methods in stub.items():
        assert name in solution, f"the solution lacks {name}"
        assert methods <= solution[name], f"{name}: the solution lacks {methods - solution[name]}"


@pytest.mark.parametrize("seed", [0, 271828])
@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_solution_passes(exercise_id, seed, monkeypatch):
    """The second seed in Chinese: every check's name and the frame in Chinese."""
    monkeypatch.setenv("AIAYN_LANG", "en" if seed == 0 else "zh")
    ex = REGISTRY[exercise_id]
    result = run_exercise(ex, SOLUTIONS / ex.file, seed)
    report = format_result(result)
    assert result.passed, report
    if seed != 0:
        assert chinese_report_faults(report) == [], report


@pytest.mark.parametrize("exercise_id", IDS)
def test_untouched_stub_fails_every_check(exercise_id, monkeypatch):
    """In Chinese: the "not written yet" line, and the hints of a "fix the bug" stub."""
    monkeypatch.setenv("AIAYN_LANG", "zh")
    ex = REGISTRY[exercise_id]
    result = run_exercise(ex, EXERCISES / ex.file, seed=0)
    report = format_result(result)
    assert not result.passed
    assert chinese_report_faults(report) == [], report
    if "FIX THE BUG" in (EXERCISES / ex.file).read_text(encoding="utf8"):
        # A "fix the bug" stub holds the buggy code itself: every check must catch the bug.
        assert all(c.status == "FAIL" for c in result.checks), report
    else:
        assert all(c.status == "TODO" for c in result.checks), report


def wrong_solution_spec(path: Path) -> dict:
    """The lines at the end of the file's docstring (see wrong_solutions/README.md): three, and
    a fourth, "breaks:", in the files that break one promise of a stub."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf8"))) or ""
    spec = dict(re.findall(r"^(exercise|caught by|message mentions|breaks): (.+)$", doc, re.M))
    assert spec.keys() - {"breaks"} == {"exercise", "caught by", "message mentions"}, \
        f"{path.name}: {spec}"
    spec["message mentions"] = [w.strip() for w in spec["message mentions"].split(";")]
    return spec


WRONG_FILES = sorted(WRONG.glob("*.py"))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("path", WRONG_FILES, ids=lambda p: p.stem)
def test_plausible_wrong_solution_is_rejected_with_a_pointed_message(path, seed, monkeypatch):
    """Graded on the check that must catch it alone (the others' verdicts are not what this
    test asserts, and a hundred files times every check would cost CI a minute). Seed 0 in
    English, where the message must mention the listed words; seed 1 in Chinese, where every
    line of the report must be Chinese or code and the hint Chinese (the same mistake is
    recognised: the hint is chosen before its language)."""
    chinese = seed == 1
    monkeypatch.setenv("AIAYN_LANG", "zh" if chinese else "en")
    spec = wrong_solution_spec(path)
    ex = REGISTRY[spec["exercise"]]
    assert spec["caught by"] in {c.name for c in ex.checks}, "no check of that name"
    result = run_exercise(dataclasses.replace(
        ex, checks=[c for c in ex.checks if c.name == spec["caught by"]]), path, seed)
    report = format_result(result)
    assert not result.passed, report
    check = next(c for c in result.checks if c.name == spec["caught by"])
    assert check.status == "FAIL", report
    if chinese:
        assert chinese_report_faults(report) == [], report
    else:
        for word in spec["message mentions"]:
            assert word in check.detail, f"{word!r} not in the message:\n{report}"
    if "breaks" in spec:  # the failure names the promise, quoting the stub's docstring
        assert spec["caught by"] in ex.promises.get(spec["breaks"], ()), \
            f"{spec['caught by']!r} does not keep the promise {spec['breaks']!r}"
        owner, key = spec["breaks"].split(": ")
        quoted = check.detail[check.detail.index("约定：" if chinese else "promise:  "):]
        assert f"{owner} - {key}: " in quoted, report


# Promises: every sentence of a stub's contract has a check and a wrong solution ------------
STUBS = sorted(python_files(EXERCISES, skip=SOLUTIONS))


def exercises_of(file: str) -> list:
    return [ex for ex in REGISTRY.values() if ex.file == file]


@pytest.mark.parametrize("file", STUBS)
def test_every_promise_of_the_stub_has_a_check(file):
    stub = EXERCISES / file
    stated = promises.read(stub)
    owners_with_promises = {promise.split(": ")[0].split(".")[0] for promise in stated}
    assert set(top_level_api(stub)) <= owners_with_promises, \
        "every function and class of a stub states its promises"
    assert promises.coverage(exercises_of(file), stub) == {
        "unchecked": [], "stale": [], "unknown checks": []}


@pytest.mark.parametrize("file", STUBS)
def test_no_contract_is_stated_outside_a_promises_section(file):
    """A "must", "exactly", "in place" ... outside the Promises section would promise something
    no row of the table checks: move the sentence into the section, as a promise."""
    assert promises.unchecked_words(EXERCISES / file) == []


def test_a_promise_without_a_check_fails_the_coverage(tmp_path):
    stub = tmp_path / "stub.py"
    stub.write_text('''def f(x):
    """Doubles x.

    Promises (the grader checks each one):
      - value: returns 2 x, an array of the
        shape of x.
      - dtype: keeps the dtype of x.
    """
''', encoding="utf8")
    assert promises.read(stub) == {"f: value": "returns 2 x, an array of the shape of x.",
                                   "f: dtype": "keeps the dtype of x."}
    ex = Exercise("x/f", "x/f.py", "double")
    ex.check("doubles")(lambda mod, rng: None)
    ex.keeps({"f: value": "doubles", "f: gone": "doubles", "f: dtype": "no such check"})
    assert promises.coverage([ex], stub) == {"unchecked": [], "stale": ["f: gone"],
                                             "unknown checks": ["x/f: f: dtype -> 'no such check'"]}
    del ex.promises["f: dtype"]
    assert promises.coverage([ex], stub)["unchecked"] == ["f: dtype"]
    for broken in ("Promises:\n  - no key here\n", "Promises:\n  - Value: capital key\n",
                   "Promises:\n\n"):
        with pytest.raises(ValueError):
            promises.split("Doubles x.\n\n" + broken)
    assert promises.unchecked_words(stub) == []
    stub.write_text('def f(x):\n    """Doubles x; never modify x in place."""\n', encoding="utf8")
    assert len(promises.unchecked_words(stub)) == 3


def test_every_promise_has_a_wrong_solution_that_breaks_it():
    specs = [wrong_solution_spec(path) for path in WRONG_FILES]
    broken = {(REGISTRY[spec["exercise"]].file, spec["breaks"]) for spec in specs
              if "breaks" in spec}
    missing = [f"{file}: {promise}" for file in STUBS for promise in promises.read(EXERCISES / file)
               if (file, promise) not in broken]
    assert missing == []


def test_the_language_rule_is_the_plotting_rule_and_needs_no_matplotlib(monkeypatch, tmp_path):
    import subprocess
    import sys

    from aiayn.plotting import current_language as plotting_language
    assert language.current_language is plotting_language  # one rule, aiayn.language
    expected = {("", ""): "en", ("", "zh"): "zh", ("zh", ""): "zh", ("en", "zh"): "en"}
    for (env, folder), lang in expected.items():
        (tmp_path / folder).mkdir(exist_ok=True)
        monkeypatch.chdir(tmp_path / folder)
        monkeypatch.setenv("AIAYN_LANG", env)
        assert language.current_language() == lang
    # The grader's child processes import the rule without paying for matplotlib.
    probe = "import sys, aiayn.grading.language; print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout == "False\n"


def test_a_chinese_report_names_the_checks_in_chinese(monkeypatch):
    ex = REGISTRY["from_scratch/attention"]
    monkeypatch.setenv("AIAYN_LANG", "zh")
    report = format_result(run_exercise(ex, SOLUTIONS / ex.file, seed=0))
    assert report.startswith(f"练习     from_scratch/attention：{ex.title_zh}\n"), report
    assert all(f"  通过  {c.name_zh}" in report for c in ex.checks), report
    assert report.endswith(f"结果     通过 {len(ex.checks)}/{len(ex.checks)} 项检查：全部通过")
    monkeypatch.setenv("AIAYN_LANG", "en")
    report = format_result(run_exercise(ex, SOLUTIONS / ex.file, seed=0))
    assert all(f"  PASS  {c.name}" in report for c in ex.checks), report
    assert not HAN.search(report), report


def test_every_check_and_exercise_has_both_names():
    """The English name is the check's id (promise tables, the wrong solutions' "caught by");
    the Chinese one is shown in a Chinese notebook. Both exist, each in its own language."""
    for ex in REGISTRY.values():
        assert ex.title_zh and HAN.search(ex.title_zh) and not HAN.search(ex.title), ex.id
        assert line_faults(ex.title_zh) == [], (ex.id, ex.title_zh)
        for check in ex.checks:
            where = f"{ex.id}: {check.name!r}"
            assert check.name_zh and HAN.search(check.name_zh), f"{where} has no Chinese name"
            assert not HAN.search(check.name), where
            assert line_faults(check.name_zh) == [], (where, check.name_zh)


def grading_sources():
    return sorted(GRADING.rglob("*.py"))


def literal(node) -> str | None:
    """The text of a string literal (an f-string's values as 0), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "0" for v in node.values)
    return None


@pytest.mark.parametrize("path", grading_sources(), ids=lambda p: p.relative_to(GRADING).as_posix())
def test_every_text_the_grader_shows_has_both_languages(path):
    """Statically, over the grader's source: the Chinese of every ``tr(en, zh)``,
    ``Text(en, zh)`` and ``zh=`` is Chinese by the rule of tests/test_zh_outputs.py, and no string
    of two English words or more is left outside them, except the checks' English names and the
    exercises' titles (ids; their Chinese is checked above), promise keys, docstrings, errors
    raised for the programmer (ValueError, KeyError) and the tags below, which no report shows."""
    internal = {"imported later", "import failed", "the file imports", "final norms",
                "unknown checks", "Check your work:", "expected 0; got 0; hint: 0",
                "'ScriptedModel' object has no attribute", promises.CONTRACT_WORDS.pattern}
    ids = ({c.name for ex in REGISTRY.values() for c in ex.checks}
           | {ex.title for ex in REGISTRY.values()}
           | {p for ex in REGISTRY.values() for p in ex.promises})
    tree = ast.parse(path.read_text(encoding="utf8"))
    exempt, faults = set(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node):
            exempt.add(id(node.body[0].value))
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        zh = [k.value for k in node.keywords if k.arg == "zh"]
        if name in ("tr", "Text", "label") and node.args:
            exempt.update(id(n) for n in ast.walk(node.args[0]))
            zh += node.args[1:2]
        if name in ("ValueError", "KeyError", "TypeError", "add_argument", "ArgumentParser",
                    "error", "UnpicklingError", "FileNotFoundError"):
            exempt.update(id(n) for a in [*node.args, *(k.value for k in node.keywords)]
                          for n in ast.walk(a))
        for text in filter(None, map(literal, zh)):
            exempt.update(id(n) for z in zh for n in ast.walk(z))
            faults += [f"line {node.lineno}: [{f.rule}] {line}" for line in text.splitlines()
                       for f in line_faults(line)]
            if not HAN.search(text) and len(english_words(text)) >= 1:
                faults.append(f"line {node.lineno}: [not Chinese] {text}")
    for node in ast.walk(tree):
        text = literal(node)
        if isinstance(node, ast.JoinedStr):
            exempt.update(id(v) for v in node.values)
        if (text is None or id(node) in exempt or text in ids or text in internal
                or len(english_words(text)) < 2):
            continue
        faults.append(f"line {node.lineno}: [English only] {text[:90]!r}")
    assert faults == []


def test_a_missing_scale_is_blamed_on_the_scale_not_on_the_mask():
    """Audit finding 16: attention's backward without 1/sqrt(d_k) fails the checks of dQ and dK,
    whose hint names the scale, and passes the masking check, which tests only that masked
    entries are exactly zero (and finite); a backward that breaks the masking still fails it."""
    ex = REGISTRY["backpropagation/attention_backward"]
    result = run_exercise(ex, WRONG / "backprop_attention_no_scale.py", seed=0)
    status = {c.name: c.status for c in result.checks}
    report = format_result(result)
    assert status["masked keys get no gradient; an all-masked query gets zeros, not NaN"] == \
        "PASS", report
    assert [c.name for c in result.checks if c.status == "FAIL"] == [
        "grad_q equals autograd: dQ = dS K / √d_k", "grad_k equals autograd: dK = dS^T Q / √d_k"]
    assert all("you left out the 1/sqrt(d_k)" in c.detail
               for c in result.checks if c.status == "FAIL"), report


def test_text_picks_its_language_when_shown(monkeypatch):
    hint = Text("divide by sqrt(d_k)", "除以 sqrt(d_k)")
    monkeypatch.setenv("AIAYN_LANG", "zh")
    assert str(hint) == "除以 sqrt(d_k)" and f"{hint}。" == "除以 sqrt(d_k)。"
    monkeypatch.setenv("AIAYN_LANG", "en")
    assert str(hint + Text(", then", "，然后")) == "divide by sqrt(d_k), then"
    with pytest.raises(TypeError):
        hint + ", then"  # a bare string would put English into the Chinese text
    with pytest.raises(ValueError):
        Text("only English", None)


def test_a_chinese_line_wraps_by_width_and_never_before_its_punctuation():
    english = "you left out the 1/sqrt(d_k): the scores are Q K^T / sqrt(d_k), so dQ = dS K"
    assert wrap(english, "  ", "    ", width=30) == __import__("textwrap").wrap(
        english, 30, initial_indent="  ", subsequent_indent="    ")
    chinese = "你漏了 1/sqrt(d_k)：分数是 Q K^T / sqrt(d_k)，所以 `dQ = dS K / sqrt(d_k)`，结果大了。"
    lines = wrap(chinese, "", "  ", width=24)
    assert "".join(line.strip() for line in lines).replace(" ", "") == chinese.replace(" ", "")
    assert all(sum(2 if HAN.match(c) or c in "：，。" else 1 for c in line) <= 24 or "`" in line
               for line in lines), lines
    assert not any(line.strip()[0] in "：，。）" for line in lines), lines
    assert any("`dQ = dS K / sqrt(d_k)`" in line for line in lines), lines  # code stays whole


def test_the_core_mistakes_all_have_a_wrong_solution():
    """The mistakes the course promises to catch, each with its own file."""
    required = {"sdpa_missing_scale", "sdpa_softmax_wrong_axis", "sdpa_inverted_mask",
                "mha_split_heads_without_transpose", "causal_mask_blocks_diagonal",
                "layer_norm_std_plus_eps"}
    assert required <= {p.stem for p in WRONG_FILES}


def test_same_seed_same_report_and_fresh_seed_by_default():
    ex = REGISTRY["scaled_dot_product_attention/sdpa_numpy"]
    wrong = WRONG / "sdpa_missing_scale.py"
    first, again = (format_result(run_exercise(ex, wrong, seed=7)) for _ in range(2))
    assert first == again and "seed     7" in first
    seeds = {run_exercise(ex, wrong).seed for _ in range(3)}
    assert len(seeds) > 1


def test_command_line_exit_codes(capsys):
    """``main`` of ``python -m aiayn.grading``, in this process (tests/test_grading_sandbox.py
    starts the command itself once: a second Python importing PyTorch costs seconds)."""
    assert main(["scaled_dot_product_attention/masked_softmax", "--solutions", "--seed", "3"]) == 0
    assert "7/7 checks passed: passed" in capsys.readouterr().out
    assert main(["scaled_dot_product_attention/masked_softmax", "--path",
                 str(WRONG / "masked_softmax_nan_row.py")]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "rerun" in out
    for usage in (["no_such_chapter"], ["scaled_dot_product_attention", "--path", __file__]):
        with pytest.raises(SystemExit) as error:
            main(usage)
        assert error.value.code == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1].startswith("python -m aiayn.grading: error: ")
        assert "Traceback" not in err


def test_path_grades_every_stage_of_the_from_scratch_file(capsys):
    """The chapter's ``python -m aiayn.grading from_scratch --path your_file.py``."""
    assert main(["from_scratch", "--path", str(SOLUTIONS / "from_scratch/transformer.py"),
                 "--seed", "2"]) == 0
    out = capsys.readouterr().out
    stages = sum(ex.chapter == "from_scratch" for ex in REGISTRY.values())
    assert f"{stages} of {stages} exercises passed" in out


# Correct solutions written differently from the reference must pass too: a grader that only
# accepts the reference's way of writing things would teach the wrong lesson.
REFERENCE_FROM_SCRATCH = (f"from pathlib import Path\n_ref = Path({str(SOLUTIONS)!r}) / "
                          "'from_scratch/transformer.py'\nexec(compile(_ref.read_text(), "
                          "str(_ref), 'exec'))\n")
OTHER_CORRECT_SOLUTIONS = {
    "masked_softmax_finite_fill": ("scaled_dot_product_attention/masked_softmax", """
import numpy as np

def masked_softmax(scores, mask=None):
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    filled = np.where(mask, scores, np.finfo(scores.dtype).min)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True))
    return np.where(mask, e / e.sum(axis=-1, keepdims=True), 0.0)
"""),
    "sdpa_numpy_einsum": ("scaled_dot_product_attention/sdpa_numpy", """
import math
import numpy as np

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return np.einsum("bhqk,bhkd->bhqd", weights, v), weights
"""),
    "sdpa_torch_nan_to_num": ("scaled_dot_product_attention/sdpa_torch", """
import torch

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
    return weights @ v, weights
"""),
    "from_scratch_rewritten": ("from_scratch", REFERENCE_FROM_SCRATCH + """
import torch.nn.functional as F


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        B, H = query.size(0), self.num_heads
        q, k, v = (w(x).view(B, -1, H, self.d_k).permute(0, 2, 1, 3)
                   for w, x in ((self.w_q, query), (self.w_k, key), (self.w_v, value)))
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.w_o(out.transpose(1, 2).contiguous().view(B, -1, H * self.d_k)), weights


class LayerNorm(LayerNorm):
    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class Transformer(Transformer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        table = self.pe
        del self.pe
        self.register_buffer("pe", table)  # persistent: in the state_dict, harmless


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    model.eval()
    src_mask = padding_mask(src, model.pad_id)
    memory = model.encode(src, src_mask)
    tokens = [torch.full((src.size(0),), bos_id, dtype=torch.long)]
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    while len(tokens) <= max_len and not finished.all():
        logits = model.out_proj(model.decode(torch.stack(tokens, 1), memory, src_mask))
        step = torch.where(finished, model.pad_id, logits[:, -1].argmax(-1))
        finished = finished | (step == eos_id)
        tokens.append(step)
    return torch.stack(tokens, 1)
"""),
}


@pytest.mark.parametrize("name", sorted(OTHER_CORRECT_SOLUTIONS))
def test_other_correct_solutions_pass(name, tmp_path):
    target, source = OTHER_CORRECT_SOLUTIONS[name]
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf8")
    chosen = [ex for ex in REGISTRY.values() if target in (ex.id, ex.chapter)]
    assert chosen
    for ex in chosen:
        result = run_exercise(ex, path, seed=5)
        assert result.passed, format_result(result)
