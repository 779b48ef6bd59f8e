"""A Transformer from an empty file: the version you could write on a whiteboard (PyTorch).

Reference solution of exercises/from_scratch/transformer.py. Conventions: activations
(B, T, d_model), heads (B, H, T, d_k), token ids (B, T) int64; masks are boolean,
broadcastable to (B, H, T_q, T_k), True = "this query may attend to this key".
"""

import math

import torch
from torch import nn


# Stage 1: scaled dot-product attention (§3.2.1) --------------------------------------------
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v -> (output (B, H, T_q, d_v), weights (B, H, T_q, T_k))."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T_q, T_k)
    if mask is not None:
        # The most negative finite number, not -inf: a query whose keys are all masked then
        # gets a finite (uniform) softmax instead of 0/0 = NaN ...
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)  # over the keys
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # ... which this turns into zero weights
    return weights @ v, weights


# Stage 2: multi-head attention (§3.2.2) ----------------------------------------------------
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        """(B, T, d_model) -> (B, T, H, d_k) -> (B, H, T, d_k): each head sees all positions."""
        return x.view(x.size(0), x.size(1), self.num_heads, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.w_q(query))
        k = self.split_heads(self.w_k(key))
        v = self.split_heads(self.w_v(value))
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        B, H, T_q, d_k = out.shape
        out = out.transpose(1, 2).reshape(B, T_q, H * d_k)  # concatenate the heads
        return self.w_o(out), weights


# Stage 3: masks ----------------------------------------------------------------------------
def padding_mask(tokens, pad_id):
    """(B, T) ids -> (B, 1, 1, T): no query may look at a padding key."""
    return (tokens != pad_id)[:, None, None, :]


def causal_mask(size):
    """(1, 1, T, T), lower triangular: position i sees positions 0..i (itself included)."""
    return torch.tril(torch.ones(size, size, dtype=torch.bool))[None, None]


def target_mask(tokens, pad_id):
    """Decoder self-attention: padding AND causal, (B, 1, T, T)."""
    return padding_mask(tokens, pad_id) & causal_mask(tokens.size(1)).to(tokens.device)


# Stage 4: sinusoidal positional encoding (§3.5) --------------------------------------------
def positional_encoding(max_len, d_model):
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


# Stage 5: LayerNorm, feed-forward network, encoder layer (§3.1, §3.3) -----------------------
class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # biased, like nn.LayerNorm
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(torch.relu(self.w_1(x)))


class EncoderLayer(nn.Module):
    """Post-LN, as in the paper: x = LayerNorm(x + Dropout(Sublayer(x)))."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = LayerNorm(d_model), LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)[0]))
        return self.norm2(x + self.dropout(self.ffn(x)))


# Stage 6: decoder layer ----------------------------------------------------------------------
class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        # Queries from the decoder; keys and values from the encoder's output.
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.norm3(x + self.dropout(self.ffn(x)))


# Stage 7: the encoder-decoder model (§3, Figure 1) ------------------------------------------
class Transformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model=512, num_heads=8, num_layers=6,
                 d_ff=2048, dropout=0.1, max_len=512, pad_id=0):
        super().__init__()
        self.d_model, self.pad_id = d_model, pad_id
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        for embedding in (self.src_embed, self.tgt_embed):  # times sqrt(d_model): unit variance
            nn.init.normal_(embedding.weight, std=d_model ** -0.5)
        self.register_buffer("pe", positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.encoder = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.out_proj = nn.Linear(d_model, tgt_vocab, bias=False)
        self.out_proj.weight = self.tgt_embed.weight  # §3.4: shared with the target embedding

    def embed(self, embedding, tokens):
        x = embedding(tokens) * math.sqrt(self.d_model) + self.pe[: tokens.size(1)]
        return self.dropout(x)

    def encode(self, src, src_mask=None):
        """src (B, T_src) -> memory (B, T_src, d_model)."""
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return x

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        """tgt (B, T_tgt) -> hidden states (B, T_tgt, d_model)."""
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.pad_id)
        x = self.embed(self.tgt_embed, tgt)
        for layer in self.decoder:
            x = layer(x, memory, src_mask, tgt_mask)
        return x

    def forward(self, src, tgt):
        """Teacher forcing: logits (B, T_tgt, tgt_vocab) for every target position."""
        src_mask = padding_mask(src, self.pad_id)
        return self.out_proj(self.decode(tgt, self.encode(src, src_mask), src_mask))


# Stage 8: greedy decoding --------------------------------------------------------------------
@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    """(B, T_src) -> (B, 1 + steps) ids starting with bos_id; pad_id after a row's eos_id."""
    model.eval()
    src_mask = padding_mask(src, model.pad_id)
    memory = model.encode(src, src_mask)  # the encoder runs once
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.out_proj(model.decode(ys, memory, src_mask)[:, -1])  # last position only
        next_token = logits.argmax(dim=-1).masked_fill(done, model.pad_id)
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
