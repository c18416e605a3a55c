"""Terminal output with rich: findings grouped by severity, a summary table and the outlook line."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mpsready.findings import Severity, Verdict
from mpsready.rules import fixability
from mpsready.scan.engine import ScanResult
from mpsready.scan.exit_reason import exit_reason
from mpsready.scan.formats.concise import NOT_REPORTED, finding_line, fix_lines, summary_lines
from mpsready.scan.formats.interface import ScanFormat
from mpsready.escape import visible
from mpsready.scan.model.graph import why_line
from mpsready.scan.model.selection import headline
from mpsready.scan.model.remedy import OFF_PATH_REACH

STYLES = {Severity.BLOCKER: "bold red", Severity.DEGRADES: "yellow", Severity.INFO: "cyan"}
VERDICT_STYLES = {Verdict.RUNS_ON_MAC: "bold green", Verdict.MAC_FOR_DEV: "bold yellow", Verdict.STAY_ON_CUDA: "bold red"}


class TerminalFormat(ScanFormat):
    name = "terminal"
    prints_to_console = True

    def __init__(self, width: int | None = None, color: bool | None = None, max_per_group: int = 200) -> None:
        self.width, self.color, self.max_per_group = width, color, max_per_group

    def render(self, result: ScanResult) -> str:
        buf = io.StringIO()
        console = Console(file=buf, width=self.width or 120, force_terminal=bool(self.color), no_color=not self.color,
                          highlight=False)
        self.print(result, console)
        return buf.getvalue()

    def print_many(self, results: list[ScanResult], console: Console) -> None:
        """Each scan in turn, under a rule naming its path when there are several. On a console that is no
        terminal (a pipe, pre-commit, a CI log) the lines are written unwrapped, one finding per line
        (:meth:`log_lines`), so a log keeps each finding whole and greppable."""
        if not console.is_terminal:
            many = len(results) > 1
            console.out("\n".join(line for result in results
                                  for line in ([f"== mpsready scan {visible(result.root)} =="] if many else [])
                                  + self.log_lines(result)), highlight=False)
            return
        for result in results:
            if len(results) > 1:
                console.rule(f"mpsready scan {result.root}")
            self.print(result, console)

    def print(self, result: ScanResult, console: Console) -> None:
        for sev in (Severity.BLOCKER, Severity.DEGRADES, Severity.INFO):
            group = [f for f in result.findings if f.severity is sev]
            if not group:
                continue
            console.rule(Text(f"{sev.value} ({len(group)})", style=STYLES[sev]))
            for f in group[: self.max_per_group]:
                line = Text()
                line.append(f"{f.code} ", style=STYLES[sev])
                line.append(visible(str(f.location)), style="bold")
                if f.scope.value != "main":
                    line.append(f" [{f.scope.value}]", style="dim")
                if f.reach in OFF_PATH_REACH:  # reported, but never limits the outlook
                    line.append(f" [{str(f.reach).replace('_', ' ')}]", style="dim")
                line.append(f"  {visible(f.message)}")
                console.print(line)
            if len(group) > self.max_per_group:
                console.print(Text(f"    ... and {len(group) - self.max_per_group} more (use --format json)", style="dim"))
        fixes = fix_lines(result.findings)
        if fixes:  # once per rule and distinct fix, not once per finding
            console.rule(Text(f"how to fix ({len(fixes)})", style="bold"))
            for text in fixes:
                console.print(Text(f"  {text}", style="dim"))
        c = result.counts()
        table = Table(title="mpsready scan summary (predicted: static analysis, nothing was run)")
        for col in ("files", "lines", "blocker", "degrades", "info", "suppressed", "seconds"):
            table.add_column(col, justify="right")
        table.add_row(str(result.files_scanned), str(result.lines_scanned), str(c["blocker"]), str(c["degrades"]),
                      str(c["info"]), str(result.suppressed), f"{result.seconds:.2f}")
        console.print(table)
        console.print(Text(fixability().effort_line(result.findings, result.torch_floor)))
        if result.subprojects:
            sub = Table(title="subprojects")
            sub.add_column("path")
            sub.add_column("outlook")
            for s in result.subprojects:
                sub.add_row(visible(s.path), Text(s.outlook.value, style=VERDICT_STYLES[s.outlook]))
            console.print(sub)
        verdict = Text("static outlook: ")
        verdict.append(f"{result.outlook.title} ({result.outlook.value})", style=VERDICT_STYLES[result.outlook])
        if result.incomplete:
            verdict.append(f" for the files read only ({len(result.incomplete)} not read: incomplete)", style="yellow")
        if result.limiting:
            codes = sorted({f.code for f in result.limiting})
            verdict.append(f"  limited by {len(result.limiting)} finding(s): {', '.join(codes)}")
        if result.edits:
            console.rule(Text(f"edits for the Mac ({len(result.edits)})", style="bold"))
            for e in result.edits[:self.max_per_group]:
                where = f"{e.path}:{e.line}" if e.line else str(e.path)
                tag = "migrate can make it" if e.migrate else "by hand"
                console.print(Text(f"  {e.code} {visible(where)} [{e.kind}, {tag}]  {visible(e.what)}"))
                why = next((why_line(f.evidence) for f in result.limiting if f.code == e.code
                            and f.location.path == e.path and f.location.line == e.line), None)
                if why:  # issue 32: the entry and chain that reach it, and the Mac's facts it runs under
                    console.print(Text(f"    {visible(why)}", style="dim"), soft_wrap=True)
        console.print(verdict)
        # issue 32, round 6: which question decided it (model/selection.py)
        if result.selection.get("answer") == "mps":
            console.print(Text("  " + visible(headline(result.selection, result.outlook.value, len(result.limiting)))),
                          soft_wrap=True)
        if result.outlook is Verdict.STAY_ON_CUDA and result.limiting:  # the reason names the core op
            first = result.limiting[0]
            console.print(Text(f"  because: {first.code} {visible(str(first.location))}  "
                               f"{visible(first.core_op or first.message)}"), soft_wrap=True)
        self._print_asides(result, console)
        if result.flags:
            console.print(Text("run on the Mac with: " + visible(" ".join(result.flags)), style="bold"))
            for command in result.commands[:self.max_per_group]:  # issue 32: the exact command line
                console.print(Text("  " + visible(command), style="bold"), soft_wrap=True)
        if result.incomplete:
            console.print(Text(f"incomplete: {len(result.incomplete)} file(s) could not be read or parsed, the outlook "
                               "covers the rest only: " + visible(", ".join(result.incomplete[:10])), style="yellow"))
        self.print_tail(result, console)

    def _print_asides(self, result: ScanResult, console: Console) -> None:
        """The dim lines under the verdict that never decide it: optional parts, limits whose reach is not verified,
        secondary parts."""
        for opt in result.optional[:self.max_per_group]:  # issue 32: optional parts, never the headline
            where = f"{opt['path']}:{opt['line']}" if opt["line"] else str(opt["path"])
            console.print(Text(f"  optional: {opt['code']} {visible(where)} ({visible(opt['why'])})", style="dim"),
                          soft_wrap=True)
        for nv in getattr(result, "not_verified", [])[:self.max_per_group]:  # round 10: reach by calls not settled
            console.print(Text(f"  not verified: {nv['code']} {visible(nv['path'])}:{nv['line']} ({visible(nv['why'])})",
                               style="dim"), soft_wrap=True)
        for part in result.secondary[:self.max_per_group]:  # off the main path: they never lower the outlook above
            console.print(Text(f"  secondary part {visible(part.line())}", style="dim"))

    @staticmethod
    def print_tail(result: ScanResult, console: Console) -> None:
        """The gate's notes (baseline, report filters) and, last, why the exit code is not 0."""
        if result.baseline is not None:
            console.print(Text(result.baseline.line()), soft_wrap=True)
        if result.config_ignored:
            console.print(Text(f"{result.config_ignored} {NOT_REPORTED}", style="dim"), soft_wrap=True)
        reason = exit_reason(result)
        if reason:  # the last line: why the exit code is not 0 whatever the outlook says
            console.print(Text(reason, style="bold"), soft_wrap=True)

    def log_lines(self, result: ScanResult) -> list[str]:
        """The output for a log: a header per severity, one line per finding (:func:`.concise.finding_line`),
        the fixes once per rule, the edits, the secondary parts and the summary, never wrapped and without
        trailing spaces."""
        lines: list[str] = []
        for sev in (Severity.BLOCKER, Severity.DEGRADES, Severity.INFO):
            group = [f for f in result.findings if f.severity is sev]
            if group:
                lines.append(f"{sev.value} ({len(group)})")
                lines += [finding_line(f) for f in group[: self.max_per_group]]
                if len(group) > self.max_per_group:
                    lines.append(f"... and {len(group) - self.max_per_group} more (use --format json)")
        lines += fix_lines(result.findings)
        lines.append(fixability().effort_line(result.findings, result.torch_floor))
        for sub in result.subprojects:
            lines.append(f"subproject {visible(sub.path)}: {sub.outlook.value}")
        for e in result.edits[: self.max_per_group]:
            where = f"{e.path}:{e.line}" if e.line else str(e.path)
            tag = "migrate can make it" if e.migrate else "by hand"
            lines.append(f"edit for the Mac: {e.code} {visible(where)} [{e.kind}, {tag}] {visible(e.what)}")
            why = next((why_line(f.evidence) for f in result.limiting if f.code == e.code
                        and f.location.path == e.path and f.location.line == e.line), None)
            if why:  # as on a terminal: a log (CI, a pipe) lost the import chain and round 10's call chain
                lines.append(f"  {visible(why)}")
        secondary = [f"secondary part {visible(part.line())}" for part in result.secondary[: self.max_per_group]]
        secondary += [f"not verified: {nv['code']} {visible(nv['path'])}:{nv['line']} ({visible(nv['why'])})"
                      for nv in getattr(result, "not_verified", [])[: self.max_per_group]]  # round 10
        if result.selection.get("answer") == "mps":  # issue 32, round 6: the Mac path decided the verdict
            secondary.insert(0, visible(headline(result.selection, result.outlook.value, len(result.limiting))))
        lines += summary_lines(result, after_outlook=secondary)
        return [" ".join(line.split(" ")).rstrip() for line in lines]
