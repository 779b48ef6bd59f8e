"""What a trained translation model attends to (§4's "side benefit", the paper's appendix), measured
over a whole test set rather than read off one picture.

    teacher_forced(tokenizer, sources, targets)   id tensors the model reads, and the labels
    collect(model, src, tgt_in)                    every attention layer's weights, by hooks
    labels(tokenizer, ids)                         subword strings for a heatmap's axes
    statistics(model, src, tgt_in)                 per layer and head, over all sentences:
        entropy        mean entropy of a query's weights, divided by log(number of keys it sees)
        diagonal       how often a target token's strongest source link lies within +-width of
                       the monotone diagonal, and how often a link drawn at random would
        monotone       how often the strongest link (heads averaged) does not move backwards
                       (beware: against random links only; a head parked on one token scores 1)
        *_inner        the same without the endpoint steps, the first target step and the one
                       that predicts </s>, which any model aligns with the source's ends; with
                       the chance levels of random links for those steps (for "monotone":
                       (S + 1) / 2S, the chance that a second uniform draw is not below a first)
        offsets        encoder: where each position's strongest link goes (same, previous, next,
                       the final </s>, elsewhere)
    agreement(model, src, tgt_in, links)           per decoder layer and head: how often the
                       strongest cross-attention link hits a reference link (e.g. a word
                       aligner's, aiayn.lab.word_alignment), against a guess that knows only
                       positions (the diagonal scaled by the two lengths) and a random link

The interactive explorer of these weights is aiayn.explorers.attention_data / attention_explorer.

Teacher-forcing the model's own translation reproduces what it computed while decoding it: the
decoder is causal, so the prefix alone determines each step.
"""

from dataclasses import dataclass

import torch

from ..data.batching import encode_pairs, pad
from ..data.specials import PAD_ID
from ..pt.masks import padding_mask

OFFSETS = ("same", "previous", "next", "</s>", "other")  # priority in this order


@dataclass
class Attention:
    """Weights of every attention layer for one batch, each a list over layers:
    encoder (B, H, S, S), decoder self-attention (B, H, T, T), cross (B, H, T, S)."""

    encoder: list
    decoder: list
    cross: list


def teacher_forced(tokenizer, sources: list[str], targets: list[str]):
    """(src (B, S) = subwords + </s>, tgt_in (B, T) = <s> + subwords, tgt_out (B, T) = subwords +
    </s>): decoder position i reads tgt_in[i] and predicts tgt_out[i]."""
    pairs = encode_pairs(tokenizer, sources, targets)
    return (pad([s for s, _ in pairs]), pad([t[:-1] for _, t in pairs]), pad([t[1:] for _, t in pairs]))


@torch.no_grad()
def collect(model, src: torch.Tensor, tgt_in: torch.Tensor) -> Attention:
    """One teacher-forced pass through encoder and decoder in eval mode (no dropout), with a
    forward hook on every MultiHeadAttention keeping the weights it returns (on the CPU, in
    float32). Runs on the model's device with explicit attention (the fused kernel returns no
    weights); hooks, mode and each module's ``fused`` are restored after."""
    found = {"encoder": [], "decoder": [], "cross": []}

    def keep(where):
        def hook(module, inputs, output):
            found[where].append(output[1].float().cpu())
        return hook

    modules = [(layer.self_attn, "encoder") for layer in model.encoder.layers]
    modules += [(m, where) for layer in model.decoder.layers
                for m, where in ((layer.self_attn, "decoder"), (layer.cross_attn, "cross"))]
    hooks = [m.register_forward_hook(keep(where)) for m, where in modules]
    was_training, was_fused = model.training, [m.fused for m, _ in modules]
    model.eval()
    device = next(model.parameters(), torch.empty(0)).device
    try:  # encoder and decoder only: the logits (B x T x vocabulary) are not needed here
        for m, _ in modules:
            m.fused = False
        src, tgt_in = src.to(device), tgt_in.to(device)
        src_mask = padding_mask(src, model.config.pad_id)
        model.decode(tgt_in, model.encode(src, src_mask), src_mask)
    finally:
        for h in hooks:
            h.remove()
        for (m, _), fused in zip(modules, was_fused):
            m.fused = fused
        model.train(was_training)
    return Attention(**found)


def labels(tokenizer, ids) -> list[str]:
    """Subword strings of a row of ids, padding dropped (``▁`` marks a word start)."""
    return [tokenizer.backend.id_to_token(int(i)) for i in ids if int(i) != PAD_ID]


