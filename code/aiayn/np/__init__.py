"""The NumPy Transformer: float64; inference by default (dropout is the identity), and training
with backward passes written by hand after ``model.train()`` (``backprop``, ``loss``, ``train``).

Same module, class and function names, signatures and shapes as ``aiayn.pt``; weights move
between the two with ``aiayn.convert``. ``aiayn.np.nn`` is a minimal stand-in for ``torch.nn``.
"""

from .nn import manual_seed

__all__ = ["manual_seed"]
