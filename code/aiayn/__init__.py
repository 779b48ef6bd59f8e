"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), written twice.

``aiayn.np``  NumPy, float64: the reference you can read line by line; it also trains, with
             backward passes written by hand (``aiayn.np.backprop``, ``aiayn.np.train``).
``aiayn.pt``  PyTorch: the same modules, names, signatures and shapes.

Shapes: activations ``(B, T, d_model)``, heads ``(B, H, T, d_k)``, token ids ``(B, T)``.
Masks: boolean, 4-D, broadcastable to ``(B, H, T_q, T_k)``; ``True`` = "may attend".
"""

__version__ = "0.1.0"