def entropy(weights: torch.Tensor, keys: torch.Tensor):
    """Per query: entropy of its weights over the keys it may see, divided by log(number of those
    keys) (1 = uniform, 0 = one key); NaN where a query sees fewer than 2 keys.
    weights (B, H, T_q, T_k), keys bool broadcastable to it."""
    p = torch.where(keys, weights, 0.0)
    h = -(p * torch.log(torch.where(p > 0, p, 1.0))).sum(-1)
    n = keys.expand_as(weights).sum(-1).double()
    return torch.where(n >= 2, h / torch.log(n.clamp(min=2)), torch.nan)


def diagonal_targets(src_len: torch.Tensor, tgt_len: torch.Tensor, T: int) -> torch.Tensor:
    """(B, T): the source position of the monotone diagonal for every target step,
    round(i (S - 1) / (T - 1)), where S and T are the real lengths of each pair."""
    i = torch.arange(T, dtype=torch.float64)
    slope = (src_len - 1).double() / (tgt_len - 1).clamp(min=1).double()
    return torch.round(i[None, :] * slope[:, None]).long()


@torch.no_grad()
def statistics(model, src: torch.Tensor, tgt_in: torch.Tensor, batch_size: int = 200,
               width: int = 1) -> dict:
    """Statistics of every attention layer and head over all sentence pairs (see the module
    docstring), as tensors indexed [layer, head]: "entropy" {"encoder", "decoder", "cross"};
    "diagonal" and "diagonal_inner" (layers, heads + 1), the last column for the heads' average;
    "monotone" and "monotone_inner" (layers,); "chance", "chance_inner" and "monotone_chance"
    (numbers); "offsets" (encoder layers, heads, len(OFFSETS))."""
    sums = {}

    def add(name, layer, value, count):
        total, n = sums.setdefault(name, {}).get(layer, (0.0, 0.0))
        sums[name][layer] = (total + torch.as_tensor(value, dtype=torch.float64),
                             n + torch.as_tensor(count, dtype=torch.float64))

    order = torch.argsort((tgt_in != PAD_ID).sum(1) * src.shape[1] + (src != PAD_ID).sum(1))
    for start in range(0, len(src), batch_size):  # similar lengths together: little padding
        rows = order[start:start + batch_size]
        s, t = src[rows], tgt_in[rows]
        s, t = s[:, :int((s != PAD_ID).sum(1).max())], t[:, :int((t != PAD_ID).sum(1).max())]
        att = collect(model, s, t)
        src_ok, tgt_ok = s != PAD_ID, t != PAD_ID
        src_keys = src_ok[:, None, None, :]  # (B, 1, 1, S)
        tgt_keys = tgt_ok[:, None, None, :] & torch.ones(t.shape[1], t.shape[1], dtype=torch.bool).tril()
        for where, layers, keys, queries in (("encoder", att.encoder, src_keys, src_ok),
                                             ("decoder", att.decoder, tgt_keys, tgt_ok),
                                             ("cross", att.cross, src_keys, tgt_ok)):
            for layer, w in enumerate(layers):
                e = entropy(w, keys)
                ok = queries[:, None, :] & ~e.isnan()
                add(f"entropy/{where}", layer, torch.where(ok, e, 0.0).sum((0, 2)), ok.sum((0, 2)))
        src_len, tgt_len = src_ok.sum(1), tgt_ok.sum(1)
        diagonal = diagonal_targets(src_len, tgt_len, t.shape[1])  # (B, T)
        # a link drawn uniformly among the S real source positions lands near the diagonal with
        # probability (positions within +-width, inside the sentence) / S
        near = (torch.minimum(diagonal + width, src_len[:, None] - 1)
                - (diagonal - width).clamp(min=0) + 1)
        chance = near / src_len[:, None]
        # inner steps: neither the first (it reads <s>) nor the last (it predicts </s>)
        inner = tgt_ok & (torch.arange(t.shape[1]) > 0) & (torch.arange(t.shape[1]) < tgt_len[:, None] - 1)
        pairs = inner[:, 1:] & inner[:, :-1]  # a step and the next, both inner
        add("chance", 0, chance[tgt_ok].sum(), tgt_ok.sum())
        add("chance_inner", 0, chance[inner].sum(), inner.sum())
        # two independent uniform links among S positions: P(second >= first) = (S + 1) / 2S
        not_back = ((src_len + 1) / (2 * src_len)).double()[:, None].expand_as(pairs)
        add("monotone_chance", 0, not_back[pairs].sum(), pairs.sum())
        for layer, w in enumerate(att.cross):
            heads_and_mean = torch.cat([w, w.mean(1, keepdim=True)], 1)
            strongest = heads_and_mean.masked_fill(~src_keys, -1.0).argmax(-1)  # (B, H + 1, T)
            near_diagonal = (strongest - diagonal[:, None]).abs() <= width
            add("diagonal", layer, (near_diagonal & tgt_ok[:, None]).sum((0, 2)), tgt_ok.sum())
            add("diagonal_inner", layer, (near_diagonal & inner[:, None]).sum((0, 2)), inner.sum())
            forward = strongest[:, -1, 1:] >= strongest[:, -1, :-1]
            add("monotone", layer, (forward & tgt_ok[:, 1:]).sum(), tgt_ok[:, 1:].sum())
            add("monotone_inner", layer, (forward & pairs).sum(), pairs.sum())
        i = torch.arange(s.shape[1])
        last = (src_len - 1)[:, None, None]
        for layer, w in enumerate(att.encoder):
            j = w.masked_fill(~src_keys, -1.0).argmax(-1)  # (B, H, S): each position's strongest link
            taken, counts = ~src_ok[:, None, :], []
            for kind in (j == i, j == i - 1, j == i + 1, j == last, torch.ones_like(j, dtype=torch.bool)):
                kind = kind & ~taken  # each link counted once, in the order of OFFSETS
                taken = taken | kind
                counts.append(kind.sum((0, 2)))
            add("offsets", layer, torch.stack(counts, -1), src_ok.sum())
    out = {"entropy": {}}
    for name, per_layer in sums.items():
        value = torch.stack([total / n for total, n in (per_layer[k] for k in sorted(per_layer))])
        if name.startswith("entropy/"):
            out["entropy"][name.split("/")[1]] = value
        else:
            out[name] = value
    for name in ("chance", "chance_inner", "monotone_chance"):
        out[name] = float(out[name][0])
    return out


