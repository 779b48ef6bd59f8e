"""A 70-line stand-in for ``torch.nn``: just enough for the NumPy Transformer.

Parameters are plain ``np.ndarray`` attributes; children are ``Module`` attributes or lists
of modules. ``state_dict()`` walks them in definition order and produces the *same keys* as
the PyTorch implementation, which is what lets weights move between the two (``aiayn.convert``).
Attributes whose name starts with ``_`` are buffers (constants), never parameters.
"""

import math

import numpy as np

from .._checks import check_dropout, check_positive, check_size

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """The NumPy twin of ``torch.manual_seed``: re-seeds the generator used for initialisation."""
    global _rng
    _rng = np.random.default_rng(seed)


def uniform(bound: float, shape: tuple) -> np.ndarray:
    return _rng.uniform(-bound, bound, size=shape)


def normal(std: float, shape: tuple) -> np.ndarray:
    return _rng.normal(0.0, std, size=shape)


class Module:
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = ""):
        for name, value in vars(self).items():
            if name.startswith("_"):
                continue
            if isinstance(value, np.ndarray):
                yield prefix + name, value
            elif isinstance(value, Module):
                yield from value.named_parameters(f"{prefix}{name}.")
            elif isinstance(value, list):
                for i, child in enumerate(value):
                    yield from child.named_parameters(f"{prefix}{name}.{i}.")

    def state_dict(self) -> dict:
        return {name: value.copy() for name, value in self.named_parameters()}

    def load_state_dict(self, state: dict) -> None:
        """Copy values *in place*, so tied weights (one array under two names) stay tied."""
        own = dict(self.named_parameters())
        missing, unexpected = own.keys() - state.keys(), state.keys() - own.keys()
        if missing or unexpected:
            raise ValueError(f"state_dict keys differ: missing {sorted(missing)}, "
                             f"unexpected {sorted(unexpected)}")
        for name, param in own.items():
            value = np.asarray(state[name])
            if value.shape != param.shape:
                raise ValueError(f"state_dict[{name!r}] has shape {value.shape}, "
                                 f"the model's parameter has {param.shape}")
            param[...] = value


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape ``(out_features, in_features)``, as in PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        check_positive("in_features", in_features)
        check_positive("out_features", out_features)
        bound = 1.0 / math.sqrt(in_features)  # PyTorch's default initialisation range
        self.weight = uniform(bound, (out_features, in_features))
        self.bias = uniform(bound, (out_features,)) if bias else None

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_size("x", x, -1, self.weight.shape[1], "feature size")
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


class Dropout(Module):
    """Identity: the NumPy model only runs inference, where dropout does nothing."""

    def __init__(self, p: float = 0.1):
        check_dropout(p)
        self._p = p

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x
