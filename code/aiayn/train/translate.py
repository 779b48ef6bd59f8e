"""Sentences in, translations out: batched decoding of a trained model, and its BLEU.

§6.1: "We used beam search with a beam size of 4 and length penalty alpha = 0.6 ... We set the
maximum output length during inference to input length + 50, but terminate early when
possible." Decoding uses ``aiayn.inference.beam_search``; ``beam_size=1`` is greedy decoding (the
same outputs as ``aiayn.pt.decoding.greedy_decode``, except that PAD and BOS are never
generated), and faster here: finished sentences leave the batch instead of waiting for the
slowest one.
"""

import torch
from tqdm import tqdm

from ..data.batching import pad, source_ids
from ..data.specials import BOS_ID, EOS_ID
from ..inference.beam_search import beam_search
from ..inference.bleu import corpus_bleu
from ..pt.attention import MultiHeadAttention

MAX_EXTRA_LEN = 50  # output length limit: input length + 50 (§6.1)


def decode_ids(model, src: torch.Tensor, beam_size: int = 4, alpha: float = 0.6,
               use_cache: bool | None = None) -> list[list[int]]:
    """(B, S) padded source ids -> the output ids of each sentence, without BOS and EOS.
    With a key-value cache unless ``use_cache=False`` (see ``beam_search``)."""
    return beam_search(model, src, beam_size, alpha, MAX_EXTRA_LEN, BOS_ID, EOS_ID, use_cache)


@torch.no_grad()
def translate(model, tokenizer, sentences: list[str], beam_size: int = 4, alpha: float = 0.6,
              batch_size: int = 100, progress: bool = False, progress_file=None,
              use_cache: bool | None = None) -> list[str]:
    """Translates ``sentences`` (one string each) in batches of similar length; returns the
    detokenised translations in the input order. Runs on the model's device; on CUDA under
    bf16 autocast with fused attention, as in training."""
    if isinstance(sentences, str):
        raise ValueError("sentences must be a list of strings, got one str")
    device = next(model.parameters()).device
    if device.type == "cuda":
        for module in model.modules():
            if isinstance(module, MultiHeadAttention):
                module.fused = True
    encoded = [source_ids(ids) for ids in tokenizer.encode_batch(list(sentences))]
    # Longest first: similar lengths share a batch (little padding), and the first batch
    # shows the worst-case memory use at once instead of at the end.
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
    outputs: list[str | None] = [None] * len(encoded)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="translate", unit="batch", disable=not progress,
                      file=progress_file):
        chunk = order[start:start + batch_size]
        src = pad([encoded[i] for i in chunk]).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            ids = decode_ids(model, src, beam_size, alpha, use_cache)
        for i, row in zip(chunk, ids):
            outputs[i] = tokenizer.decode(row)
    return outputs


def bleu_report(hypotheses: list[str], references: list[str]) -> dict:
    """sacreBLEU corpus BLEU, cased (13a tokenisation, the standard) and lowercased."""
    cased, lower = corpus_bleu(hypotheses, references), corpus_bleu(hypotheses, references, lowercase=True)
    return {"bleu": cased.score, "signature": cased.signature,
            "bleu_lowercase": lower.score, "signature_lowercase": lower.signature}
