"""Renderers for ``mpsready ops`` (terminal via rich, JSON via the shared envelope). No logic here."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from mpsready.schema import envelope

SCHEMA = "mpsready.ops"
SCHEMA_VERSION = 1
STATUS_STYLE = {"kernel": "green", "composite": "cyan", "missing": "red", "cpu_fallback_always": "yellow",
                "guard": "red", "unknown": "dim"}


def to_json(kind: str, **body: Any) -> str:
    return json.dumps(envelope(SCHEMA, SCHEMA_VERSION, kind=kind, findings=[], **body), indent=2, sort_keys=False)


def since_text(r: dict[str, Any]) -> str:
    """The "since" row: a release that is the oldest shipped table is a lower bound, not the release that added
    the path ("since 2.2.2" for aten::add.Tensor read as "new in 2.2.2"; the tables start there)."""
    from mpsready.ops.api import shipped_versions

    oldest = shipped_versions()[0]

    def release(v: str) -> str:
        return f"{v} or earlier (the oldest table shipped)" if v == oldest else v

    text = release(r["since_torch"]) if r["since_torch"] else "never (in shipped releases)"
    if r.get("kernel_since") and r["kernel_since"] != r["since_torch"]:
        text += f"; MPS kernel since {release(r['kernel_since'])}"
    return text


def lookup_terminal(results: list[dict[str, Any]], console: Console) -> None:
    for r in results:
        style = STATUS_STYLE.get(r["status"], "")
        table = Table(title=f"{r['op']}  torch {r['torch']}  ({r['basis']})", show_header=False, title_justify="left")
        table.add_column("field", style="bold")
        table.add_column("value", overflow="fold")
        table.add_row("status", f"[{style}]{r['status']}[/]  ({r['how']})")
        if r.get("routed_on_mps"):
            ro = r["routed_on_mps"]
            table.add_row("on MPS", f"this call dispatches {ro['op']} instead ({ro['source']})"
                          + (f"; {ro['condition']}" if ro.get("condition") else "")
                          + (f"; otherwise aten::{ro['otherwise']}" if ro.get("otherwise") else "")
                          + _with_text(ro))
        table.add_row("CUDA", r["cuda"])
        table.add_row("since", since_text(r))
        if r["fixed_in"]:
            table.add_row("fixed in", r["fixed_in"])
        table.add_row("removed again", ", ".join(r["removed_in"]) if r["removed_in"] else "no")
        macos = f"MPS needs macOS {r['torch_min_macos']}+ with torch {r['torch']}"
        if r.get("macos"):
            macos += f"; macOS {r['macos']}: " + ("ok" if r["macos_supported"] else "TOO OLD")
        if r["min_macos"]:
            macos += f"; this op needs macOS {r['min_macos']}+"
        table.add_row("macOS", macos)
        d = r["dtypes"]
        rules = _rule_lines(d)
        exceptions = [f"{'all dtypes' if dt == '*' else dt}: {_exception_text(info)}"
                      for dt, info in d["op_exceptions"].items()]
        if d.get("scope", "op") == "op":
            table.add_row("dtypes", "\n".join(rules + exceptions))
        else:  # no MPS kernel runs the op: the rules are the release's, not the op's (h33h)
            table.add_row("dtypes", "\n".join([d["note"]] + exceptions))
            table.add_row("device-wide", "\n".join([f"generic MPS dtype limits of torch {r['torch']}, not facts "
                                                      "about this op:"] + rules))
        if r["conditions"]:
            table.add_row("conditions", "\n".join(r["conditions"]))
        fb = r["fallback"]
        table.add_row("fallback", f"without {fb['env']}: {fb['without_env']}\nwith {fb['env']}=1: {fb['with_env']}")
        table.add_row("sources", "\n".join(r["sources"]))
        console.print(table)


def diff_terminal(d: dict[str, Any], console: Console) -> None:
    s = d["summary"]
    console.print(f"[bold]torch {d['from']} -> {d['to']}[/] ({d['basis']}): "
                  f"{s['gained_kernel']} gained an MPS kernel, {s['lost_kernel']} lost one, "
                  f"{s['other_change']} other status changes, {s['added']} overloads added, {s['removed']} removed, "
                  f"{s['dtype_exceptions_changed']} with changed dtype exceptions; "
                  f"min macOS {d['min_macos']['from']} -> {d['min_macos']['to']}")
    for group, title in (("gained_kernel", "gained an MPS kernel"), ("lost_kernel", "lost the MPS kernel"),
                         ("other_change", "other status changes")):
        rows = d[group]
        if not rows:
            continue
        table = Table(title=title, title_justify="left")
        table.add_column("op")
        table.add_column("from")
        table.add_column("to")
        for row in rows:
            table.add_row(row["op"], row["from"], f"[{STATUS_STYLE.get(row['to'], '')}]{row['to']}[/]")
        console.print(table)
    for group in ("added", "removed"):
        if d[group]:
            console.print(f"[bold]{group}[/]: " + ", ".join(d[group]))


def _rule_lines(d: dict[str, Any]) -> list[str]:
    """The release's global dtype rules, one line per effect."""
    lines = [f"never: {', '.join(d['refused'])}"]
    if d["need_newer_macos"]:
        lines.append("need newer macOS: " + ", ".join(f"{k} ({v}+)" for k, v in d["need_newer_macos"].items()))
    if d["limited"]:
        lines.append("limited: " + ", ".join(f"{k} (before {v})" for k, v in d["limited"].items()))
    return lines


def _exception_text(info: dict[str, Any]) -> str:
    if info.get("unsupported"):
        return "unsupported"
    return f"needs macOS {info['min_macos']}+" if info.get("min_macos") else f"fails on macOS {info.get('fails_on_macos')}"


def _with_text(route: dict) -> str:
    """The other top-level ops a routed call dispatches on MPS (a route's ``with``; callees left out)."""
    ops = [f"aten::{w['op']}" for w in route.get("with", ()) if not w.get("parent")]
    return "; together with " + ", ".join(ops) if ops else ""
