"""Moving weights between the two implementations.

Both produce the same ``state_dict`` keys and shapes (``aiayn.np.nn.Module`` mirrors
``torch.nn.Module``'s naming), so conversion is only a change of array type. The decoder-only
model (``aiayn.np.decoder_only``, ``aiayn.pt.decoder_only``) converts to its own twin.
"""

import numpy as np
import torch

from .np.decoder_only import DecoderOnlyTransformer as NumpyDecoderOnly
from .np.model import Transformer as NumpyTransformer
from .pt.decoder_only import DecoderOnlyTransformer as TorchDecoderOnly
from .pt.model import Transformer as TorchTransformer


def numpy_state(state_dict: dict) -> dict:
    """PyTorch ``state_dict`` -> dict of float64 NumPy arrays (the NumPy model's precision)."""
    return {k: v.detach().cpu().to(torch.float64).numpy() for k, v in state_dict.items()}


def torch_state(state: dict, dtype: torch.dtype = torch.float32) -> dict:
    """NumPy state -> dict of tensors in ``dtype`` (float32 for training, float64 to compare)."""
    return {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in state.items()}


def numpy_model_from_torch(model: TorchTransformer) -> NumpyTransformer:
    """A NumPy model with the PyTorch model's config and weights (and its kind: encoder-decoder
    or decoder-only)."""
    result = (NumpyDecoderOnly if isinstance(model, TorchDecoderOnly) else NumpyTransformer)(model.config)
    result.load_state_dict(numpy_state(model.state_dict()))
    return result


def torch_model_from_numpy(model: NumpyTransformer, dtype: torch.dtype = torch.float32) -> TorchTransformer:
    """A PyTorch model (in ``dtype``, eval mode) with the NumPy model's config and weights (and
    its kind)."""
    result = (TorchDecoderOnly if isinstance(model, NumpyDecoderOnly) else TorchTransformer)(model.config).to(dtype)
    result.load_state_dict(torch_state(model.state_dict(), dtype))
    return result.eval()


__all__ = ["numpy_state", "torch_state", "numpy_model_from_torch", "torch_model_from_numpy"]
