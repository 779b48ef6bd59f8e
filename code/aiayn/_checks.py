"""Input checks shared by the NumPy and PyTorch implementations.

They look only at ``.shape``, ``.ndim`` and a dtype flag, so one function serves both
back ends and both raise the same ``ValueError`` text for the same mistake. Every message
names the argument and the shapes involved: a reader should never have to decode a
broadcasting error three calls deeper.
"""


def shape_of(x) -> str:
    return str(tuple(int(s) for s in x.shape))


def check_rank(name: str, x, rank: int, layout: str) -> None:
    if x.ndim != rank:
        raise ValueError(f"{name} must be {rank}-D {layout}, got shape {shape_of(x)}")


def check_size(name: str, x, axis: int, expected: int, what: str) -> None:
    if x.shape[axis] != expected:
        raise ValueError(
            f"{name} has {what} {x.shape[axis]} (shape {shape_of(x)}), expected {expected}"
        )


def check_same(name_a: str, a, axis_a: int, name_b: str, b, axis_b: int, what: str) -> None:
    if a.shape[axis_a] != b.shape[axis_b]:
        raise ValueError(
            f"{name_a} {shape_of(a)} and {name_b} {shape_of(b)} disagree on {what}: "
            f"{a.shape[axis_a]} vs {b.shape[axis_b]}"
        )


def check_mask(mask, is_bool: bool, target: tuple, name: str = "mask") -> None:
    """The course's one mask convention: boolean, 4-D, each axis equal to the target's or 1."""
    layout = "(B|1, H|1, T_q|1, T_k)"
    if not is_bool:
        raise ValueError(
            f"{name} must be boolean (True = may attend), got dtype {mask.dtype} "
            f"with shape {shape_of(mask)}"
        )
    if mask.ndim != 4:
        raise ValueError(f"{name} must be 4-D {layout}, got shape {shape_of(mask)}")
    ok = all(m in (1, t) for m, t in zip(mask.shape, target)) and mask.shape[3] == target[3]
    if not ok:
        want = "(" + ", ".join(map(str, target)) + ")"
        raise ValueError(
            f"{name} of shape {shape_of(mask)} does not broadcast to the attention scores "
            f"{want}; expected {layout}"
        )


def check_positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_dropout(p) -> None:
    if not 0.0 <= float(p) < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {p!r}")


def check_heads(d_model: int, num_heads: int) -> None:
    check_positive("d_model", d_model)
    check_positive("num_heads", num_heads)
    if d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: "
            "each head needs d_k = d_model / num_heads features"
        )


def head_sizes(d_model: int, num_heads: int, d_k=None, d_v=None) -> tuple[int, int]:
    """(d_k, d_v) of each head: the paper's d_model / h unless given (Table 3, row B varies d_k)."""
    if d_k is None or d_v is None:
        check_heads(d_model, num_heads)
    else:
        check_positive("d_model", d_model)
        check_positive("num_heads", num_heads)
    d_k = d_model // num_heads if d_k is None else d_k
    d_v = d_model // num_heads if d_v is None else d_v
    check_positive("d_k", d_k)
    check_positive("d_v", d_v)
    return d_k, d_v


def check_tokens(name: str, tokens, is_integer: bool, lo: int, hi: int, vocab_size: int) -> None:
    """``lo``/``hi`` are the smallest and largest id present (computed by the caller's back end)."""
    if not is_integer:
        raise ValueError(f"{name} must hold integer token ids, got dtype {tokens.dtype} "
                         f"with shape {shape_of(tokens)}")
    check_rank(name, tokens, 2, "(B, T) token ids")
    if tokens.shape[1] == 0:
        raise ValueError(f"{name} has an empty time axis: shape {shape_of(tokens)}")
    if lo < 0 or hi >= vocab_size:
        raise ValueError(f"{name} {shape_of(tokens)} holds ids in [{lo}, {hi}], outside the "
                         f"vocabulary [0, {vocab_size - 1}]")


def check_qkv(q, k, v) -> tuple:
    """Checks the per-head inputs of attention; returns the scores' shape (B, H, T_q, T_k)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_rank(name, x, 4, "(B, H, T, d)")
    check_same("q", q, -1, "k", k, -1, "the feature size d_k")
    check_same("k", k, 2, "v", v, 2, "the number of keys T_k")
    for axis, what in ((0, "the batch size B"), (1, "the number of heads H")):
        check_same("q", q, axis, "k", k, axis, what)
        check_same("k", k, axis, "v", v, axis, what)
    return (q.shape[0], q.shape[1], q.shape[2], k.shape[2])


def check_mha_inputs(query, key, value, d_model: int) -> None:
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_rank(name, x, 3, "(B, T, d_model)")
        check_size(name, x, -1, d_model, "feature size")
    check_same("query", query, 0, "key", key, 0, "the batch size B")
    check_same("key", key, 0, "value", value, 0, "the batch size B")
    check_same("key", key, 1, "value", value, 1, "the number of keys T_k")


def check_special_ids(config, bos_id: int, eos_id: int) -> None:
    """Start and end tokens are ids of the target vocabulary (greedy and beam search)."""
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if not 0 <= value < config.tgt_vocab_size:
            raise ValueError(f"{name}={value} is outside the target vocabulary "
                             f"[0, {config.tgt_vocab_size - 1}]")


def check_decode_args(model, src, max_len: int, bos_id: int, eos_id: int) -> None:
    c = model.config
    check_rank("src", src, 2, "(B, T_src) token ids")
    check_positive("max_len", max_len)
    if max_len + 1 > c.max_len:
        raise ValueError(f"max_len={max_len} plus the start token exceeds the positional "
                         f"table (config.max_len={c.max_len})")
    check_special_ids(c, bos_id, eos_id)
    if bos_id == c.pad_id:
        raise ValueError(f"bos_id={bos_id} equals pad_id: the start token would be masked out")
