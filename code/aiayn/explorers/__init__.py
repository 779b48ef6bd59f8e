"""Interactive figures (explorers) that run without a kernel and without a network: Vega-Lite 5
specifications rendered by the book (Vega bundled into the build, _ext/explorers.py) and by
JupyterLab, with a still image and a note elsewhere (aiayn.explorers.core).

    attention_explorer(attention_data(model, src, tgt_in, tgt_out, tokenizer))   # a trained model
    positional_explorer(d_model=128)                                             # §3.5
    mask_explorer(source_words, target_words)                                    # §3.2.3
"""

from .attention import attention_data, attention_explorer, check_attention_data
from .core import MIME, Explorer
from .masks import mask_explorer
from .positional import positional_explorer

__all__ = ["MIME", "Explorer", "attention_data", "attention_explorer", "check_attention_data",
           "mask_explorer", "positional_explorer"]
