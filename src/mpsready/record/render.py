"""Renderers for a run record: a rich summary and JSON (no logic here)."""

from __future__ import annotations

import json
from typing import Any

from mpsready.record.layout import RunRecord


def render_json(rec: RunRecord) -> str:
    return json.dumps(rec.manifest, indent=2) + "\n"


def _shown(text: Any) -> str:
    """Manifest text (a record may come from anywhere): control characters as ``\\xNN``, rich markup escaped."""
    from rich.markup import escape

    from mpsready.escape import visible

    return escape(visible(str(text)))


def render_terminal(rec: RunRecord, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    m = rec.manifest
    console.print(f"run record {_shown(rec.path)} — observed on {_shown(m.get('observed_on'))}, entry "
                  f"{_shown(m.get('entry'))}, {_shown(m.get('tensor_count'))} tensors")
    t = Table(title="stages")
    for col in ("stage", "status", "steps", "seconds", "error / reason"):
        t.add_column(col)
    for s in rec.stages:
        why = f"{s.get('error_type')}: {s.get('error')}" if s.get("error") else s.get("reason") or ""
        t.add_row(_shown(s["stage"]), _shown(s["status"]), str(s.get("steps_run", 0)), f"{s.get('seconds', 0):.4f}",
                  _shown(why[:120]))
    console.print(t)
    steps = Table(title="steps")
    for col in ("step", "loss", "seconds", "peak memory"):
        steps.add_column(col)
    for sm in rec.step_metrics:
        steps.add_row(str(sm["index"]), "-" if sm.get("loss") is None else f"{sm['loss']:.6g}",
                      f"{sm['seconds']:.4f}", "-" if not sm.get("peak_memory_bytes")
                      else f"{sm['peak_memory_bytes'] / 2**20:.1f} MiB")
    console.print(steps)
    fb = m.get("fallback") or {}
    if fb.get("checked"):
        calls = fb.get("calls") or {}
        console.print("CPU fallback calls: " + (", ".join(f"{k}={v}" for k, v in calls.items()) or "none"))
    counts = m.get("warning_counts") or {}
    if counts:
        console.print(f"warnings: {warning_summary(counts)}" + ("" if m.get("warnings") else
                                                               " (texts kept only with --keep-output)"))
    for f in m.get("findings", []):
        console.print(f"[bold]{_shown(f['code'])}[/bold] {_shown(f['severity'])} ({_shown(f['basis'])}): "
                      f"{_shown(f['message'])}")


def warning_summary(counts: dict[str, Any]) -> str:
    """``{"UserWarning": 3}`` as ``3 UserWarning``, most frequent first."""
    items = sorted(((n, c) for c, n in counts.items() if isinstance(n, int) and not isinstance(n, bool)),
                   key=lambda x: (-x[0], x[1]))
    return ", ".join(f"{n} {c}" for n, c in items)
