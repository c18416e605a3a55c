"""JSON output: the ``mpsready.scan`` schema, version 1.

Envelope (``schema``, ``mpsready``, ``created``) plus::

    basis        "predicted" (a static scan observes nothing on a device)
    root         the scanned path
    outlook      {"verdict": runs_on_mac | mac_for_dev | stay_on_cuda, "title", "limiting": [finding refs],
                  "flags": ["--device mps", ...]  the exact flags / config values the Mac run needs,
                  "commands": ["python train.py --device mps"]  the command line of each script those flags belong to,
                  "optional": [{"path", "line", "code", "why"}]  what optional parts (extras, guarded imports) need,
                  "not_verified": [{"path", "line", "code", "why"}]  limits whose reach by calls is not settled,
                  "edits": [{"path", "line", "code", "kind": edit | wire | swap, "what", "migrate"}],
                  "complete": bool, "incomplete": [paths of main-path files that could not be read or parsed],
                  "excluded": ["PATH (excluded by .gitignore | exclude)"]  what the walk left out (at most 50):
                  untracked files a .gitignore ignores and --exclude's paths; the outlook covers the rest,
                  "secondary": [{"part", "outlook", "flags", "edits"}]  parts off the main path that would need
                  something on a Mac (a folder or a root script no entry runs); they never lower "verdict",
                  "selection": {"answer": mps | cpu | cuda | not_found, "entries", "where", "other_entries",
                  "secondary_cpu"}  question 1 of the selection-first verdict (scan/model/selection.py; {} when the
                  pass did not run), "decided_by": the one line saying which question decided the verdict}
    summary      {"files", "lines", "seconds", "blocker", "degrades", "info", "suppressed", "cache_hits"}
    effort       {"auto_fixable", "manual", "kept", "files_touched", "basis": "estimate"}: the code findings
                 `mpsready migrate` rewrites, those left to a person, those that need no change, and the files it
                 would touch (migrate's plan prints the same four, "basis": "plan"; the report prints these)
    subprojects  [{"path", "outlook", "flags", "edits"}]  (only for a collection of projects)
    dependencies [{"name", "specifier", "path", "line", "optional", "group", "ecosystem", "left_out_on_mac"}]
                 (``left_out_on_mac``: the lock file's marker that keeps a Mac install from installing the
                 package, which is then not judged; ``null`` otherwise)
    findings     [Finding.to_dict()]  (code, severity, basis, message, location, scope, fix, source, evidence)

A limiting-finding ref is ``{"code", "path", "line"}``; refs are capped at 50 (``limiting_total`` counts all).
"""

from __future__ import annotations

import json

from mpsready.escape import json_safe
from mpsready.rules import fixability
from mpsready.schema import envelope
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.interface import ScanFormat
from mpsready.scan.model.selection import headline

SCHEMA_NAME = "mpsready.scan"
SCHEMA_VERSION = 1
MAX_LIMITING = 50


def to_document(result: ScanResult) -> dict:
    counts = result.counts()
    return envelope(
        SCHEMA_NAME, SCHEMA_VERSION,
        basis="predicted",
        root=result.root,
        outlook={
            "verdict": result.outlook.value,
            "title": result.outlook.title,
            "limiting": [{"code": f.code, "path": f.location.path, "line": f.location.line}
                         for f in result.limiting[:MAX_LIMITING]],
            "limiting_total": len(result.limiting),
            "flags": list(result.flags),
            "commands": list(result.commands),
            "optional": list(result.optional),
            "not_verified": list(getattr(result, "not_verified", [])),  # round 10: reach by calls unsettled
            "edits": [e.to_dict() for e in result.edits],
            "complete": not result.incomplete,
            "incomplete": list(result.incomplete),
            "excluded": list(getattr(result, "excluded", [])),
            "secondary": [{"part": s.part, "outlook": s.outlook.value, "flags": list(s.flags),
                           "edits": [e.to_dict() for e in s.edits]} for s in result.secondary],
            # issue 32, round 6: which question decided the verdict (model/selection.py)
            "selection": dict(getattr(result, "selection", {}) or {}),
            "decided_by": headline(getattr(result, "selection", {}) or {}, result.outlook.value, len(result.limiting)),
        },
        summary={"files": result.files_scanned, "lines": result.lines_scanned, "seconds": round(result.seconds, 3),
                 **counts, "suppressed": result.suppressed, "cache_hits": result.cache_hits},
        effort={**fixability().effort(result.findings, result.torch_floor), "basis": "estimate"},
        subprojects=[{"path": s.path, "outlook": s.outlook.value, "flags": list(s.flags),
                      "edits": [e.to_dict() for e in s.edits]} for s in result.subprojects],
        dependencies=[{"name": d.name, "specifier": d.specifier, "path": d.path, "line": d.line, "optional": d.optional,
                       "group": d.group, "ecosystem": d.ecosystem, "left_out_on_mac": d.left_out_on_mac}
                      for d in result.dependencies],
        findings=[f.to_dict() for f in result.findings],
    )


class JsonFormat(ScanFormat):
    name = "json"

    def render(self, result: ScanResult) -> str:
        return json.dumps(json_safe(to_document(result)), indent=2) + "\n"

    def render_many(self, results: list[ScanResult]) -> str:
        """JSON Lines: one scan's document a line, in the order the paths were given."""
        return "".join(json.dumps(json_safe(to_document(r))) + "\n" for r in results)
