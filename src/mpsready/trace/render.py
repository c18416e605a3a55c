"""Renderers for a :class:`~mpsready.trace.api.TraceResult`: terminal (rich), JSON, Markdown.

Logic lives in :mod:`mpsready.trace.predict`; these only format. Every line says it is a
prediction: the step ran on the trace device, never on MPS.
"""

from __future__ import annotations

import io
import json
from typing import Any, Callable

from mpsready.trace.api import TraceResult

_SHOWN = ("error", "fallback", "unknown")
_LABEL = {"error": "error on MPS", "fallback": "falls back to CPU", "unknown": "unknown", "runs": "runs on MPS",
          "composite": "runs (composite: judged by its callees)", "host": "not predicted (host side)"}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _where(o) -> str:
    if not o.frames:
        return "-"
    f = o.frames[0]
    return f"{f.path}:{f.line} {f.function}"


def _head(r: TraceResult) -> str:
    p = r.prediction
    fb = "PYTORCH_ENABLE_MPS_FALLBACK=1 assumed" if p.fallback else "PYTORCH_ENABLE_MPS_FALLBACK unset"
    return (f"PREDICTED for MPS with torch {p.torch} on macOS {p.macos} ({fb}); traced on {r.trace.device_label} with "
            f"torch {r.trace.torch_version}; entry {r.trace.entry}")


def render_json(r: TraceResult) -> str:
    return json.dumps(r.to_dict(), indent=2, sort_keys=False) + "\n"


def render_terminal(r: TraceResult, width: int = 120, color: bool | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=bool(color), no_color=not color, highlight=False)
    p = r.prediction
    con.print(f"[bold]mpsready trace[/bold]: {_t(_head(r))}")
    stages = Table(title="Stages (observed on the trace device)", show_lines=False)
    for col in ("stage", "status", "seconds", "note"):
        stages.add_column(col)
    for s in r.trace.stages:
        err = (": " + s.get("error", "")[:60]) if s.get("error") else ""
        note = (s.get("error_type", "") + err) or s.get("reason", "")
        stages.add_row(_t(s["stage"]), _t(s["status"]), f"{s.get('seconds', 0):.4f}", _t(note or ""))
    con.print(stages)
    ops = [o for o in p.ops if o.verdict in _SHOWN]
    table = Table(title=f"Predicted problems ({len(ops)} of {p.summary['ops']} ops; prediction, not observed)")
    for col in ("basis", "op", "prediction", "fixed in", "calls", "share of step", "where", "stage"):
        table.add_column(col, overflow="fold")
    for o in ops:
        reason = "; ".join(pr.detail for pr in o.problems)
        table.add_row("predicted", _t(o.op) + (f"\n(recorded as {_t(', '.join(o.recorded_as))})" if o.recorded_as else ""),
                      f"{_LABEL[o.verdict]}: {_t(reason)}", o.fixed_in or "-", str(o.count),
                      _pct(o.time_share), _t(_where(o)), _t(", ".join(o.stages)))
    if ops:
        con.print(table)
    if p.findings:
        ft = Table(title="Findings (predicted)")
        for col in ("basis", "code", "severity", "location", "message"):
            ft.add_column(col, overflow="fold")
        for f in p.findings:
            ft.add_row(f.basis.value, f.code, f.severity.value, _t(str(f.location)), _t(f.message))
        con.print(ft)
    s = p.summary
    v = s["verdicts"]
    con.print(f"Predicted: {v['runs'] + v['composite']} ops run on MPS, {v['error']} error, {v['fallback']} fall back, "
              f"{v['unknown']} unknown; {s['dtype_blockers']} dtype blocker(s); ops without a kernel would move "
              f"{_pct(s['fallback_time_share'])} of the traced step time to the CPU under the fallback. "
              f"Exit code {r.exit_code}.")
    incomplete = _incomplete(r)
    if incomplete:
        con.print(_t(incomplete))
    return buf.getvalue()


def _incomplete(r: TraceResult) -> str:
    """A warning when a stage failed on the trace device: the prediction then covers only the ops
    that ran, and exit code 0 must not read as "the step is fine" (a broken ENTRY looks like this)."""
    failed = [s["stage"] for s in r.trace.stages if s.get("status") in ("failed", "crashed")]
    if not failed:
        return ""
    return (f"INCOMPLETE: stage(s) {', '.join(failed)} failed on the trace device ({r.trace.device_label}), so their ops "
            "and the stages after them are missing from this prediction. Fix the error shown in the stage table "
            "(the JSON output has the traceback) and trace again.")


def render_markdown(r: TraceResult) -> str:
    p = r.prediction
    lines = ["# mpsready trace (prediction)", "", f"> {_md(_head(r))}", "",
             "Every row below is **predicted** from the support data; nothing ran on MPS.", "",
             "## Stages (observed on the trace device)", "", "| stage | status | seconds | error |",
             "|---|---|---|---|"]
    for s in r.trace.stages:
        err = (s.get("error_type", "") + ": " + s.get("error", "")[:80]) if s.get("error") else ""
        lines.append(f"| {s['stage']} | {s['status']} | {s.get('seconds', 0):.4f} | {_md(err)} |")
    lines += ["", "## Predicted ops with problems", "",
              "| basis | op | prediction | fixed in | calls | share of step time | where | stage |",
              "|---|---|---|---|---|---|---|---|"]
    for o in p.ops:
        if o.verdict not in _SHOWN:
            continue
        reason = "; ".join(pr.detail for pr in o.problems)
        rec = f" (recorded as {', '.join(o.recorded_as)})" if o.recorded_as else ""
        lines.append(f"| predicted | `{o.op}`{rec} | {_LABEL[o.verdict]}: {_md(reason)} | {o.fixed_in or '-'} | "
                     f"{o.count} | {_pct(o.time_share)} | {_md(_where(o))} | {', '.join(o.stages)} |")
    lines += ["", "## Findings (predicted)", "", "| basis | code | severity | location | message |",
              "|---|---|---|---|---|"]
    for f in p.findings:
        lines.append(f"| {f.basis.value} | {f.code} | {f.severity.value} | {_md(str(f.location))} | {_md(f.message)} |")
    s = p.summary
    v = s["verdicts"]
    lines += ["", "## Summary (predicted)", "",
              f"- predicted: {v['runs'] + v['composite']} ops run on MPS, {v['error']} error, {v['fallback']} fall "
              f"back to the CPU, {v['unknown']} unknown, {v['host']} not predicted (host side)",
              f"- predicted: {s['dtype_blockers']} dtype blocker(s)",
              f"- predicted: ops without an MPS kernel: {_pct(s['fallback_call_share'])} of device calls, about "
              f"{_pct(s['fallback_time_share'])} of the traced step time",
              f"- exit code {r.exit_code}", ""]
    incomplete = _incomplete(r)
    if incomplete:
        lines += [f"**{incomplete}**", ""]
    return "\n".join(lines)


def _md(text: Any) -> str:
    """A Markdown table cell: newlines as spaces, control characters ``\\xNN``, HTML and ``|`` escaped."""
    from mpsready.escape import md_cell

    return md_cell(str(text).replace("\n", " "))


def _t(text: Any) -> str:
    """Program text (an exception message, a path) for rich markup: control characters ``\\xNN``, markup escaped."""
    from rich.markup import escape

    from mpsready.escape import visible

    return escape(visible(str(text)))


RENDERERS: dict[str, Callable[..., str]] = {"terminal": render_terminal, "json": render_json, "md": render_markdown}
