"""Every code cell of a chapter that prints or draws has a committed output.

nbval compares a cell's committed outputs with a fresh run, but a cell marked
``# NBVAL_IGNORE_OUTPUT`` is not compared at all: committed without its output, it passes
forever, and the prose after it reads numbers no reader can see. That happened to the training
chapter's attention statistics (cell ``training_multi30k-attends-05`` at commit de1abfd: it prints
the per-layer shares, had no output in either language, and the next paragraph quoted them).

The rule, checked here on every chapter notebook in both languages: a code cell that, run top to
bottom, is sure to call something that prints or draws has at least one output. Such a call is
``print(...)``, ``display(...)``, ``plt.show()`` (any ``.show()`` on ``plt``), ``aiayn.show``'s
``difference`` and ``table``, and every function a notebook imports from ``aiayn.figures`` that
makes a matplotlib figure (readers of results files and table builders there draw nothing). A call counts when it is sure to run: not inside an ``if`` or
``try`` (a cell that prints only on a GPU, or only on Colab), nor inside a function or class
body (defining is not calling). A cell that prints nothing on purpose although it calls such a
function carries the tag ``no-output`` (docs: this file's name in the report of issue 54).
"""

import ast
import importlib
import inspect
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*/*.ipynb"))
TAG = "no-output"
ALWAYS = {"print", "display"}
SHOW_FUNCTIONS = {"difference", "table"}  # aiayn.show: each prints or displays one thing
CONDITIONAL = (ast.If, ast.IfExp, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
               ast.ClassDef, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def source(cell) -> str:
    text = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    # IPython magics and shell lines are not Python: keep the line count, drop the line.
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())


def draws(module: str, name: str) -> bool:
    """Whether ``module.name`` draws: a figures module's plotting functions make a matplotlib
    figure or draw on given axes; its readers and table builders (``load``, ``*_rows``) draw
    nothing."""
    try:
        obj = getattr(importlib.import_module(module), name)
        code = inspect.getsource(obj)
        return any(mark in code for mark in ("plt.", "ax.", "axes", ".plot(", ".imshow("))
    except (ImportError, AttributeError, TypeError, OSError):
        return True  # unknown: keep the stricter reading


def drawing_names(cells) -> set[str]:
    """The names under which a notebook's cells import something that prints or draws."""
    names = set(ALWAYS)
    for cell in cells:
        try:
            tree = ast.parse(source(cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("aiayn.figures"):
                    names |= {alias.asname or alias.name for alias in node.names
                              if draws(node.module, alias.name)}
                elif node.module == "aiayn.show":
                    names |= {alias.asname or alias.name for alias in node.names if alias.name in SHOW_FUNCTIONS}
                elif node.module in ("IPython.display", "IPython.core.display"):
                    names |= {alias.asname or alias.name for alias in node.names if alias.name == "display"}
    return names


def _parents(tree):
    parent = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    return parent


def _is_drawing_call(call: ast.Call, names: set[str]) -> bool:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in names
    if isinstance(f, ast.Attribute):
        if f.attr == "show" and isinstance(f.value, ast.Name) and f.value.id == "plt":
            return True
        # aiayn.show's functions through the module (show.table(...)), a figures module's function
        return isinstance(f.value, ast.Name) and (f.value.id == "show" and f.attr in SHOW_FUNCTIONS)
    return False


def sure_drawing_calls(code: str, names: set[str]) -> list[int]:
    """Line numbers of calls in ``code`` that print or draw and are sure to run (module docstring)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    parent = _parents(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_drawing_call(node, names):
            up, sure = parent.get(node), True
            while up is not None:
                if isinstance(up, CONDITIONAL):
                    sure = False
                    break
                up = parent.get(up)
            if sure:
                lines.append(node.lineno)
    return sorted(lines)


def missing_outputs(notebook: dict) -> list[str]:
    """'<cell id>: line N calls ...' for every code cell that is sure to print or draw, has no
    committed output and no ``no-output`` tag."""
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    names = drawing_names(cells)
    found = []
    for i, cell in enumerate(cells):
        if TAG in cell.get("metadata", {}).get("tags", []) or cell.get("outputs"):
            continue
        lines = sure_drawing_calls(source(cell), names)
        if lines:
            found.append(f"{cell.get('id', f'code cell {i}')}: line {lines[0]} prints or draws, no output committed")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_cell_that_prints_or_draws_has_its_output(path):
    missing = missing_outputs(json.loads(path.read_text(encoding="utf8")))
    assert not missing, (f"{path.relative_to(ROOT)}: " + "; ".join(missing)
                         + f" (execute the page again, or tag a cell that prints nothing on purpose {TAG!r})")


# The cell as it was committed at de1abfd (chapters/en/training_multi30k.ipynb), outputs empty:
# the case this test exists for. CI clones one commit deep, so the cell is copied here.
ATTENDS_05_AT_DE1ABFD = '''# NBVAL_IGNORE_OUTPUT
print(f"strongest source link within one position of the diagonal, first and </s> steps left out "
      f"(chance {att_stats['chance_inner']:.0%}); moves forward or stays (chance {att_stats['monotone_chance']:.0%}):")
for layer in range(n_layers):
    row = att_stats["diagonal_inner"][layer]
    print(f"  decoder layer {layer + 1}: heads " + " ".join(f"{v:.0%}" for v in row[:-1])
          + f" | heads averaged {row[-1]:.0%} | forward or stays {att_stats['monotone_inner'][layer]:.0%}")
'''


def code_cell(text, outputs=(), tags=(), cell_id="c"):
    return {"cell_type": "code", "id": cell_id, "source": text, "outputs": list(outputs),
            "metadata": {"tags": list(tags)}, "execution_count": None}


def notebook(*cells):
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_it_catches_the_attention_cell_of_de1abfd():
    nb = notebook(code_cell(ATTENDS_05_AT_DE1ABFD, cell_id="training_multi30k-attends-05"))
    assert missing_outputs(nb) == ["training_multi30k-attends-05: line 2 prints or draws, no output committed"]
    printed = {"output_type": "stream", "name": "stdout", "text": "decoder layer 1: ..."}
    assert missing_outputs(notebook(code_cell(ATTENDS_05_AT_DE1ABFD, [printed]))) == []
    assert missing_outputs(notebook(code_cell(ATTENDS_05_AT_DE1ABFD, tags=[TAG]))) == []


def test_what_counts_as_printing_or_drawing():
    figure_import = code_cell("from aiayn.figures.kv_cache import plot_speedup as speedup\nfrom aiayn.show import table")
    cases = {
        "plt.plot(x)\nplt.show()": True,
        "speedup(results)": True,             # imported from aiayn.figures under another name
        "table(['a'], [[1]])": True,
        "show.difference('a', x, y)": True,
        "for i in range(3):\n    print(i)": True,
        "if device == 'cuda':\n    print('GPU')": False,    # not sure to run
        "try:\n    print(x)\nexcept NameError:\n    pass": False,
        "def report(x):\n    print(x)": False,            # defined, not called
        "glue('key', 3, display=False)": False,
        "x = compute()": False,
        "%matplotlib inline\nprint(1)": True,             # magics are skipped, not fatal
    }
    for text, expected in cases.items():
        nb = notebook(figure_import, code_cell(text, cell_id="c"))
        assert bool(missing_outputs(nb)) is expected, text
