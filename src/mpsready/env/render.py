"""Renderers for the env record and env diffs: JSON and a rich terminal table (no logic here)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from mpsready.env.diff import Difference


def to_json(rec: Mapping[str, Any]) -> str:
    return json.dumps(rec, indent=2, allow_nan=False, default=str) + "\n"


def _fmt_bytes(n: Any) -> str:
    if not isinstance(n, int):
        return "-"
    return f"{n / 2**30:.1f} GiB"


def env_rows(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    py, os_, m, t = rec.get("python") or {}, rec.get("os") or {}, rec.get("machine") or {}, rec.get("torch") or {}
    mps = t.get("mps") or {}
    rows = [
        ("basis", "observed (measured in this environment)"),
        ("python", f"{py.get('version')} {py.get('implementation')} ({py.get('arch')})"),
        ("os", f"{os_.get('system')} {os_.get('macos_version') or os_.get('release')}"),
        ("chip", str(m.get("chip") or "-")),
        ("memory", _fmt_bytes(m.get("memory_bytes")) + (" unified" if m.get("unified_memory") else "")),
    ]
    if m.get("rosetta") is not None:
        rows.append(("rosetta", "yes (x86_64 Python translated)" if m["rosetta"].get("translated") else "no"))
    if t.get("installed"):
        rows.append(("torch", f"{t.get('version')} (CUDA {t.get('cuda_version') or '-'}, "
                               f"cuDNN {t.get('cudnn_version') or '-'})"))
    else:
        rows.append(("torch", f"not installed ({t.get('error')})"))
    rows.append(("mps is_built", str(mps.get("built"))))
    rows.append(("mps is_available", str(mps.get("available"))))
    rows.append(("mps meaning", str(mps.get("meaning"))))
    cuda = t.get("cuda") or {}
    for d in cuda.get("devices", []):
        rows.append((f"cuda:{d['index']}", f"{d['name']} sm_{d['capability']} {_fmt_bytes(d['total_memory_bytes'])}"))
    for k, v in (rec.get("precision") or {}).items():
        rows.append((f"precision {k}", str(v)))
    for k, v in (rec.get("env_vars") or {}).items():
        if v is not None:
            rows.append((k, v))
    proj = rec.get("project")
    if proj:
        g = proj.get("git") or {}
        rows.append(("project", f"{proj.get('path')} @ {str(g.get('commit'))[:12]} "
                                f"{'dirty' if g.get('dirty') else 'clean'}" if "commit" in g else
                     f"{proj.get('path')} ({g.get('error')})"))
    pk = rec.get("packages") or {}
    for name in ("torch", "numpy", "torchvision", "safetensors"):
        if name in pk:
            rows.append((f"package {name}", pk[name]))
    rows.append(("packages", f"{len(pk)} installed"))
    return rows


def to_text(rec: Mapping[str, Any]) -> str:
    """Plain ``key: value`` lines in a fenced block, to paste into an issue: every key and value whole (no
    table, no column width), keys aligned, control characters shown as ``\\xNN``, then the findings."""
    from mpsready.escape import visible

    rows = [(visible(k), visible(str(v))) for k, v in env_rows(rec)]
    width = max((len(k) for k, _ in rows), default=0)
    out = ["```text", "mpsready env (observed in this environment)"]
    out += [f"{k.ljust(width)} : {v}" for k, v in rows]
    findings = rec.get("findings") or []
    if findings:
        out.append("")
        out += [visible(f"{f['code']} {f['severity']} ({f['basis']}): {f['message']}") for f in findings]
    out.append("```")
    return "\n".join(out) + "\n"


def render_terminal(rec: Mapping[str, Any], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    rows = env_rows(rec)
    table = Table(title="mpsready env", show_header=False)
    # the keys are never cut (they used to end in "…" at 100 columns): the values fold instead
    table.add_column("item", style="bold", no_wrap=True, min_width=max((len(k) for k, _ in rows), default=4))
    table.add_column("value", overflow="fold")
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
    for f in rec.get("findings", []):
        console.print(f"[bold]{f['code']}[/bold] {f['severity']} ({f['basis']}): {f['message']}")


def render_diff_terminal(diffs: Sequence[Difference], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if not diffs:
        console.print("no differences")
        return
    table = Table(title="mpsready env --diff (numerics-changing first)")
    for col in ("path", "A", "B", "changes numerics"):
        table.add_column(col)
    for d in diffs:
        table.add_row(d.path, json.dumps(d.a, default=str), json.dumps(d.b, default=str),
                      f"yes: {d.why}" if d.numerics else "no")
    console.print(table)


def diff_to_json(diffs: Sequence[Difference], a: str, b: str) -> str:
    from mpsready.schema import envelope

    doc = envelope("mpsready.env-diff", 1, basis="observed", a=a, b=b,
                   numerics_differences=sum(d.numerics for d in diffs),
                   differences=[d.to_dict() for d in diffs])
    return json.dumps(doc, indent=2, default=str) + "\n"
