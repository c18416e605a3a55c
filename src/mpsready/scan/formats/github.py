"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding.

A step that runs ``mpsready scan . --format github`` makes each finding appear on its file and line in
the pull request, without uploading SARIF. The syntax and escaping follow GitHub's "Workflow commands
for GitHub Actions" page: ``::error file=F,line=L,col=C,endLine=E,endColumn=EC,title=T::MESSAGE``; in the
message ``%``, CR and LF are percent-encoded, in property values also ``:`` and ``,``.

Paths are relative to the repository root (found as for SARIF, :mod:`.locate`), which is the
workspace a checkout step leaves. Severity maps blocker -> error, degrades -> warning, info -> notice.
The last line is a plain summary with the static outlook. GitHub shows 10 annotations of each kind per step:
past that, findings of one rule in one file share an annotation (:func:`grouped`), and with
``$GITHUB_STEP_SUMMARY`` set the whole Markdown report goes to the job summary.
"""

from __future__ import annotations

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.interface import ScanFormat
from mpsready.scan.formats.locate import Locator
from mpsready.escape import visible
from mpsready.scan.formats.sarif import sentence

COMMANDS = {"blocker": "error", "degrades": "warning", "info": "notice"}
# GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (actions/toolkit
# docs/problem-matchers.md, "Limitations"); a step summary may hold 1 MiB (GitHub docs, "Adding a job summary").
PER_KIND = 10
SUMMARY_BYTES = 1024 * 1024


def escape_data(text: str) -> str:
    """Percent-encoding of GitHub's workflow commands; other control characters (ESC, BEL) that a project
    string may carry are written ``\\xNN`` (:func:`~mpsready.escape.visible`): the Actions log
    interprets ANSI sequences."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible(text)


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _title(f: Finding) -> str:
    try:
        return f"{f.code} {registry.get(f.code).name}"
    except KeyError:
        return f.code


def annotation(f: Finding, loc: Locator, also: list[Finding] | None = None) -> str:
    rel = loc.file_for(f.location.path or ".")
    pointed = rel is not None and rel == f.location.path
    props = [f"file={escape_property(loc.repo_path(rel if rel is not None else (f.location.path or '.')))}",
             f"line={f.location.line if pointed and f.location.line else 1}"]
    if pointed and rel is not None and f.location.line and f.location.column:
        python = (rel or "").endswith(".py")
        col = loc.code_point_column(rel, f.location.line, f.location.column) if python else f.location.column
        props.append(f"col={col}")
        if f.location.end_line and f.location.end_column:
            end = (loc.code_point_column(rel, f.location.end_line, f.location.end_column) if python
                   else f.location.end_column)
            props += [f"endLine={f.location.end_line}", f"endColumn={end}"]
    props.append(f"title={escape_property(_title(f))}")
    text = sentence(f.message) + (f" Fix: {f.fix}" if f.fix else "")
    if also:
        lines = ", ".join(str(g.location.line) for g in also[:20] if g.location.line)
        more = f" and {len(also) - 20} more" if len(also) > 20 else ""
        text = f"{f.code} x{len(also) + 1} in this file (also at lines {lines}{more}). " + text
    if f.scope.value != "main":
        text += f" (scope: {f.scope.value})"
    return f"::{COMMANDS[f.severity.value]} {','.join(props)}::{escape_data(text)}"


def grouped(findings: list[Finding], loc: Locator) -> tuple[list[str], int]:
    """(annotations within GitHub's limit of :data:`PER_KIND` per kind, the number of findings they leave out).

    Most severe first (the findings come sorted so). When a kind's findings fit the limit each gets its own
    annotation; when they do not, findings of one rule in one file share one annotation at the first of them
    ("API101 x7 in train.py, lines 9, 12, 30"), the groups holding main-path findings before the others, and
    the groups past the limit are counted, not written."""
    out: list[str] = []
    left_out = 0
    for severity in ("blocker", "degrades", "info"):
        kind = [f for f in findings if f.severity.value == severity]
        if len(kind) <= PER_KIND:
            out += [annotation(f, loc) for f in kind]
            continue
        groups: dict[tuple[str, str], list[Finding]] = {}
        for f in kind:
            groups.setdefault((f.code, f.location.path or "."), []).append(f)
        ordered = sorted(groups.values(), key=lambda g: (all(f.scope.value != "main" for f in g), -len(g)))
        for group in ordered[:PER_KIND]:
            out.append(annotation(group[0], loc, also=group[1:]))
        left_out += sum(len(g) for g in ordered[PER_KIND:])
    return out, left_out


def job_summary(results: list[ScanResult]) -> str:
    """The Markdown written to ``$GITHUB_STEP_SUMMARY``: the scan's Markdown report (:mod:`.md`), cut to
    GitHub's per-step limit with a line that says so."""
    from mpsready.scan.formats.md import MarkdownFormat

    text = MarkdownFormat().render_all(results)
    data = text.encode("utf-8")
    if len(data) > SUMMARY_BYTES:
        note = "\n\n*(cut at GitHub's 1 MiB step-summary limit: run `mpsready scan --format md` for the whole report)*\n"
        text = data[: SUMMARY_BYTES - len(note.encode())].decode("utf-8", errors="ignore") + note
    return text


def write_job_summary(results: list[ScanResult], path: str) -> None:
    """Append :func:`job_summary` to the file GitHub names in ``$GITHUB_STEP_SUMMARY`` (appending is GitHub's
    convention: earlier steps' summaries stay). A summary that cannot be written is a warning on stderr,
    never a failure of the gate."""
    import sys

    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(job_summary(results))
    except OSError as exc:
        print(f"mpsready scan: cannot write the job summary to {visible(path)}: {exc.strerror or exc}", file=sys.stderr)


class GithubFormat(ScanFormat):
    name = "github"

    def render(self, result: ScanResult) -> str:
        loc = Locator(result.root)
        lines, left_out = grouped(result.findings, loc)
        c = result.counts()
        tail = (f"; {left_out} more finding(s) not annotated (GitHub shows {PER_KIND} annotations of each kind per "
                "step): see the job summary or --format sarif") if left_out else ""
        lines.append(f"mpsready scan {visible(loc.prefix or '.')}: {c['blocker']} blocker, {c['degrades']} degrades, "
                     f"{c['info']} info; static outlook (predicted): {result.outlook.value}{tail}")
        return "\n".join(lines) + "\n"
