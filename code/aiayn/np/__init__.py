"""The NumPy Transformer: float64, inference only (dropout is the identity).

Same module, class and function names, signatures and shapes as ``aiayn.pt``; weights move
between the two with ``aiayn.convert``. ``aiayn.np.nn`` is a minimal stand-in for ``torch.nn``.
"""

from .nn import manual_seed

__all__ = ["manual_seed"]
