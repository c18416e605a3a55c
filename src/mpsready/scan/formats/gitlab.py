"""GitLab code quality report: the JSON array GitLab reads from ``artifacts: reports: codequality``.

Each finding is ``{"description", "check_name", "fingerprint", "severity", "location": {"path", "lines":
{"begin"}}}``, the fields GitLab's "Code Quality" documentation (CI/CD testing, "Implement a custom tool")
requires. ``fingerprint`` must be unique per finding: it is the SARIF fingerprint
(:mod:`.fingerprint`), so one finding has one identity in SARIF, GitLab and the baseline. Severities map
blocker -> ``blocker``, degrades -> ``major``, info -> ``info`` (GitLab's scale is info, minor, major,
critical, blocker). Paths are relative to the repository root, as GitLab's merge request widget expects.
"""

from __future__ import annotations

import json

from mpsready import rules as registry
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.fingerprint import Placer
from mpsready.scan.formats.interface import ScanFormat

SEVERITIES = {"blocker": "blocker", "degrades": "major", "info": "info"}


def issues(result: ScanResult) -> list[dict]:
    placer = Placer(result.root)
    out = []
    for f in result.findings:
        repo_rel, region, fp = placer.place(f)
        try:
            name = registry.get(f.code).name
        except KeyError:
            name = f.code
        text = " ".join(f.message.split()) + (f" Fix: {' '.join(f.fix.split())}" if f.fix else "")
        out.append({"type": "issue", "description": f"{f.code} {text}", "check_name": f"{f.code} {name}",
                    "categories": ["Compatibility"], "fingerprint": fp.replace(":", "-"),
                    "severity": SEVERITIES[f.severity.value],
                    "location": {"path": repo_rel, "lines": {"begin": region.get("startLine", 1)}}})
    return out


class GitlabFormat(ScanFormat):
    name = "gitlab"

    def render(self, result: ScanResult) -> str:
        return json.dumps(issues(result), indent=2) + "\n"

    def render_many(self, results: list[ScanResult]) -> str:
        return json.dumps([i for r in results for i in issues(r)], indent=2) + "\n"
