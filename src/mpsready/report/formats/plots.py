"""Plots for the report, as SVG (matplotlib's SVG backend; text kept as text, so it stays sharp and readable
when a phone scales the figure down).

Each plot function returns ``(svg_bytes, caption)``, or ``None`` when there is nothing to draw. Figures are
drawn 5.2 in (375 CSS px) wide with 9-10 pt text, so at 390 px they are shown about at their own size; the
caption is one sentence saying what the plot shows and, for predicted data, that it is predicted.

* ``layer_errors``: the comparison's own per-layer plot (``compare --plots``, ``layer_error.svg``) when the
  compare stage wrote it, else the same view drawn from the comparison's rows: the error of every forward
  tensor along the network and of every gradient in backward order, red where out of tolerance;
* ``loss_curves``: the loss of every run per step, side by side (every run record, else the two sides of the
  comparison);
* ``step_times``: every measured step's time per device with its median (observed, from run records);
* ``fallback_share``: the share of step time each operator spends on the CPU through the MPS fallback
  (predicted, from the trace), or, from an MPS run record, the calls that fell back per operator (observed);
* ``findings_by_kind``: findings per kind and severity.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

from mpsready.report.build import Report

SEVERITY_COLORS = {"blocker": "#c0392b", "degrades": "#e67e22", "info": "#7f8c8d"}
WIDTH_IN = 5.2
FORWARD_KINDS = ("input", "activation", "output", "loss")
PHASE = {"input": 0, "activation": 1, "output": 2, "loss": 3, "grad": 4, "param": 5}  # compare's execution order
MAX_LABELS = 24

Plot = tuple[bytes, str]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _svg(fig) -> bytes:
    """The figure as SVG with text as ``<text>`` (``svg.fonttype = none``), no timestamp (reproducible)."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mpsready"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    return buf.getvalue()


def _style(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=9)


def findings_by_kind(report: Report) -> Plot | None:
    """Horizontal stacked bars: findings per kind, split by severity."""
    counts = report.findings_by_kind()
    if not counts:
        return None
    plt = _pyplot()
    kinds = list(counts)[::-1]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.42 * len(kinds) + 1.2))
    left = [0] * len(kinds)
    for sev in ("blocker", "degrades", "info"):
        vals = [counts[k].get(sev, 0) for k in kinds]
        ax.barh(kinds, vals, left=left, color=SEVERITY_COLORS[sev], label=sev)
        for i, (start, v) in enumerate(zip(left, vals)):
            if v:
                ax.text(start + v / 2, i, str(v), ha="center", va="center", color="white", fontsize=9)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_xlabel("findings", fontsize=10)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=9, frameon=False)
    _style(ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    total = sum(sum(c.values()) for c in counts.values())
    bases = {f.basis.value for f in report.all_findings()}
    what = "predicted" if bases == {"predicted"} else ("observed" if bases == {"observed"} else "predicted and observed")
    return _svg(fig), f"The {total} findings ({what}) by kind and severity."


def _run_name(r: Any) -> str:
    label = r.raw.get("label") if isinstance(r.raw.get("label"), str) else None
    if label:
        return f"{label} ({r.device})"
    return r.device if Path(r.source).name == r.device else f"{r.device} ({Path(r.source).name})"


def loss_curves(report: Report) -> Plot | None:
    """Loss per step of every run side by side: every run record, else both sides of the comparison."""
    series = [(_run_name(r), r.losses) for r in report.evidence.records if r.losses]
    c = report.evidence.compare
    if not series and c is not None and c.losses_a and c.losses_b:
        series = [(f"A: {c.label_a or c.device_a or '?'}", c.losses_a),
                  (f"B: {c.label_b or c.device_b or '?'}", c.losses_b)]
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.0))
    styles = ["-", "--", ":", "-."]
    for i, (name, ys) in enumerate(series):
        ax.plot(range(len(ys)), ys, marker="o", markersize=3, linestyle=styles[i % 4], label=name)
    ax.set_xlabel("step", fontsize=10)
    ax.set_ylabel("loss", fontsize=10)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=9, frameon=False)
    _style(ax)
    runs = "the run" if len(series) == 1 else f"{len(series)} runs, side by side"
    return _svg(fig), f"The loss at each step of {runs} (observed)."


