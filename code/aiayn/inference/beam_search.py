"""Beam search with the length penalty of §6.1, batched: one decoder call per step for every
sentence and every beam, shape (B·K, 1) with a key-value cache (B·K, T without one).

The paper: "beam search with a beam size of 4 and length penalty α = 0.6 ... maximum output
length during inference to input length + 50, but terminate early when possible". The length
penalty is GNMT's (Wu et al., 2016): lp(Y) = ((5 + |Y|) / (5 + 1))^α, and a hypothesis Y is
ranked by score(Y) = log P(Y | X) / lp(Y), where |Y| counts the generated tokens, EOS included.
"""

import math
from dataclasses import dataclass

import torch

from .._checks import check_positive, check_special_ids, check_tokens
from ..data.specials import BOS_ID, EOS_ID
from ..pt.variant_cache import has_cache, incremental_decoder
from ..pt.masks import padding_mask


@dataclass(frozen=True)
class Hypothesis:
    """One finished translation. ``tokens`` excludes BOS and EOS; ``log_prob`` = log P(tokens, EOS),
    the model's log-probability of exactly this output; ``score`` = ``log_prob /
    length_penalty(len(tokens) + 1, alpha)``, the quantity beam search ranks by."""

    tokens: list[int]
    log_prob: float
    score: float


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α. α = 0 gives 1: raw log-probabilities, which favour short
    outputs, since every extra token multiplies P(Y) by a number below 1."""
    return ((5.0 + length) / 6.0) ** alpha


def strip_specials(ys: torch.Tensor, eos_id: int = EOS_ID) -> list[list[int]]:
    """Greedy decoding's output (B, 1 + steps), ``<s> y_1 ... </s> <pad> ...``, as lists of ids
    without the start token and without anything from the first EOS on: the format of
    ``beam_search``, ready for detokenisation."""
    out = []
    for row in ys[:, 1:].tolist():
        out.append(row[:row.index(eos_id)] if eos_id in row else row)
    return out


def beam_search(model, src: torch.Tensor, beam_size: int = 4, alpha: float = 0.6,
                max_extra_len: int = 50, bos_id: int = BOS_ID, eos_id: int = EOS_ID,
                use_cache: bool | None = None) -> list[list[int]]:
    """The best hypothesis per source sentence, as token ids without BOS and EOS."""
    hyps = beam_search_hypotheses(model, src, beam_size, alpha, max_extra_len, bos_id, eos_id,
                                  use_cache)
    return [h.tokens for h in hyps]


@torch.no_grad()
def beam_search_hypotheses(model, src: torch.Tensor, beam_size: int = 4, alpha: float = 0.6,
                           max_extra_len: int = 50, bos_id: int = BOS_ID, eos_id: int = EOS_ID,
                           use_cache: bool | None = None) -> list[Hypothesis]:
    """Beam search over a batch ``src`` (B, S) of padded source ids; returns the best
    ``Hypothesis`` of each sentence.

    Rules:
    - each sentence keeps K = ``beam_size`` live prefixes; at every step the K·V extensions are
      ranked by log-probability and the best 2K looked at (at most K of them end in EOS);
    - an EOS extension ranked among the first K leaves the beam as a finished hypothesis, and the
      K best non-EOS extensions form the next beam, so the beam never shrinks;
    - a sentence's output has at most N = (its own non-padding length + ``max_extra_len``)
      tokens before EOS: at step N + 1 only EOS is allowed, so every hypothesis is a complete
      output and every score includes the probability of ending (a prefix that was merely cut
      off would escape that cost and could outrank the complete outputs);
    - a sentence is done when its best finished hypothesis scores at least as high as its best
      live prefix does now (log P / lp of the prefix's length). With alpha = 0 stopping there
      loses nothing, since a prefix's log-probability only falls as it grows; with alpha > 0 it
      is a heuristic, since a growing lp lets a long output catch up. (tensor2tensor, the
      paper's code, divides by lp of the maximum length instead: a safe bound that searches
      longer. Stopping after K finished hypotheses, as fairseq does, returns junk when label
      smoothing makes K unlikely EOS extensions outrank the rest of the beam.) Done sentences
      leave the batch; the search ends when all are done;
    - the answer is the finished hypothesis with the highest ``score`` = log P / lp.
    PAD and BOS are never generated. With ``beam_size=1`` this is greedy decoding with the same
    length limit, for any alpha. Runs in eval mode and restores the model's mode afterwards.

    ``use_cache`` as in ``greedy_decode``: ``True`` feeds the decoder the newest token of every
    beam and keeps the keys and values of the earlier ones (``aiayn.pt.incremental``), which
    follow their beams when the beams are re-ranked and leave with finished sentences; ``False``
    re-reads every prefix at every step, the reference; ``None``: the cache if the model allows.
    """
    limits = _check_args(model, src, beam_size, alpha, max_extra_len, bos_id, eos_id)
    use_cache = has_cache(model) if use_cache is None else use_cache
    was_training = model.training
    model.eval()
    try:
        return _search(model, src, limits, beam_size, alpha, bos_id, eos_id, use_cache)
    finally:
        model.train(was_training)


def _search(model, src, limits, K, alpha, bos_id, eos_id, use_cache):
    pad_id, device = model.config.pad_id, src.device
    src_mask = padding_mask(src, pad_id)
    # Encode once; the K beams of sentence i read rows i*K .. i*K+K-1 of the repeated memory.
    memory = model.encode(src, src_mask).repeat_interleave(K, dim=0)  # (B·K, S, d_model)
    src_mask = src_mask.repeat_interleave(K, dim=0)                    # (B·K, 1, 1, S)
    decoder = incremental_decoder(model, memory, src_mask) if use_cache else None
    active = list(range(src.shape[0]))  # original index of each sentence still searching
    ys = torch.full((src.shape[0] * K, 1), bos_id, dtype=torch.long, device=device)
    # Only beam 0 is live at the start: K copies of <s> would fill the beam with duplicates.
    # Scores accumulate in at least float32 (a half-precision model's sums would drift).
    dtype = torch.promote_types(memory.dtype, torch.float32)
    scores = torch.full((src.shape[0], K), -math.inf, dtype=dtype, device=device)
    scores[:, 0] = 0.0
    finished = [[] for _ in active]
    for step in range(1, max(limits) + 2):  # the last step can only say EOS: all are done then
        if not active:
            break
        n = len(active)
        hidden = decoder(ys[:, -1:]) if use_cache else model.decode(ys, memory, src_mask)
        logits = model.out_proj(hidden[:, -1])  # (n·K, V)
        log_probs = torch.log_softmax(logits.to(dtype), dim=-1)
        log_probs[:, [pad_id, bos_id]] = -math.inf  # never generated (and not renormalised)
        at_limit = torch.tensor([step > limits[b] for b in active], device=device)
        if at_limit.any():  # these sentences must end now: only EOS is allowed
            forced = at_limit.repeat_interleave(K)
            eos_column = log_probs[forced, eos_id]
            log_probs[forced] = -math.inf
            log_probs[forced, eos_id] = eos_column
        V = log_probs.shape[-1]
        candidates = (scores[:, :, None] + log_probs.view(n, K, V)).view(n, K * V)
        top_scores, top_index = candidates.topk(min(2 * K, K * V), dim=1)  # best first
        parents = torch.arange(n, device=device)[:, None] * K + top_index // V  # rows of ys
        tokens, is_eos = top_index % V, top_index % V == eos_id
        penalty = length_penalty(step, alpha)  # |Y| = step generated tokens, EOS included
        # Bookkeeping in Python lists: one device-to-host copy per step, not one per hypothesis.
        # A live parent (finite score) matters, not a finite candidate: a model that gives the
        # forced EOS probability 0 still yields its (hopeless, score -inf) hypothesis.
        ends = is_eos[:, :K] & (scores.gather(1, top_index[:, :K] // V) > -math.inf)
        old_ys = ys.tolist()
        for b, row_ends, row_scores, row_parents in zip(
                active, ends.tolist(), top_scores[:, :K].tolist(), parents[:, :K].tolist()):
            for end, s, parent in zip(row_ends, row_scores, row_parents):
                if end:  # EOS ranked among the first K: a finished hypothesis
                    finished[b].append(Hypothesis(old_ys[parent][1:], s, s / penalty))
        # The next beam: the K best extensions that do not end in EOS.
        scores, pick = torch.where(is_eos, -math.inf, top_scores).topk(K, dim=1)
        rows = parents.gather(1, pick).view(-1)  # row r of the new beam extends old row rows[r]
        ys = torch.cat([ys[rows], tokens.gather(1, pick).view(-1, 1)], 1)
        if use_cache:  # the cached keys and values follow their beams (of the same sentence)
            decoder.reorder(rows, within_sentences=True)
        # Done: no live prefix scores better now than the best finished hypothesis (which
        # includes: no live prefix left, after the forced EOS).
        keep = [i for i, (b, live) in enumerate(zip(active, scores[:, 0].tolist()))
                if live / penalty > max((h.score for h in finished[b]), default=-math.inf)]
        if len(keep) < n:  # done sentences leave the batch: later steps do not pay for them
            rows = (torch.tensor(keep, dtype=torch.long, device=device)[:, None] * K
                    + torch.arange(K, device=device)).view(-1)
            ys, memory, src_mask, scores = ys[rows], memory[rows], src_mask[rows], scores[keep]
            active = [active[i] for i in keep]
            if use_cache:
                decoder.reorder(rows)
    # (No finished hypothesis at all is possible only for a model that gives EOS probability 0.)
    return [max(hyps, key=lambda h: h.score, default=Hypothesis([], -math.inf, -math.inf))
            for hyps in finished]


def _check_args(model, src, beam_size, alpha, max_extra_len, bos_id, eos_id) -> list[int]:
    """Validates the arguments; returns each sentence's maximum output length (EOS excluded)."""
    c = model.config
    is_int = not src.is_floating_point() and not src.is_complex() and src.dtype != torch.bool
    lo, hi = (int(src.min()), int(src.max())) if src.numel() else (0, 0)
    check_tokens("src", src, is_int, lo, hi, c.src_vocab_size)
    check_positive("beam_size", beam_size)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < math.inf:
        raise ValueError(f"alpha must be a finite number >= 0 (the paper uses 0.6), got {alpha!r}")
    if isinstance(max_extra_len, bool) or not isinstance(max_extra_len, int) or max_extra_len < 0:
        raise ValueError(f"max_extra_len must be an int >= 0 (the paper uses 50), got {max_extra_len!r}")
    check_special_ids(c, bos_id, eos_id)
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if value == c.pad_id:
            raise ValueError(f"{name}={value} equals pad_id: padding can be neither start nor end")
    if bos_id == eos_id:
        raise ValueError(f"bos_id and eos_id must differ, both are {bos_id}")
    limits = [n + max_extra_len for n in (src != c.pad_id).sum(dim=1).tolist()]
    if max(limits) + 1 > c.max_len:  # the decoder reads <s> + up to max(limits) tokens
        raise ValueError(f"src {tuple(src.shape)} allows outputs of up to {max(limits)} tokens "
                         f"(its longest sentence + max_extra_len={max_extra_len}); with the start "
                         f"token that exceeds the positional table (config.max_len={c.max_len})")
    return limits
