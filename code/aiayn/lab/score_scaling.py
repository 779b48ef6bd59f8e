"""Why divide by sqrt(d_k) (§3.2.1): the softmax's saturation and the gradients it passes back.

The paper: "We suspect that for large values of d_k, the dot products grow large in magnitude,
pushing the softmax function into regions where it has extremely small gradients." This module
measures that suspicion where it matters for learning. In the model, q = x W^Q and k = x W^K,
so the gradients that reach the weights are those with respect to q and k, not the gradient at
the softmax input z = q.k / c. The two differ by the factor dz/dq = k / c: without scaling
(c = 1) that factor has norm about sqrt(d_k) and partly makes up for a small dL/dz.

The set-up follows the paper's footnote 4: the components of q and k are independent, with
mean 0 and variance 1. Each of ``n_rows`` queries meets ``n_keys`` keys; the loss is
sum_j w_j v_j with one random number v_j per key (a random read-out of the values), summed
over the rows. Everything is float64 and seeded, so a result depends only on its arguments.
"""

import math

import torch

from .._checks import check_positive

# A row of weights counts as saturated when its largest weight exceeds this: the softmax then
# passes back at most about 2 * (1 - 0.99) of the gradient a uniform row would.
SATURATED = 0.99

STATISTICS = (
    "max_weight",     # largest weight of a row, mean over rows (1 / n_keys: uniform; 1: one-hot)
    "entropy",        # entropy of a row in nats, mean over rows (log n_keys: uniform; 0: one-hot)
    "saturated",      # fraction of rows whose largest weight exceeds SATURATED
    "grad_z_median",  # median over rows of |dL/dz|, z the softmax input
    "grad_q_median",  # median over rows of |dL/dq|
    "grad_k_median",  # median over rows of |dL/dK|, all keys of the row together
    "grad_q_mean",    # mean over rows of |dL/dq|
    "grad_q_p10",     # 10th percentile over rows of |dL/dq|
    "grad_q_p90",     # 90th percentile over rows of |dL/dq|
)


def score_gradients(d_k: int, scaled: bool, seed: int, n_rows: int = 1000,
                    n_keys: int = 10) -> dict[str, float]:
    """One draw of ``n_rows`` queries, each against ``n_keys`` keys of width ``d_k``; scores
    q.k / sqrt(d_k) if ``scaled`` else q.k. Returns ``{statistic: value}`` for every name in
    ``STATISTICS``. The same ``seed`` draws the same q, k and v whether ``scaled`` or not, so
    the two settings are compared on identical inputs."""
    q, k, v = _draw(d_k, seed, n_rows, n_keys)
    return _measure(q, k, v, math.sqrt(d_k) if scaled else 1.0)


def _draw(d_k: int, seed: int, n_rows: int, n_keys: int):
    for name, value in (("d_k", d_k), ("n_rows", n_rows), ("n_keys", n_keys)):
        check_positive(name, value)
    if n_keys < 2:
        raise ValueError(f"n_keys={n_keys}: a softmax over fewer than 2 keys is always 1")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(n_rows, 1, d_k, generator=generator, dtype=torch.float64)
    k = torch.randn(n_rows, n_keys, d_k, generator=generator, dtype=torch.float64)
    v = torch.randn(n_rows, n_keys, 1, generator=generator, dtype=torch.float64)
    return q, k, v


def _measure(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> dict[str, float]:
    q, k = q.detach().requires_grad_(), k.detach().requires_grad_()
    z = q @ k.transpose(-1, -2) / scale  # (n_rows, 1, n_keys): the softmax input
    z.retain_grad()
    w = torch.softmax(z, dim=-1)
    (w @ v).sum().backward()
    w = w.detach()[:, 0]  # (n_rows, n_keys)
    largest = w.max(dim=-1).values
    entropy = -(w * w.clamp_min(1e-300).log()).sum(dim=-1)
    grad_q = q.grad.norm(dim=(-2, -1))  # (n_rows,)
    quantiles = grad_q.quantile(torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64))
    return {
        "max_weight": float(largest.mean()),
        "entropy": float(entropy.mean()),
        "saturated": float((largest > SATURATED).double().mean()),
        "grad_z_median": float(z.grad.norm(dim=(-2, -1)).median()),
        "grad_q_median": float(quantiles[1]),
        "grad_k_median": float(k.grad.norm(dim=(-2, -1)).median()),
        "grad_q_mean": float(grad_q.mean()),
        "grad_q_p10": float(quantiles[0]),
        "grad_q_p90": float(quantiles[2]),
    }


def sweep(d_ks, seeds, n_rows: int = 1000, n_keys: int = 10) -> dict:
    """``{(scaled, d_k): {statistic: [value per seed]}}`` for ``scaled`` in (False, True)."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    results = {(scaled, d_k): {name: [] for name in STATISTICS}
               for scaled in (False, True) for d_k in d_ks}
    for d_k in d_ks:
        for seed in seeds:
            q, k, v = _draw(d_k, seed, n_rows, n_keys)  # one draw for both settings
            for scaled in (False, True):
                run = _measure(q, k, v, math.sqrt(d_k) if scaled else 1.0)
                for name in STATISTICS:
                    results[scaled, d_k][name].append(run[name])
    return results


def spread(values) -> tuple[float, float, float]:
    """(mean, min, max) of a statistic over seeds. The sum is math.fsum's, correctly rounded:
    the built-in sum() rounds differently from Python 3.12 on (it compensates), which would
    move the last digit of what the chapter prints and asserts."""
    values = list(values)
    return math.fsum(values) / len(values), min(values), max(values)


def plot_saturation(results: dict, d_ks, n_keys: int = 10):
    """Two panels from ``sweep``'s result: the mean largest weight of a row, and the share of
    saturated rows, against d_k, with and without the scaling (means over the seeds). Labels in
    the page's language (``tr``). Returns the figure."""
    import matplotlib.pyplot as plt

    from ..plotting import tr

    labels = {False: tr("q·k, not scaled", "q·k，不缩放"), True: tr("q·k / √dₖ", "q·k / √dₖ")}
    titles = {"max_weight": tr("Largest weight of a row (mean)", "每行的最大权重（均值）"),
              "saturated": tr(f"Share of saturated rows (largest weight > {SATURATED})",
                              f"饱和行的比例（最大权重 > {SATURATED}）")}
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    for ax, name in zip(axes, titles):
        for scaled, style in ((False, "o-"), (True, "s-")):
            ax.plot(d_ks, [spread(results[scaled, d][name])[0] for d in d_ks], style, label=labels[scaled])
        ax.set_xscale("log")
        ax.set_xticks(d_ks, labels=[str(d) for d in d_ks])
        ax.minorticks_off()
        ax.set_xlabel("dₖ")
        ax.set_title(titles[name], fontsize=10)
    axes[0].axhline(1 / n_keys, color="k", ls=":", label=tr(f"uniform over {n_keys} keys", f"{n_keys} 个键上均匀分布"))
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