def step_times(report: Report) -> Plot | None:
    """Each measured step's time per device (dots) with the median (a bar), from the run records."""
    rows = []
    for r in report.evidence.records:
        t = r.step_timing()
        measured = [s for s in getattr(t, "measured", []) if isinstance(s, (int, float)) and s > 0]
        if measured:
            rows.append((_run_name(r), measured, t.median_seconds))
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.55 * len(rows) + 1.3))
    for i, (_name, times, med) in enumerate(rows):
        ax.scatter([x * 1000 for x in times], [i] * len(times), s=14, color="#2e86c1", alpha=0.7, zorder=3)
        if med:
            ax.plot([med * 1000] * 2, [i - 0.3, i + 0.3], color="#1b2631", linewidth=2, zorder=4)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.invert_yaxis()
    every = [x for _, times, _ in rows for x in times]
    if max(every) / min(every) > 20:  # CPU and GPU steps side by side: orders of magnitude apart
        ax.set_xscale("log")
    else:
        ax.set_xlim(left=0)
    ax.set_xlabel("ms per step (dots: each measured step; bar: median)", fontsize=9)
    _style(ax)
    return _svg(fig), ("Time per step on each device, every measured step and the median, step 0 left out as "
                       "warm-up (observed).")


def fallback_share(report: Report) -> Plot | None:
    """Per operator: the predicted share of step time on the CPU (trace findings' ``time_share``), else the
    observed CPU-fallback calls of an MPS run record."""
    shares: dict[str, float] = {}
    t = report.evidence.trace
    if t is not None:
        for f in t.findings:
            ev = f.evidence or {}
            op, share = ev.get("op"), ev.get("time_share")
            if isinstance(op, str) and isinstance(share, (int, float)) and share > 0 \
                    and any(o.op == op and o.status == "fallback" for o in t.ops):
                shares[op] = max(shares.get(op, 0.0), float(share))
    plt = _pyplot()
    if shares:
        ops = sorted(shares, key=lambda o: -shares[o])[:12][::-1]
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.4 * len(ops) + 1.2))
        ax.barh(ops, [100 * shares[o] for o in ops], color="#b9770e")
        ax.set_xlabel("% of step time on the CPU (predicted)", fontsize=9)
        _style(ax)
        total = t.fallback_time_share if t is not None and t.fallback_time_share is not None else sum(shares.values())
        return _svg(fig), (f"Predicted share of step time each operator would spend on the CPU through the MPS "
                           f"fallback (about {100 * total:.0f}% in all), from the trace.")
    if t is not None and any(o.status == "fallback" for o in t.ops):
        # the trace names its fallback operators but not each one's time: their calls, and the total share
        pred: dict[str, int] = {}
        for o in t.ops:
            if o.status == "fallback":
                pred[o.op] = pred.get(o.op, 0) + (o.calls or 1)
        ops = sorted(pred, key=lambda o: -pred[o])[:12][::-1]
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.4 * len(ops) + 1.2))
        ax.barh(ops, [pred[o] for o in ops], color="#b9770e")
        ax.set_xlabel("calls per step that would fall back to the CPU (predicted)", fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
        _style(ax)
        share_text = (f", about {100 * t.fallback_time_share:.0f}% of step time in all"
                      if t.fallback_time_share is not None else "")
        return _svg(fig), (f"Predicted calls per operator that would run on the CPU through the MPS fallback"
                           f"{share_text}, from the trace.")
    calls: dict[str, int] = {}
    for r in report.evidence.records:
        if r.device.split(":")[0] == "mps":
            calls.update({op: n for op, n in r.fallback_ops.items() if n})
    if not calls:
        return None
    ops = sorted(calls, key=lambda o: -calls[o])[:12][::-1]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.4 * len(ops) + 1.2))
    ax.barh(ops, [calls[o] for o in ops], color="#b9770e")
    ax.set_xlabel("calls that fell back to the CPU per step run (observed)", fontsize=9)
    _style(ax)
    return _svg(fig), "Calls per operator that ran on the CPU through the MPS fallback in the MPS run (observed)."


def _focus_rows(rows: list[Any]) -> tuple[int | None, list[Any]]:
    """The rows of the first step with a failure (else the first step), as compare's own plot draws them."""
    steps = sorted({r.step for r in rows if r.step is not None})
    failing = sorted({r.step for r in rows if r.ok is False and r.step is not None})
    step = failing[0] if failing else (steps[0] if steps else None)
    return step, [r for r in rows if r.step == step] if step is not None else rows


