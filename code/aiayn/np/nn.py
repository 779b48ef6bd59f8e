"""A stand-in for ``torch.nn``: just enough for the NumPy Transformer to run, and to learn.

Parameters are plain ``np.ndarray`` attributes; children are ``Module`` attributes or lists
of modules. ``state_dict()`` walks them in definition order and produces the *same keys* as
the PyTorch implementation, which is what lets weights move between the two (``aiayn.convert``).
Attributes whose name starts with ``_`` are buffers (constants), never parameters.

Backpropagation by hand: every module has a ``backward(grad)`` that takes the gradient of the
loss with respect to its output, adds the gradients of its own parameters to ``_grads`` and
returns the gradient with respect to its input. What it needs from the forward pass, the
forward pass keeps with ``save_for_backward``, in training mode only (``model.train()``); in
eval mode, the default, the model runs inference as before and keeps nothing.
"""

import math

import numpy as np

from .._checks import check_dropout, check_positive, check_size

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """The NumPy twin of ``torch.manual_seed``: re-seeds the generator used for initialisation
    and for dropout masks."""
    global _rng
    _rng = np.random.default_rng(seed)


def uniform(bound: float, shape: tuple) -> np.ndarray:
    return _rng.uniform(-bound, bound, size=shape)


def normal(std: float, shape: tuple) -> np.ndarray:
    return _rng.normal(0.0, std, size=shape)


class Module:
    training = False  # eval mode until .train(): dropout is the identity, nothing is saved

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

    # Training: modes, the saved values of the forward pass, gradients. ---------------------
    def modules(self):
        """This module and every module below it, each once (a shared module is one module)."""
        seen, stack = set(), [self]
        while stack:
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield module
            for name, value in reversed(list(vars(module).items())):
                if isinstance(value, Module) and not name.startswith("_"):
                    stack.append(value)
                elif isinstance(value, list) and not name.startswith("_"):
                    stack.extend(reversed(value))

    def train(self, mode: bool = True) -> "Module":
        """Training mode: dropout draws masks, and forward passes save what backward needs."""
        for module in self.modules():
            module.training = mode
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def save_for_backward(self, *values) -> None:
        """Keeps ``values`` for the next ``backward``, on a stack: a module called twice in one
        forward pass (the shared embedding, a layer's one dropout) is undone last call first."""
        if self.training:
            self.__dict__.setdefault("_saved", []).append(values)

    def saved(self) -> tuple:
        """What the latest forward pass not yet undone saved (and forgets it)."""
        if not self.__dict__.get("_saved"):
            raise RuntimeError(f"{type(self).__name__}.backward has no forward pass to undo: "
                               "call .train() before the forward pass, and backward once per call")
        return self._saved.pop()

    def saved_nbytes(self) -> int:
        """Bytes of the arrays this module and those below it keep for backward right now, each
        array once (several modules often keep the same one; a view keeps its whole base)."""
        arrays = {}
        for module in self.modules():
            for values in module.__dict__.get("_saved", []):
                for value in values:
                    if isinstance(value, np.ndarray):
                        base = value if value.base is None else value.base
                        arrays[id(base)] = base.nbytes
        return sum(arrays.values())

    def add_grad(self, name: str, grad: np.ndarray) -> None:
        """Adds dLoss/d(self.<name>): gradients accumulate until ``zero_grad``, as in PyTorch."""
        grads = self.__dict__.setdefault("_grads", {})
        grads[name] = grads[name] + grad if name in grads else grad

    def zero_grad(self) -> None:
        """Forgets every gradient, and any forward pass that was never undone."""
        for module in self.modules():
            module._grads, module._saved = {}, []

    def gradients(self) -> dict:
        """Parameter name -> dLoss/dparameter (zeros where no gradient arrived), the NumPy twin
        of ``p.grad``. A weight that several modules use (the tied embedding: source, target
        and output projection) receives the sum of all their contributions, under each name."""
        total = {}
        for module in self.modules():
            for name, grad in module.__dict__.get("_grads", {}).items():
                key = id(getattr(module, name))  # one array, however many modules hold it
                total[key] = total[key] + grad if key in total else grad
        return {name: total.get(id(param), np.zeros_like(param))
                for name, param in self.named_parameters()}


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
        self.save_for_backward(x)
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/dy (..., out) -> dL/dx (..., in). Every position used the same W and b, so their
        gradients are sums over positions: dL/dW = sum_n g_n x_n^T, dL/db = sum_n g_n."""
        (x,) = self.saved()
        # Positions as the rows of one matrix: one product each, not one per sentence.
        g, x_rows = grad.reshape(-1, grad.shape[-1]), x.reshape(-1, x.shape[-1])
        self.add_grad("weight", g.T @ x_rows)
        if self.bias is not None:
            self.add_grad("bias", g.sum(axis=0))
        return (g @ self.weight).reshape(x.shape)


class Dropout(Module):
    """In training mode, zeroes each value with probability p and scales the survivors by
    1 / (1 - p), so the expected value is unchanged (§5.4); in eval mode, the identity."""

    def __init__(self, p: float = 0.1):
        check_dropout(p)
        self._p = p

    def forward(self, x: np.ndarray) -> np.ndarray:
        if not self.training or self._p == 0.0:
            self.save_for_backward(None)
            return x
        keep = _rng.random(x.shape) >= self._p
        self.save_for_backward(keep)  # the backward pass must drop the same values
        return x * keep / (1.0 - self._p)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        (keep,) = self.saved()
        return grad if keep is None else grad * keep / (1.0 - self._p)
