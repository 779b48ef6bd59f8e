"""Grader of the chapter "The paper in one page": the Elman RNN as a loop over time, checked
against the course's ``aiayn.lab.rnn_vs_attention.ElmanRNN`` and against ``torch.nn.RNN`` with
the same weights, on random sizes with d_in != d_hidden so that a swapped weight cannot hide."""

import torch

from ...lab.rnn_vs_attention import ElmanRNN
from ..calls import lines_run
from ..compare import expect_array, expect_close, expect_shape, raised
from ..core import CheckFailed, exercise, need
from ..language import tr

ex = exercise("paper_in_one_page/elman_rnn", "paper_in_one_page/elman_rnn.py",
              "the Elman RNN h_t = tanh(x_t W + h_{t-1} U + b), a loop over time")

NO_RECURRENCE = ("your h_t does not depend on h_{t-1}: every step computed tanh(x_t W + b) "
                 "alone. Carry h from one step to the next and add h_{t-1} U inside the tanh")
NO_TANH = ("your states are not squashed: apply tanh to x_t W + h_{t-1} U + b at every step "
           "(without it the recurrence is linear and its states can grow without bound)")
H0_IGNORED = ("the first step must start from h0 when one is given (zeros only when h0 is None)")


def random_rnn(rng):
    """float64 inputs and a course ElmanRNN with random weights (and a nonzero bias)."""
    B, T = int(rng.integers(2, 4)), int(rng.integers(4, 8))
    d_in = int(rng.integers(3, 7))
    d_hidden = d_in + int(rng.integers(1, 4))
    course = ElmanRNN(d_in, d_hidden).double()
    with torch.no_grad():
        for p in course.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
    x = torch.from_numpy(rng.standard_normal((B, T, d_in)))
    h0 = torch.from_numpy(rng.standard_normal((B, d_hidden)) * 0.5)
    return course, x, h0


def run(mod, course, x, h0=None):
    w, u, b = (p.detach().clone() for p in (course.w, course.cell.u, course.b))
    return need(mod, "elman_rnn")(x, w, u, b, h0)


def mistakes(course, x, h0=None):
    """What the classic slips return on these inputs."""
    w, u, b = (p.detach() for p in (course.w, course.cell.u, course.b))
    h = x.new_zeros(x.shape[0], w.shape[1]) if h0 is None else h0
    linear, zeros_start = [], []
    h_lin, h_zero = h, x.new_zeros(x.shape[0], w.shape[1])
    for t in range(x.shape[1]):
        h_lin = x[:, t] @ w + h_lin @ u + b
        h_zero = torch.tanh(x[:, t] @ w + h_zero @ u + b)
        linear.append(h_lin)
        zeros_start.append(h_zero)
    found = [(torch.tanh(x @ w + b), NO_RECURRENCE), (torch.stack(linear, 1), NO_TANH)]
    if h0 is not None:
        found.append((torch.stack(zeros_start, 1), H0_IGNORED))
    return found


@ex.check("returns all states (B, T, d_hidden), equal to the course's ElmanRNN from h0 = 0")
def _(mod, rng):
    course, x, _ = random_rnn(rng)
    with torch.no_grad():
        got = run(mod, course, x)
        want = course(x)
    expect_array(got, "torch", "states")
    expect_shape(got, want.shape, "states", "stack h_1 .. h_T on axis 1 (batch first): "
                 "torch.stack(states, dim=1)")
    expect_close(got, want, "states", "h_t = tanh(x_t W + h_{t-1} U + b), starting from zeros",
                 mistakes(course, x))


@ex.check("starts from a given h0")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    with torch.no_grad():
        expect_close(run(mod, course, x, h0), course(x, h0), "states",
                     "the first step uses h0: h_1 = tanh(x_1 W + h0 U + b)",
                     mistakes(course, x, h0))


@ex.check("equals torch.nn.RNN with the same weights (W = W_ih^T, U = W_hh^T, b = b_ih + b_hh)")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    d_in, d_hidden = course.w.shape
    rnn = torch.nn.RNN(d_in, d_hidden, batch_first=True).double()
    with torch.no_grad():
        for p in rnn.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
        course.copy_from(rnn)
        want, _ = rnn(x, h0[None])
        expect_close(run(mod, course, x, h0), want, "states",
                     "nn.RNN computes tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh): with "
                     "W = W_ih^T and U = W_hh^T, multiply as x_t @ W and h @ U",
                     mistakes(course, x, h0))