def layer_errors(report: Report) -> Plot | None:
    """The comparison's per-layer view from its rows: max abs error of each forward tensor in network order
    (top) and of each gradient in backward order (bottom), log scale, red where out of tolerance."""
    c = report.evidence.compare
    if c is None:
        return None
    step, rows = _focus_rows([r for r in c.rows if r.max_abs is not None])
    if not rows:
        return None
    fwd = sorted([r for r in rows if (r.kind or "activation") in FORWARD_KINDS],
                 key=lambda r: (PHASE.get(r.kind or "", 9), r.order or 0))
    bwd = sorted([r for r in rows if r.kind == "grad"], key=lambda r: r.order or 0)
    panels = [(p, t) for p, t in ((fwd, "forward, network order"), (bwd, "gradients, backward order")) if p]
    plt = _pyplot()
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, 2.9 * len(panels)), squeeze=False)
    for ax, (part, title) in zip(axes[:, 0], panels):
        vals = [r.max_abs for r in part]
        pos = [v for v in vals if v and math.isfinite(v)]
        floor = min(pos) / 10 if pos else 1e-12
        ys = [floor if not v else (max(pos) * 10 if not math.isfinite(v) else v) for v in vals]
        xs = list(range(len(part)))
        ax.plot(xs, ys, color="#95a5a6", linewidth=1.5, zorder=1)
        ax.scatter(xs, ys, s=16, zorder=3, color=["#c0392b" if r.ok is False else "#2e86c1" for r in part])
        ax.set_yscale("log")
        every = max(1, math.ceil(len(part) / MAX_LABELS))
        ax.set_xticks(xs[::every])
        ax.set_xticklabels([r.name.split(":", 1)[-1][:26] for r in part][::every], rotation=70, ha="right",
                           fontsize=7)
        ax.set_ylabel("max abs error", fontsize=9)
        ax.set_title(title + (f" (one in {every} labelled)" if every > 1 else ""), fontsize=10)
        _style(ax)
    fig.tight_layout()
    first = next((r.name for r in fwd + bwd if r.ok is False), None)
    jump = f"; the first out of tolerance is {first}" if first else "; every tensor is within tolerance"
    basis = c.raw.get("basis") if c.raw.get("basis") in ("observed", "predicted") else "observed"
    return _svg(fig), (f"Max absolute error of each tensor along the network, {c.devices()}, step {step}, red where "
                       f"out of tolerance{jump} ({basis}).")


def stage_plot(path: str | None) -> bytes | None:
    """A plot written by another stage (the compare stage's SVG or PNG), if it exists and is one."""
    if not path:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    head = data[:400].lstrip()
    return data if (head.startswith(b"<?xml") or head.startswith(b"<svg")) and b"<svg" in data[:2000] else None


def mime(data: bytes) -> str:
    return "image/png" if data.startswith(b"\x89PNG") else "image/svg+xml"


def extension(data: bytes) -> str:
    return "png" if data.startswith(b"\x89PNG") else "svg"


def all_plots_with_captions(report: Report) -> dict[str, Plot]:
    """name -> (image bytes, caption) for every plot there is data for, in display order."""
    out: dict[str, Plot] = {}
    c = report.evidence.compare
    own = stage_plot(c.plots.get("layer_error") or c.plots.get("layer_errors")) if c else None
    made: dict[str, Plot | None] = {
        "layer_errors": ((own, f"The comparison's own per-layer plot ({c.devices()}): the error of each tensor "
                               "along the network, forward then backward, red where out of tolerance (observed).")
                         if own and c else layer_errors(report)),
        "loss_curves": loss_curves(report),
        "step_times": step_times(report),
        "fallback_share": fallback_share(report),
        "findings_by_kind": findings_by_kind(report),
    }
    for name, plot in made.items():
        if plot:
            out[name] = plot
    return out


def all_plots(report: Report) -> dict[str, bytes]:
    """name -> image bytes (SVG; a stage's PNG as it is) for every plot there is data for, in display order."""
    return {k: v[0] for k, v in all_plots_with_captions(report).items()}


TITLES = {"findings_by_kind": "Findings by kind", "loss_curves": "Loss curves", "layer_errors": "Per-layer error",
          "step_times": "Time per step", "fallback_share": "CPU-fallback share per operator"}
