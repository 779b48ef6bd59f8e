"""Grader of the chapter "The paper in one page": the Elman RNN as a loop over time, checked
against the course's ``aiayn.lab.rnn_vs_attention.ElmanRNN`` and against ``torch.nn.RNN`` with
the same weights, on random sizes with d_in != d_hidden so that a swapped weight cannot hide."""

import torch

from ...lab.rnn_vs_attention import ElmanRNN
from ..calls import lines_run
from ..compare import expect_array, expect_close, expect_shape, raised
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("paper_in_one_page/elman_rnn", "paper_in_one_page/elman_rnn.py",
              "the Elman RNN h_t = tanh(x_t W + h_{t-1} U + b), a loop over time",
              zh="Elman RNN：h_t = tanh(x_t W + h_{t-1} U + b)，一个按时间的循环")

NO_RECURRENCE = Text("your h_t does not depend on h_{t-1}: every step computed tanh(x_t W + b) "
                     "alone. Carry h from one step to the next and add h_{t-1} U inside the tanh",
                     "你的 h_t 不依赖 h_{t-1}：每一步都只算了 tanh(x_t W + b)。要把 h 从一步带到下"
                     "一步，并在 tanh 里面加上 h_{t-1} U")
NO_TANH = Text("your states are not squashed: apply tanh to x_t W + h_{t-1} U + b at every step "
               "(without it the recurrence is linear and its states can grow without bound)",
               "你的状态没有经过压缩：每一步都要对 x_t W + h_{t-1} U + b 取 tanh（没有它，递推就"
               "是线性的，状态可能无限增大）")
H0_IGNORED = Text("the first step must start from h0 when one is given (zeros only when h0 is "
                  "None)", "给了 h0 时，第一步必须从 h0 出发（只有 h0 为 None 时才从零开始）")
STATES = Text("states", "各步的状态")


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


@ex.check("returns all states (B, T, d_hidden), equal to the course's ElmanRNN from h0 = 0",
          zh="返回所有状态 (B, T, d_hidden)，h0 = 0 时与课程的 ElmanRNN 相同")
def _(mod, rng):
    course, x, _ = random_rnn(rng)
    with torch.no_grad():
        got = run(mod, course, x)
        want = course(x)
    expect_array(got, "torch", STATES)
    expect_shape(got, want.shape, STATES, tr(
        "stack h_1 .. h_T on axis 1 (batch first): torch.stack(states, dim=1)",
        "把 h_1 .. h_T 沿第 1 维叠起来（批次在前）：torch.stack(states, dim=1)"))
    expect_close(got, want, STATES, tr("h_t = tanh(x_t W + h_{t-1} U + b), starting from zeros",
                                       "h_t = tanh(x_t W + h_{t-1} U + b)，从零开始"),
                 mistakes(course, x))


@ex.check("starts from a given h0", zh="从给定的 h0 出发")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    with torch.no_grad():
        expect_close(run(mod, course, x, h0), course(x, h0), STATES, tr(
            "the first step uses h0: h_1 = tanh(x_1 W + h0 U + b)",
            "第一步用到 h0：h_1 = tanh(x_1 W + h0 U + b)"), mistakes(course, x, h0))


@ex.check("equals torch.nn.RNN with the same weights (W = W_ih^T, U = W_hh^T, b = b_ih + b_hh)",
          zh="权重相同时与 torch.nn.RNN 一致（W = W_ih^T，U = W_hh^T，b = b_ih + b_hh）")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    d_in, d_hidden = course.w.shape
    rnn = torch.nn.RNN(d_in, d_hidden, batch_first=True).double()
    with torch.no_grad():
        for p in rnn.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
        course.copy_from(rnn)
        want, _ = rnn(x, h0[None])
        expect_close(run(mod, course, x, h0), want, STATES, tr(
            "nn.RNN computes tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh): with W = W_ih^T "
            "and U = W_hh^T, multiply as x_t @ W and h @ U",
            "nn.RNN 计算的是 tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)：取 W = W_ih^T，"
            "U = W_hh^T，按 x_t @ W 和 h @ U 相乘"), mistakes(course, x, h0))


@ex.check("h_t depends on x_1 .. x_t: earlier states ignore later inputs, later ones remember",
          zh="h_t 取决于 x_1 .. x_t：较早的状态不受后面输入的影响，较晚的状态记得前面的输入")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    t0 = int(rng.integers(1, x.shape[1] - 1))
    changed = x.clone()
    changed[:, t0] += 1.0
    with torch.no_grad():
        before, after = run(mod, course, x, h0), run(mod, course, changed, h0)
    expect_close(after[:, :t0], before[:, :t0], tr(f"states before step {t0} unchanged",
                                                   f"第 {t0} 步之前的状态保持不变"),
                 tr("a state may only depend on the inputs up to its own step: no look-ahead",
                    "一个状态只能依赖它这一步及之前的输入：不能偷看后面"))
    moved = (after[:, t0 + 1:] - before[:, t0 + 1:]).abs().amax().item()
    if moved < 1e-9:
        raise CheckFailed(tr(f"the states after step {t0} to change when x_{t0} changes",
                             f"x_{t0} 改变时，第 {t0} 步之后的状态随之改变"),
                          tr(f"largest change {moved:.3g}", f"最大变化 {moved:.3g}"), NO_RECURRENCE)


@ex.check("gradients reach the first input and equal the course's",
          zh="梯度能传到第一个输入，并与课程的实现一致")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    x_mine, x_course = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = run(mod, course, x_mine, h0)
    g = torch.from_numpy(rng.standard_normal(tuple(out.shape)))
    if getattr(out, "requires_grad", False):  # else the graph was cut: no gradient comes back
        (out * g).sum().backward()
    (course(x_course, h0) * g).sum().backward()
    if x_mine.grad is None:
        raise CheckFailed(tr("a gradient for x", "x 有梯度"), "None", tr(
            "keep the computation in PyTorch: no .numpy(), .item() or .detach() inside the loop",
            "整个计算都留在 PyTorch 里：循环中不要用 .numpy()、.item() 或 .detach()"))
    expect_close(x_mine.grad, x_course.grad, tr("gradient of x", "x 的梯度"), tr(
        "the gradients follow from a correct forward pass; look at the forward checks first",
        "前向传播对了，梯度自然就对：先看前向传播的那几项检查"), atol=1e-10)


LOOP = "a loop over t: 6 steps run more lines than 3"
DTYPE = "keeps the dtype of x: float32 in, float32 out"


@ex.check(LOOP, zh="对 t 循环：6 步比 3 步运行的代码行数多")
def _(mod, rng):
    course, x, h0 = random_rnn(rng)
    with torch.no_grad():
        lines = {T: lines_run(run, mod, course, x[:, :T], h0[:, :]) for T in (3, 6)}
    if lines[6] <= lines[3]:
        raise CheckFailed(tr("more lines of your code for 6 steps than for 3",
                             "6 步比 3 步运行的代码行数多"),
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
            raise CheckFailed(tr(f"states of dtype {dtype}", f"dtype 为 {dtype} 的状态"),
                              raised(error), hint) from None
        expect_array(got, "torch", STATES)
        if got.dtype != dtype:
            raise CheckFailed(tr(f"states of dtype {dtype} for x of dtype {dtype}",
                                 f"x 的 dtype 为 {dtype} 时，状态的 dtype 也是 {dtype}"),
                              str(got.dtype), hint)


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
