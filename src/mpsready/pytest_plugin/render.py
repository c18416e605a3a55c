"""The terminal summary of ``pytest --mps-emulate``: rich tables, rendered to text for pytest's reporter."""

from __future__ import annotations

import io
from typing import Any

_LABELS = {"clean": "clean on the emulated Mac", "mac_failure": "predicted Mac failure",
           "wrong_result": "predicted wrong result", "fallback": "ran with CPU fallbacks",
           "inconclusive": "failed here, not by the Mac (inconclusive)", "no_mps": "never reached MPS",
           "not_run": "not run (skipped)", "unverified": "ran, but judged in part on no data (unverified)"}


def _where(loc: dict[str, Any] | None) -> str:
    return f"{loc['path']}:{loc['line']}" if loc else "-"


def render_summary(doc: dict[str, Any], width: int = 120, color: bool = False) -> str:
    """Text of the summary: the header, counts per verdict, Mac failures by cause, fallback ops, the gate."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, soft_wrap=False)
    t = doc["target"]
    s = doc["summary"]
    console.print(f"emulated Mac: torch {t['torch']}, macOS {t['macos']}, PYTORCH_ENABLE_MPS_FALLBACK="
                  f"{'1' if t['fallback'] else 'unset'} - every verdict predicted, none observed on a Mac")
    counts = Table(title=None, show_header=True, header_style="bold")
    counts.add_column("on the emulated Mac")
    counts.add_column("tests", justify="right")
    for key, label in _LABELS.items():
        if s.get(key):
            counts.add_row(label, str(s[key]))
    if s.get("collection_errors"):
        counts.add_row("test modules not run: collection error", str(s["collection_errors"]))
    counts.add_row("total", str(s["tests"]), style="bold")
    console.print(counts)
    if doc.get("collection_errors"):
        errs = Table(title="test modules not run: collection error (their tests never ran)", show_header=True,
                     header_style="bold")
        errs.add_column("module", no_wrap=True)
        errs.add_column("error", overflow="fold")
        for e in doc["collection_errors"]:
            errs.add_row(str(e.get("module")), str(e.get("message")))
        console.print(errs)
    if s["by_cause"]:
        causes = Table(title="predicted Mac failures by cause", show_header=True, header_style="bold")
        for col in ("kind", "op", "dtype", "tests", "first at", "first test"):
            causes.add_column(col, justify="right" if col == "tests" else "left", overflow="fold",
                              no_wrap=col in ("kind", "dtype", "first at"))
        for row in s["by_cause"]:
            causes.add_row(str(row["kind"]), row["op"] or "-", row["dtype"] or "-", str(row["tests"]),
                           _where(row["location"]), row["first"])
        console.print(causes)
    if s["fallback_ops"]:
        fb = Table(title="operators run on the CPU (fallbacks)", show_header=True, header_style="bold")
        fb.add_column("op")
        fb.add_column("tests", justify="right")
        for op, n in s["fallback_ops"].items():
            fb.add_row(op, str(n))
        console.print(fb)
    g = doc["gate"]
    if g["failed"]:
        console.print(f"mpsready gate (--mps-fail-on={g['fail_on']}): failed: {g['reason']}")
    else:
        console.print(f"mpsready gate (--mps-fail-on={g['fail_on']}): passed")
    return buf.getvalue()


def write_summary(doc: dict[str, Any] | None, terminalreporter, config) -> None:
    """The plugin's section of pytest's terminal summary for the session's document ``doc`` (none: nothing)."""
    if doc is None:
        return
    tr = terminalreporter
    tr.section("mpsready: the tests on an emulated Mac (predicted)")
    width = tr._tw.fullwidth if tr.isatty else 160  # a CI log is not a terminal: keep table rows on one line
    tr.write(render_summary(doc, width=max(100, width), color=tr.hasmarkup))
    if config.option.mps_json:
        tr.write_line(f"mpsready.pytest document: {config.option.mps_json}")
