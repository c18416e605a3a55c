"""SARIF 2.1.0 output, so GitHub code scanning (and other SARIF viewers) show findings inline.

Severity maps to SARIF ``level``: blocker -> error, degrades -> warning, info -> note. Every rule
that appears is described in ``tool.driver.rules`` from the rule registry. Properties carry the
mpsready scope, basis and the run's outlook.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from mpsready import __version__
from mpsready import rules as registry
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.interface import ScanFormat

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"blocker": "error", "degrades": "warning", "info": "note"}


def to_sarif(result: ScanResult) -> dict:
    used = sorted({f.code for f in result.findings})
    rules = []
    for code in used:
        try:
            r = registry.get(code)
        except KeyError:
            continue
        rules.append({
            "id": r.code, "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.why},
            "help": {"text": f"{r.fix}\n\nSource: {r.source}",
                     "markdown": f"**Fix.** {r.fix}\n\n**Example.**\n\n```\n{r.example}\n```\n\n**Source.** {r.source}"},
            "defaultConfiguration": {"level": LEVELS[r.severity.value]},
            "properties": {"tags": ["mps", r.prefix]},
        })
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in result.findings:
        loc = f.location
        # SARIF 2.1.0 §3.4.3: `uri` is an RFC 3986 URI reference, so a space, '|', '#', '%', a newline or a
        # non-ASCII letter in a file name is percent-encoded (UTF-8); '/' stays the path separator
        physical: dict = {"artifactLocation": {"uri": quote(loc.path, safe="/") if loc.path else ".",
                                               "uriBaseId": "SRCROOT"}}
        if loc.line:
            region = {"startLine": loc.line}
            if loc.column:
                region["startColumn"] = loc.column
            physical["region"] = region
        res = {
            "ruleId": f.code,
            "level": LEVELS[f.severity.value],
            "message": {"text": f.message + (f" Fix: {f.fix}" if f.fix else "")},
            "locations": [{"physicalLocation": physical}],
            "properties": {"scope": f.scope.value, "basis": f.basis.value, "severity": f.severity.value,
                           **({"cell": f.evidence["cell"]} if "cell" in f.evidence else {})},
        }
        if f.code in index:
            res["ruleIndex"] = index[f.code]
        results.append(res)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mpsready", "version": __version__, "semanticVersion": __version__,
                                "informationUri": "https://github.com/mpsready/mpsready", "rules": rules}},
            "originalUriBaseIds": {"SRCROOT": {"description": {"text": "the scanned project root"}}},
            "results": results,
            "properties": {"outlook": result.outlook.value, "basis": "predicted"},
        }],
    }


class SarifFormat(ScanFormat):
    name = "sarif"

    def render(self, result: ScanResult) -> str:
        return json.dumps(to_sarif(result), indent=2) + "\n"
