"""Noticing a reader's file that replaces what the grader relies on.

``snapshot()`` runs in the parent, before it forks the child that imports the reader's file. It
records every function, class and module that is an attribute of NumPy's and PyTorch's public
namespaces (and the NumPy modules ``np.allclose`` calls into), of ``torch.Tensor`` and
``nn.Module``, of ``builtins`` and ``math``, and of every loaded ``aiayn`` module and class (the
graders, the comparisons, the course's implementations), with each Python function's code.
In the child, ``replaced(snapshot)`` after each check that passed names those that are no
longer the same object or run other code: ``np.allclose = lambda *a, **k: True`` at the top of a file, or
``course.masked_softmax.__code__ = ...`` inside a function, fails the check that follows.
One change is the libraries' own: importing ``torch._dynamo`` (which some PyTorch calls do
lazily) wraps ``torch.manual_seed``; a wrapper from the library's own files around the very
function it replaces is accepted.
"""

from __future__ import annotations

import operator
import os
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass

_LIBRARIES = ("builtins", "math", "numpy", "numpy.linalg", "numpy._core.numeric",
              "numpy._core.fromnumeric", "numpy.core.numeric", "numpy.core.fromnumeric",
              "torch", "torch.nn", "torch.nn.functional", "torch.linalg")
_CLASSES = (("torch", "Tensor"), ("torch.nn", "Module"))
_MISSING = object()
_CODE = operator.attrgetter("__code__")
_last: tuple[int, list] | None = None  # (len(sys.modules), snapshot) of the latest current()


def _namespaces():
    """(label, live namespace, is a class) triples; a class's mappingproxy stays live too."""
    course = [m for name, m in list(sys.modules.items())
              if (name == "aiayn" or name.startswith("aiayn.")) and isinstance(m, types.ModuleType)]
    for module in [sys.modules[n] for n in _LIBRARIES if n in sys.modules] + course:
        yield module.__name__, vars(module), False
    for module in course:
        for name, value in list(vars(module).items()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", vars(value), True
    for module_name, class_name in _CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type):
            yield f"{module_name}.{class_name}", vars(cls), True


@dataclass(frozen=True)
class _Namespace:
    """One module's or class's recorded attributes, in tuples that C loops compare quickly."""
    label: str
    namespace: Mapping
    keys: tuple  # of the functions, classes and modules in it
    values: tuple
    function_keys: tuple  # of the Python functions among them, with their code objects
    codes: tuple
    all_keys: frozenset | None  # a class's every key: a new one would shadow an inherited one


def snapshot() -> list[_Namespace]:
    """The namespaces, their callables and modules, and their Python functions' code."""
    taken = []
    for label, namespace, is_class in _namespaces():
        items = [(k, v) for k, v in list(namespace.items())
                 if callable(v) or isinstance(v, types.ModuleType)]
        functions = [(k, v.__code__) for k, v in items if isinstance(v, types.FunctionType)]
        taken.append(_Namespace(label, namespace, tuple(k for k, _ in items),
                                tuple(v for _, v in items), tuple(k for k, _ in functions),
                                tuple(c for _, c in functions),
                                frozenset(namespace) if is_class else None))
    return taken


def current() -> list[_Namespace]:
    """``snapshot()`` of this process, reused while no module was imported and nothing it
    records changed since (checking costs a fiftieth of taking a new one)."""
    global _last
    if _last is None or _last[0] != len(sys.modules) or not all(map(_unchanged, _last[1])):
        _last = (len(sys.modules), snapshot())
    return _last[1]


def replaced(taken: list[_Namespace]) -> list[str]:
    """``module.name`` of every recorded attribute that was reassigned, deleted or recompiled,
    and of every attribute added to a recorded class."""
    return [name for space in taken if not _unchanged(space) for name in _changes(space)]


def _unchanged(space: _Namespace) -> bool:
    get = space.namespace.get
    return (all(map(operator.is_, map(get, space.keys), space.values))
            and all(map(operator.is_, map(_CODE, map(get, space.function_keys)), space.codes))
            and (space.all_keys is None or len(space.namespace) == len(space.all_keys)))


def _changes(space: _Namespace) -> list[str]:
    codes = dict(zip(space.function_keys, space.codes))
    changed = []
    for key, value in zip(space.keys, space.values):
        now = space.namespace.get(key, _MISSING)
        if now is value:  # the same function, perhaps with another body
            if key in codes and now.__code__ is not codes[key]:
                changed.append(key)
        elif not _library_wrapper(now, value):
            changed.append(key)
    if space.all_keys is not None:
        changed += [key for key in space.namespace if key not in space.all_keys]
    return [f"{space.label}.{key}" for key in changed]


def _library_wrapper(now, original) -> bool:
    folders = tuple(os.path.dirname(sys.modules[name].__file__) + os.sep
                    for name in ("numpy", "torch") if name in sys.modules)
    return (isinstance(now, types.FunctionType) and getattr(now, "__wrapped__", None) is original
            and now.__code__.co_filename.startswith(folders))
