"""Greedy decoding that leaves the model in the mode it came in: after training, dropout
changes the tokens.

exercise: fast_decoding/kv_cache
caught by: greedy_decode puts the model in eval mode: no dropout while decoding
message mentions: model.eval()
breaks: greedy_decode: eval
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    pad_id = model.config.pad_id  # the mistake: no model.eval() before decoding
    src_mask = padding_mask(src, pad_id)  # noqa: F821
    cache = start_cache(model, model.encode(src, src_mask))  # noqa: F821
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for step in range(max_len):
        hidden = decode_step(model, ys[:, -1:], step, cache, src_mask)  # noqa: F821
        next_token = torch.where(done, pad_id, model.out_proj(hidden[:, -1]).argmax(dim=-1))
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
