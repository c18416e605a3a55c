"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding.

A step that runs ``mpsready scan . --format github`` makes each finding appear on its file and line in
the pull request, without uploading SARIF. The syntax and escaping follow GitHub's "Workflow commands
for GitHub Actions" page: ``::error file=F,line=L,col=C,endLine=E,endColumn=EC,title=T::MESSAGE``; in the
message ``%``, CR and LF are percent-encoded, in property values also ``:`` and ``,``.

Paths are relative to the repository root (found as for SARIF, :mod:`.locate`), which is the
workspace a checkout step leaves. Severity maps blocker -> error, degrades -> warning, info -> notice.
The last line is a plain summary with the static outlook.
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


def annotation(f: Finding, loc: Locator) -> str:
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
    if f.scope.value != "main":
        text += f" (scope: {f.scope.value})"
    return f"::{COMMANDS[f.severity.value]} {','.join(props)}::{escape_data(text)}"


class GithubFormat(ScanFormat):
    name = "github"

    def render(self, result: ScanResult) -> str:
        loc = Locator(result.root)
        lines = [annotation(f, loc) for f in result.findings]
        c = result.counts()
        lines.append(f"mpsready scan {visible(loc.prefix or '.')}: {c['blocker']} blocker, {c['degrades']} degrades, "
                     f"{c['info']} info; static outlook (predicted): {result.outlook.value}")
        return "\n".join(lines) + "\n"
