"""The PyTorch Transformer: trainable, with residual and embedding dropout.

Same module, class and function names, signatures and shapes as ``aiayn.np``.
"""
