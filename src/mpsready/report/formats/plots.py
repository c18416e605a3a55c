"""PNG plots for the HTML report, drawn with matplotlib's Agg backend (no display needed).

Each function returns PNG bytes, or ``None`` when there is nothing to draw.
"""

from __future__ import annotations

import io
from pathlib import Path

from mpsready.report.build import Report

SEVERITY_COLORS = {"blocker": "#c0392b", "degrades": "#e67e22", "info": "#7f8c8d"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def findings_by_kind(report: Report) -> bytes | None:
    """Horizontal stacked bars: findings per kind, split by severity."""
    counts = report.findings_by_kind()
    if not counts:
        return None
    plt = _pyplot()
    kinds = list(counts)[::-1]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(kinds) + 1.1))
    left = [0] * len(kinds)
    for sev in ("blocker", "degrades", "info"):
        vals = [counts[k].get(sev, 0) for k in kinds]
        ax.barh(kinds, vals, left=left, color=SEVERITY_COLORS[sev], label=sev)
        for i, (start, v) in enumerate(zip(left, vals)):
            if v:
                ax.text(start + v / 2, i, str(v), ha="center", va="center", color="white", fontsize=9)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_xlabel("findings")
    ax.set_title("Findings by kind and severity", pad=22)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    ax.xaxis.get_major_locator().set_params(integer=True)
    return _png(fig)


def loss_curves(report: Report) -> bytes | None:
    """Loss per step: both sides of the comparison when there is one, else every run record."""
    series: list[tuple[str, list[float]]] = []
    c = report.evidence.compare
    if c is not None and c.losses_a and c.losses_b:
        series = [(f"A: {c.device_a or '?'}", c.losses_a), (f"B: {c.device_b or '?'}", c.losses_b)]
    else:
        series = [(r.device if Path(r.source).name == r.device else f"{r.device} ({Path(r.source).name})", r.losses)
                  for r in report.evidence.records if r.losses]
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for i, (name, ys) in enumerate(series):
        ax.plot(range(len(ys)), ys, marker="o", markersize=3, linestyle="-" if i == 0 else "--", label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("Loss per step (observed)")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def layer_errors(report: Report) -> bytes | None:
    """Max relative error per compared tensor, in comparison order, failing ones marked."""
    c = report.evidence.compare
    if c is None:
        return None
    rows = [r for r in c.rows if r.max_rel is not None or r.max_abs is not None]
    if not rows:
        return None
    plt = _pyplot()
    vals = [max(r.max_rel if r.max_rel is not None else r.max_abs or 0.0, 1e-12) for r in rows]
    colors = ["#c0392b" if r.ok is False else "#2e86c1" for r in rows]
    fig, ax = plt.subplots(figsize=(6.8, 3.4))
    if len(rows) <= 120:
        ax.bar(range(len(rows)), vals, color=colors)
    else:  # thousands of bars are slow to draw and unreadable: one line, failing tensors marked
        ax.plot(range(len(rows)), vals, color="#2e86c1", linewidth=0.8)
        bad = [i for i, r in enumerate(rows) if r.ok is False]
        ax.scatter(bad, [vals[i] for i in bad], color="#c0392b", s=10, zorder=3)
    ax.set_yscale("log")
    ax.set_ylabel("max relative error")
    ax.set_title(f"Per-tensor error, {c.devices()} (red: out of tolerance)")
    step = max(1, len(rows) // 20)
    ax.set_xticks(range(0, len(rows), step))
    ax.set_xticklabels([rows[i].name[:28] for i in range(0, len(rows), step)], rotation=60, ha="right", fontsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def stage_png(path: str | None) -> bytes | None:
    """A PNG written by another stage (the compare stage's plots), if it exists and is a PNG."""
    if not path:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return data if data.startswith(b"\x89PNG\r\n\x1a\n") else None


def all_plots(report: Report) -> dict[str, bytes]:
    """name -> PNG bytes for every plot there is data for, in display order."""
    out: dict[str, bytes] = {}
    c = report.evidence.compare
    made = {
        "findings_by_kind": findings_by_kind(report),
        "loss_curves": (stage_png(c.plots.get("loss_curves") or c.plots.get("loss")) if c else None)
        or loss_curves(report),
        "layer_errors": (stage_png(c.plots.get("layer_error") or c.plots.get("layer_errors")) if c else None)
        or layer_errors(report),
    }
    for name, data in made.items():
        if data:
            out[name] = data
    return out


TITLES = {"findings_by_kind": "Findings by kind", "loss_curves": "Loss curves",
          "layer_errors": "Per-layer error"}