def position_guess(src_len: torch.Tensor, tgt_len: torch.Tensor, T: int) -> torch.Tensor:
    """(B, T): the source word a guess from positions alone links to each predicted target word:
    word k of n_t (counted from 0, the final </s> left out on both sides) to word
    round(k (n_s - 1) / (n_t - 1)) of n_s, the diagonal scaled by the two lengths. ``src_len``
    and ``tgt_len`` count the source with its </s> and the decoder's input with its <s>."""
    n_s, n_t = (src_len - 1).clamp(min=1), (tgt_len - 1).clamp(min=1)
    k = torch.arange(T, dtype=torch.float64)
    return torch.round(k[None, :] * ((n_s - 1) / (n_t - 1).clamp(min=1)).double()[:, None]).long()


@torch.no_grad()
def agreement(model, src: torch.Tensor, tgt_in: torch.Tensor, links: torch.Tensor, batch_size: int = 200) -> dict:
    """How often the strongest cross-attention link of decoder step i (which predicts target word
    i) is the source position ``links[b, i]`` (-1: no reference link, step left out). Returns
    "model" (decoder layers, heads + 1; the last column for the heads' average), "position" (the
    share ``position_guess`` hits), "chance" (a link drawn uniformly among the source positions:
    the mean of 1/S) and "links" (how many steps were scored)."""
    if links.shape != tgt_in.shape:
        raise ValueError(f"links {tuple(links.shape)} must have tgt_in's shape {tuple(tgt_in.shape)}")
    hits, position, chance, count = None, 0.0, 0.0, 0
    for start in range(0, len(src), batch_size):
        s, t, ref = src[start:start + batch_size], tgt_in[start:start + batch_size], links[start:start + batch_size]
        s, t = s[:, :int((s != PAD_ID).sum(1).max())], t[:, :int((t != PAD_ID).sum(1).max())]
        ref = ref[:, :t.shape[1]]
        scored = (ref >= 0) & (t != PAD_ID)
        src_len, tgt_len = (s != PAD_ID).sum(1), (t != PAD_ID).sum(1)
        att = collect(model, s, t)
        per_layer = []
        for w in att.cross:
            heads_and_mean = torch.cat([w, w.mean(1, keepdim=True)], 1)
            strongest = heads_and_mean.masked_fill((s == PAD_ID)[:, None, None, :], -1.0).argmax(-1)
            per_layer.append(((strongest == ref[:, None]) & scored[:, None]).sum((0, 2)))
        batch_hits = torch.stack(per_layer).double()
        hits = batch_hits if hits is None else hits + batch_hits
        guess = position_guess(src_len, tgt_len, t.shape[1])
        position += float(((guess == ref) & scored).sum())
        chance += float((scored / src_len[:, None]).sum())
        count += int(scored.sum())
    if count == 0:
        raise ValueError("links holds no reference link to score (every entry is -1)")
    return {"model": hits / count, "position": position / count, "chance": chance / count, "links": count}


__all__ = ["Attention", "OFFSETS", "agreement", "collect", "diagonal_targets",
           "entropy", "labels", "position_guess", "statistics", "teacher_forced"]
