"""SVG plots with matplotlib (its SVG backend, text kept as text; no display needed). A path ending in
``.png`` gives a PNG instead.

* ``loss.svg``: the loss of each run over the steps (and of the reference), with the
  absolute difference A-B on a log scale below.
* ``layer_error.svg``: error along the network for the first step with a failure (else the
  first step), as in the terminal table: forward tensors
  (inputs, activations in execution order, output, loss) on top, gradients in backward
  order below; log scale. Exact zeros sit on a floor line marked "exact"; tensors out of
  tolerance are red. With raw tensors the error is the max absolute error; for stats-only
  comparisons it is the worst statistic's difference in units of its bound.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

FORWARD = ("input", "activation", "output", "loss")
MAX_TICKS = 60
MAX_WIDTH_IN = 16


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    import matplotlib

    if str(path).endswith(".png"):
        fig.savefig(path, dpi=110)
        return
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mpsready"}):
        fig.savefig(path, format="svg", metadata={"Date": None})


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def plot_loss(comp: Any, path: Path) -> Path:
    plt = _pyplot()
    fig, (ax, axd) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    idx = [s.index for s in comp.steps]
    la = [s.loss_a if _finite(s.loss_a) else float("nan") for s in comp.steps]
    lb = [s.loss_b if _finite(s.loss_b) else float("nan") for s in comp.steps]
    ax.plot(idx, la, "o-", label=f"A: {comp.a.label}", color="tab:blue")
    ax.plot(idx, lb, "s--", label=f"B: {comp.b.label}", color="tab:orange")
    if comp.reference is not None:
        lc = [s.loss_ref if _finite(s.loss_ref) else float("nan") for s in comp.steps]
        ax.plot(idx, lc, "^:", label=f"reference: {comp.reference.label}",
                color="tab:green")
    ax.set_ylabel("loss")
    ax.set_title(f"Loss per step ({comp.basis})")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    diffs = [s.abs_diff for s in comp.steps]
    floor = _floor([d for d in diffs if _finite(d)])
    ys = [max(d, floor) if _finite(d) else float("nan") for d in diffs]
    colors = ["tab:red" if s.passed is False else "tab:gray" for s in comp.steps]
    axd.plot(idx, ys, "-", color="tab:gray", alpha=0.5)
    axd.scatter(idx, ys, c=colors, zorder=3)
    for s, y in zip(comp.steps, ys):
        if s.abs_diff == 0:
            axd.annotate("exact", (s.index, y), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=7)
    if comp.steps:
        tol = comp.steps[0].tolerance
        allow = tol.atol + tol.rtol * abs(comp.steps[0].loss_a or 0.0)
        if allow > 0:
            axd.axhline(allow, color="tab:red", linestyle="--", linewidth=1, label=f"tolerance at step {idx[0]}")
            axd.legend(loc="best", fontsize=8)
    axd.set_yscale("log")
    from matplotlib.ticker import NullFormatter

    axd.yaxis.set_minor_formatter(NullFormatter())
    axd.set_xlabel("step")
    axd.set_ylabel("|loss B - loss A|")
    axd.grid(alpha=0.3, which="major")
    if idx:
        axd.set_xticks(idx)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def _floor(values: list[float]) -> float:
    pos = [v for v in values if v > 0]
    return min(pos) / 10 if pos else 1e-12


def _error(t: Any) -> float | None:
    m = t.metrics
    if m is None:
        return None
    if m.method in ("raw", "checksum"):
        return m.max_abs
    return m.worst_ratio


def _ref_error(t: Any, side: str) -> float | None:
    tw = t.three_way
    m = getattr(tw, side) if tw else None
    if m is None:
        return None
    return m.error


def _panel(ax: Any, tensors: list[Any], title: str, comp: Any) -> None:
    if not tensors:
        ax.text(0.5, 0.5, "no tensors", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        return
    errs = [_error(t) for t in tensors]
    series = {"A vs B": errs}
    if comp.reference is not None:
        series["A vs reference"] = [_ref_error(t, "a_vs_ref") for t in tensors]
        series["B vs reference"] = [_ref_error(t, "b_vs_ref") for t in tensors]
    plotted = [v for vals in series.values() for v in vals if v is not None and _finite(v)]
    floor = _floor(plotted)  # one floor below every plotted value, so exact zeros never hide a real error
    top = max([v for v in plotted if v > 0], default=floor * 10)

    def place(v: float | None) -> float:
        if v is None:
            return float("nan")
        if not _finite(v):
            return top * 10  # NaN/Inf difference: drawn above everything
        return floor if v == 0 else v

    xs = list(range(len(tensors)))
    ax.plot(xs, [place(e) for e in errs], "-", color="tab:gray", linewidth=2.5, alpha=0.45, label="A vs B", zorder=1)
    for x, t, e in zip(xs, tensors, errs):
        if e is None:
            continue
        ax.scatter([x], [place(e)], color="tab:red" if t.failed else "tab:blue", marker="o" if e != 0 else "v",
                   zorder=3, s=30)
    styles = {"A vs reference": ("tab:green", "^", ":"), "B vs reference": ("tab:purple", "x", "--")}
    for label, vals in series.items():
        if label in styles:
            color, mk, ls = styles[label]
            ax.plot(xs, [place(v) for v in vals], marker=mk, linestyle=ls, color=color, alpha=0.85, label=label,
                    markersize=5, zorder=2)
    if any(v == 0 for vals in series.values() for v in vals):
        ax.axhline(floor, color="tab:gray", linestyle=":", linewidth=0.8)
        ax.text(0.0, floor, " exact (0)", va="bottom", fontsize=7, color="tab:gray")
    ax.scatter([], [], color="tab:red", label="A vs B out of tolerance")
    ax.scatter([], [], color="tab:blue", label="A vs B within tolerance")
    ax.set_yscale("log")
    labels = [t.name if t.kind in ("activation", "grad", "param") else t.key for t in tensors]
    every = max(1, math.ceil(len(tensors) / MAX_TICKS))  # big networks: label every n-th tensor
    ax.set_xticks(xs[::every])
    ax.set_xticklabels(labels[::every], rotation=60, ha="right", fontsize=7 if len(xs[::every]) < 40 else 5)
    if every > 1:
        ax.set_xlabel(f"one tensor in {every} labelled; execution order", fontsize=7)
    stats = any(t.metrics is not None and t.metrics.method == "stats" for t in tensors)
    ax.set_ylabel("max abs error" if not stats else "error / tolerance bound (stats only)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="major")
    ax.legend(loc="best", fontsize=7)


def plot_layers(comp: Any, path: Path, step: int | None = None) -> Path:
    plt = _pyplot()
    from mpsready.compare.formats.common import focus_step
    from mpsready.compare.matching import sort_key

    if step is None:
        step = focus_step(comp) or 0

    fwd = sorted([t for t in comp.tensors if t.step == step and t.kind in FORWARD], key=sort_key)
    bwd = sorted([t for t in comp.tensors if t.step == step and t.kind == "grad"], key=sort_key)
    n = max(len(fwd), len(bwd), 1)
    width = min(MAX_WIDTH_IN, max(7, 0.32 * min(n, MAX_TICKS) + 3))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(width, 8))
    _panel(ax1, fwd, f"Forward, step {step}: error along the network (A={comp.a.label}, B={comp.b.label})", comp)
    _panel(ax2, bwd, f"Gradients, step {step}, backward order", comp)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def write_plots(comp: Any, directory: str | Path) -> dict[str, str]:
    """Write ``loss.svg`` and ``layer_error.svg`` into ``directory``; returns name -> path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    if comp.steps:
        out["loss"] = str(plot_loss(comp, d / "loss.svg"))
    if comp.tensors:
        out["layer_error"] = str(plot_layers(comp, d / "layer_error.svg"))
    return out
