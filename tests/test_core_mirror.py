"""The two implementations are mirrors: same modules, names and signatures."""

import importlib
import inspect

import pytest

from conftest import MIRRORED


def public(module):
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module.__name__}


def params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", MIRRORED)
def test_same_public_names(name):
    np_mod = importlib.import_module(f"aiayn.np.{name}")
    pt_mod = importlib.import_module(f"aiayn.pt.{name}")
    assert sorted(public(np_mod)) == sorted(public(pt_mod))
    assert public(np_mod), f"aiayn.np.{name} defines nothing"


@pytest.mark.parametrize("name", MIRRORED)
def test_same_signatures(name):
    np_mod = importlib.import_module(f"aiayn.np.{name}")
    pt_mod = importlib.import_module(f"aiayn.pt.{name}")
    pt_public = public(pt_mod)
    for obj_name, np_obj in public(np_mod).items():
        pt_obj = pt_public[obj_name]
        if inspect.isclass(np_obj):
            assert params(np_obj.__init__) == params(pt_obj.__init__), obj_name
            assert params(np_obj.forward) == params(pt_obj.forward), obj_name
        else:
            assert params(np_obj) == params(pt_obj), obj_name


def test_mirrored_list_is_complete():
    """Every module file exists on both sides (aiayn.np.nn is NumPy's stand-in for torch.nn)."""
    root = importlib.import_module("aiayn").__path__[0]
    import pathlib
    # NumPy only: backprop, loss and train hold the backward passes, the loss and the optimiser
    # that aiayn.pt gets from autograd and torch.optim (the backpropagation chapter).
    numpy_only = {"__init__", "nn", "backprop", "loss", "train"}
    np_files = {p.stem for p in pathlib.Path(root, "np").glob("*.py")} - numpy_only
    pt_files = {p.stem for p in pathlib.Path(root, "pt").glob("*.py")} - {"__init__"}
    assert np_files == pt_files == set(MIRRORED)
