"""Markdown output: a report to keep beside the code (outlook, summary table, findings by severity)."""

from __future__ import annotations

from mpsready.findings import Severity
from mpsready.rules import fixability
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.interface import ScanFormat
from mpsready.escape import md_cell
from mpsready.escape import md_cell as _cell
from mpsready.escape import md_code, md_text
from mpsready.scan.model.remedy import OFF_PATH_REACH


MAX_EDITS = 50


def _where(e) -> str:
    return f"{e.path}:{e.line}" if e.line else str(e.path)


class MarkdownFormat(ScanFormat):
    name = "md"

    def render(self, result: ScanResult) -> str:
        c = result.counts()
        out = [f"# mpsready scan: {md_code(str(result.root))}", "",
               f"**Static outlook: {result.outlook.title}** (`{result.outlook.value}`, predicted from files; nothing was run).", ""]
        if result.limiting:
            out.append("Limited by: " + ", ".join(f"`{f.code}` {md_text(str(f.location))}" for f in result.limiting[:10])
                       + (f" and {len(result.limiting) - 10} more" if len(result.limiting) > 10 else "") + ".")
            out.append("")
        if result.flags:
            out += ["On the Mac run with: " + " ".join(md_code(flag) for flag in result.flags), ""]
        if result.edits:
            out += ["| location | edit | kind | `mpsready migrate` | what |", "|---|---|---|---|---|"]
            out += [f"| {md_code(_where(e))} | `{e.code}` | {e.kind} | {'yes' if e.migrate else 'no'} | {_cell(e.what)} |"
                    for e in result.edits[:MAX_EDITS]]
            if len(result.edits) > MAX_EDITS:
                out.append(f"\n... and {len(result.edits) - MAX_EDITS} more edits (see `--format json`).")
            out.append("")
        if result.incomplete:
            out += ["**Incomplete:** these files could not be read or parsed, so the outlook covers the rest only: "
                    + ", ".join(md_code(p) for p in result.incomplete), ""]
        out += ["| files | lines | blocker | degrades | info | suppressed |", "|---|---|---|---|---|---|",
                f"| {result.files_scanned} | {result.lines_scanned} | {c['blocker']} | {c['degrades']} | {c['info']} "
                f"| {result.suppressed} |", "",
                fixability().effort_line(result.findings, result.torch_floor), ""]
        if result.subprojects:
            out += ["## Subprojects", "", "| subproject | outlook |", "|---|---|"]
            out += [f"| {md_code(s.path)} | `{s.outlook.value}` |" for s in result.subprojects]
            out.append("")
        for sev in (Severity.BLOCKER, Severity.DEGRADES, Severity.INFO):
            group = [f for f in result.findings if f.severity is sev]
            if not group:
                continue
            out += [f"## {sev.value} ({len(group)})", "", "| code | location | scope | message | fix |", "|---|---|---|---|---|"]
            for f in group:
                out.append(f"| `{md_cell(f.code)}` | {md_code(str(f.location))} | {_scope(f)} | {_cell(f.message)} "
                           f"| {_cell(f.fix or '')} |")
            out.append("")
        return "\n".join(out)


def _scope(f) -> str:
    """The scope, and an off-path reach (never limits the outlook): ``main (container)``."""
    reach = f.reach
    return f"{f.scope.value} ({str(reach).replace('_', ' ')})" if reach in OFF_PATH_REACH else f.scope.value