@ex.check("h_t depends on x_1 .. x_t: earlier states ignore later inputs, later ones remember")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    t0 = int(rng.integers(1, x.shape[1] - 1))
    changed = x.clone()
    changed[:, t0] += 1.0
    with torch.no_grad():
        before, after = run(mod, course, x, h0), run(mod, course, changed, h0)
    expect_close(after[:, :t0], before[:, :t0], f"states before step {t0} unchanged",
                 "a state may only depend on the inputs up to its own step: no look-ahead")
    moved = (after[:, t0 + 1:] - before[:, t0 + 1:]).abs().amax().item()
    if moved < 1e-9:
        raise CheckFailed(f"the states after step {t0} to change when x_{t0} changes",
                          f"largest change {moved:.3g}", NO_RECURRENCE)


@ex.check("gradients reach the first input and equal the course's")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    x_mine, x_course = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = run(mod, course, x_mine, h0)
    g = torch.from_numpy(rng.standard_normal(tuple(out.shape)))
    if getattr(out, "requires_grad", False):  # else the graph was cut: no gradient comes back
        (out * g).sum().backward()
    (course(x_course, h0) * g).sum().backward()
    if x_mine.grad is None:
        raise CheckFailed("a gradient for x", "None", "keep the computation in PyTorch: no "
                          ".numpy(), .item() or .detach() inside the loop")
    expect_close(x_mine.grad, x_course.grad, "gradient of x", "the gradients follow from a "
                 "correct forward pass; look at the forward checks first", atol=1e-10)


LOOP = "a loop over t: 6 steps run more lines than 3"
DTYPE = "keeps the dtype of x: float32 in, float32 out"


@ex.check(LOOP, zh="按 t 循环：6 步比 3 步运行更多行代码")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    with torch.no_grad():
        lines = {T: lines_run(run, mod, course, x[:, :T], h0[:, :]) for T in (3, 6)}
    if lines[6] <= lines[3]:
        raise CheckFailed(tr("more lines of your code for 6 steps than for 3",
                             "6 步比 3 步运行更多行代码"),
                          tr(f"{lines[3]} lines for 3 steps, {lines[6]} for 6",
                             f"3 步运行 {lines[3]} 行，6 步运行 {lines[6]} 行"),
                          tr("step t needs h_{t-1}: write the recurrence as a loop, for t in "
                             "range(T): h = torch.tanh(x[:, t] @ w + h @ u + b). A library RNN "
                             "(torch.nn.RNN, the course's ElmanRNN) hides the loop this chapter "
                             "is about",
                             "第 t 步需要 h_{t-1}：把递推写成循环，for t in range(T): h = "
                             "torch.tanh(x[:, t] @ w + h @ u + b)。库里的 RNN（torch.nn.RNN、"
                             "课程的 ElmanRNN）把本章要讲的循环藏起来了"))


@ex.check(DTYPE, zh="保持 x 的 dtype：输入 float32，输出 float32")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    hint = tr("stay in the dtype of x: make the first state with x.new_zeros(B, d_hidden) (not "
              "torch.zeros, which is float32, nor .double(), which is float64)",
              "保持 x 的 dtype：用 x.new_zeros(B, d_hidden) 生成初始状态（不要用默认 float32 的 "
              "torch.zeros，也不要用转成 float64 的 .double()）")
    for dtype in (torch.float32, torch.float64):
        w, u, b = (p.detach().to(dtype) for p in (course.w, course.cell.u, course.b))
        try:
            with torch.no_grad():
                got = need(mod, "elman_rnn")(x.to(dtype), w, u, b, None)
        except RuntimeError as error:  # mixed dtypes in a matmul
            if isinstance(error, NotImplementedError):  # the stub: a TODO, not a failure
                raise
            raise CheckFailed(f"states of dtype {dtype}", raised(error), hint) from None
        expect_array(got, "torch", "states")
        if got.dtype != dtype:
            raise CheckFailed(f"states of dtype {dtype} for x of dtype {dtype}", str(got.dtype),
                              hint)


ex.keeps({
    "elman_rnn: states": ("returns all states (B, T, d_hidden), equal to the course's ElmanRNN "
                          "from h0 = 0", "equals torch.nn.RNN with the same weights (W = W_ih^T, "
                          "U = W_hh^T, b = b_ih + b_hh)", "h_t depends on x_1 .. x_t: earlier "
                          "states ignore later inputs, later ones remember"),
    "elman_rnn: h0": "starts from a given h0",
    "elman_rnn: loop": LOOP,
    "elman_rnn: dtype": DTYPE,
    "elman_rnn: pytorch": "gradients reach the first input and equal the course's",
})
