"""Counting parameters and multiply-adds (MACs) of the Transformer's parts, by formula and
by walking a PyTorch model. The chapters on multi-head attention and on the feed-forward
network use these counts; the tests check each formula against a module's real size and
against PyTorch's FLOP counter.

One multiply-add (MAC) is one ``a * b + c``; a matrix product (m, n) @ (n, p) costs m n p.
"""

from torch import nn

from .._checks import check_positive, head_sizes
from ..pt.attention import MultiHeadAttention
from ..pt.embeddings import LearnedPositionalEncoding, TokenEmbedding
from ..pt.feedforward import PositionwiseFeedForward
from ..pt.normalization import LayerNorm


def attention_params(d_model: int, num_heads: int, d_k: int | None = None,
                     d_v: int | None = None, bias: bool = True) -> int:
    """Parameters of multi-head attention: h heads, each with W_i^Q, W_i^K (d_model x d_k)
    and W_i^V (d_model x d_v), plus W^O (h d_v x d_model), plus their biases.
    With d_k = d_v = d_model / h this is 4 d_model^2 + 4 d_model, whatever h is."""
    d_k, d_v = head_sizes(d_model, num_heads, d_k, d_v)
    weights = num_heads * (2 * d_model * d_k + d_model * d_v) + num_heads * d_v * d_model
    biases = num_heads * (2 * d_k + d_v) + d_model
    return weights + (biases if bias else 0)


def attention_macs(T: int, d_model: int, num_heads: int, T_k: int | None = None,
                   d_k: int | None = None, d_v: int | None = None) -> dict:
    """Multiply-adds of one multi-head attention call for one sequence of T queries
    attending to T_k keys (T_k = T for self-attention), by step; 'total' is their sum.
    Softmax, scaling and bias additions are O(h T T_k) or O(T d_model) and not counted."""
    check_positive("T", T)
    T_k = T if T_k is None else T_k
    check_positive("T_k", T_k)
    d_k, d_v = head_sizes(d_model, num_heads, d_k, d_v)
    macs = {
        "q_proj": T * d_model * num_heads * d_k,  # Q W_i^Q for every head
        "k_proj": T_k * d_model * num_heads * d_k,
        "v_proj": T_k * d_model * num_heads * d_v,
        "scores": num_heads * T * T_k * d_k,  # Q_i K_i^T
        "weighted_sum": num_heads * T * T_k * d_v,  # weights_i V_i
        "out_proj": T * num_heads * d_v * d_model,  # Concat(...) W^O
    }
    macs["total"] = sum(macs.values())
    return macs


def ffn_params(d_model: int, d_ff: int) -> int:
    """FFN(x) = max(0, x W1 + b1) W2 + b2: W1 (d_model x d_ff), b1, W2 (d_ff x d_model), b2."""
    check_positive("d_model", d_model)
    check_positive("d_ff", d_ff)
    return 2 * d_model * d_ff + d_ff + d_model


def ffn_macs(T: int, d_model: int, d_ff: int) -> int:
    """Multiply-adds of the feed-forward network on T positions: two matrix products."""
    check_positive("T", T)
    check_positive("d_model", d_model)
    check_positive("d_ff", d_ff)
    return T * d_model * d_ff + T * d_ff * d_model  # x W1, then h W2


# Module class -> component. The first match walking up from a parameter decides.
_COMPONENTS = (
    ((TokenEmbedding, LearnedPositionalEncoding, nn.Embedding), "embeddings"),
    ((MultiHeadAttention, nn.MultiheadAttention), "attention"),
    ((PositionwiseFeedForward,), "feed-forward"),
    ((LayerNorm, nn.LayerNorm), "layer norm"),
)
ORDER = ("embeddings", "attention", "feed-forward", "layer norm", "output projection", "other")


def count_by_component(model: nn.Module) -> dict:
    """Parameter count of a PyTorch module by component, in ``ORDER``, zeros left out.

    Each tensor is counted once: a matrix shared by the embeddings and the output layer
    (§3.4) counts under 'embeddings', where ``named_parameters`` first meets it, so the
    values add up to ``sum(p.numel() for p in model.parameters())``. Works on the meta
    device (``numel`` needs no memory). An untied pre-softmax layer (a top-level
    ``out_proj``) is 'output projection'; anything unrecognised is 'other'."""
    owners = {}  # module path -> component, for every module of a known kind
    for name, module in model.named_modules():
        for kinds, component in _COMPONENTS:
            if isinstance(module, kinds):
                owners[name] = component
                break
        else:
            if name == "out_proj" and isinstance(module, nn.Linear):
                owners[name] = "output projection"
    counts = dict.fromkeys(ORDER, 0)
    for name, param in model.named_parameters():
        parts = name.split(".")[:-1]
        # the innermost known module that owns the parameter; "" is the model itself
        prefixes = (".".join(parts[:i]) for i in range(len(parts), -1, -1))
        component = next((owners[p] for p in prefixes if p in owners), "other")
        counts[component] += param.numel()
    return {k: v for k, v in counts.items() if v}
