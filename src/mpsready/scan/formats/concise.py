"""One line per finding, for logs, pre-commit and editors: ``path:line:col: CODE [severity] message``.

The shape of ruff's ``--output-format concise`` and of compilers' diagnostics, so editors and CI logs turn
each line into a link. No wrapping at any width, no colour, no trailing spaces; control, bidi and zero-width
characters from the project are written visibly (:func:`~mpsready.escape.visible`). Fix sentences follow once
per rule and distinct fix (never once per finding), then the summary and the static outlook.
"""

from __future__ import annotations

from collections import Counter

from mpsready.escape import visible
from mpsready.findings import Finding, Verdict
from mpsready.scan.engine import ScanResult
from mpsready.scan.exit_reason import exit_reason
from mpsready.scan.formats.interface import ScanFormat
from mpsready.scan.model.remedy import OFF_PATH_REACH

# after the count of findings the report filters took out: the project's own select / ignore / exclude are among
# them (issue 34 item 5: they narrow the report, never what the outlook reads)
NOT_REPORTED = ("finding(s) not reported by per-file-ignores / ignore-scopes / the project's select, ignore, "
                "exclude (the outlook still counts them)")


def finding_line(f: Finding) -> str:
    """``train.py:9:5: API101 [blocker] message (scope: tests)`` (line and column left out where unknown)."""
    where = f.location.path or "."
    if f.location.line:
        where += f":{f.location.line}"
        if f.location.column:
            where += f":{f.location.column}"
    tags = []
    if f.scope.value != "main":
        tags.append(f"scope: {f.scope.value}")
    if f.reach in OFF_PATH_REACH:
        tags.append(str(f.reach).replace("_", " "))
    elif f.behind_flag:  # a blocker with no tag under a runs_on_mac headline gave no reason why it does not limit
        tags.append(f"behind flag: {' '.join(str(f.behind_flag).split())}")
    tail = f" ({'; '.join(tags)})" if tags else ""
    return f"{visible(where)}: {f.code} [{f.severity.value}] {visible(' '.join(f.message.split()))}{tail}"


def fix_lines(findings: list[Finding]) -> list[str]:
    """``fix CODE (N): sentence``, once per rule and distinct fix text, in the findings' order."""
    counts = Counter((f.code, f.fix) for f in findings if f.fix)
    out, seen = [], set()
    for f in findings:
        if not f.fix:
            continue
        key = (f.code, f.fix)
        if key not in seen:
            seen.add(key)
            out.append(f"fix {f.code} ({counts[key]}): {visible(' '.join(f.fix.split()))}")
    return out


def summary_lines(result: ScanResult, after_outlook: list[str] | None = None) -> list[str]:
    """The counts, the outlook (then ``after_outlook``), flags, incompleteness, the baseline and report-filter
    notes and, last, the exit reason."""
    c = result.counts()
    lines = [f"mpsready scan {visible(result.root)}: {result.files_scanned} files, {c['blocker']} blocker, "
             f"{c['degrades']} degrades, {c['info']} info, {result.suppressed} suppressed (predicted: static "
             "analysis, nothing was run)"]
    outlook = f"static outlook: {result.outlook.title} ({result.outlook.value})"
    if result.incomplete:
        outlook += f" for the files read only ({len(result.incomplete)} not read: incomplete)"
    if result.limiting:
        outlook += (f"; limited by {len(result.limiting)} finding(s): "
                    f"{', '.join(sorted({f.code for f in result.limiting}))}")
    lines.append(outlook)
    if result.outlook is Verdict.STAY_ON_CUDA and result.limiting:  # the reason names the core op
        first = result.limiting[0]
        lines.append(f"because: {first.code} {visible(str(first.location))} {visible(first.core_op or first.message)}")
    lines += after_outlook or []
    if result.flags:
        lines.append("run on the Mac with: " + visible(" ".join(result.flags)))
    if result.incomplete:
        lines.append(f"incomplete: {len(result.incomplete)} file(s) could not be read or parsed: "
                     + visible(", ".join(result.incomplete[:10])))
    if result.baseline is not None:
        lines.append(result.baseline.line())
    if result.config_ignored:
        lines.append(f"{result.config_ignored} {NOT_REPORTED}")
    reason = exit_reason(result)
    if reason:
        lines.append(reason)
    return lines


class ConciseFormat(ScanFormat):
    name = "concise"

    def render(self, result: ScanResult) -> str:
        lines = [finding_line(f) for f in result.findings]
        lines += fix_lines(result.findings)
        lines += summary_lines(result)
        return "\n".join(line.rstrip() for line in lines) + "\n"
