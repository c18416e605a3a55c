"""SARIF 2.1.0 output, shaped for GitHub code scanning (and other SARIF viewers).

What code scanning needs to track an alert from one commit to the next, and how this writer gives it:

- ``partialFingerprints["mpsready/v1"]``: a hash of the rule, the repository-relative file, the text of
  the flagged line (not its number, so an edit above does not reopen the alert), the column and the
  message with its digits masked (what tells two findings of one rule on one line apart), then
  ``:N`` counting exact repeats.
- a region on every result: file-level findings and findings on a directory (``EXT101`` on ``csrc/``,
  ``DEP110`` on ``.``) point at line 1 of a real file (see :mod:`.locate`); columns are converted from
  Python's UTF-8 byte offsets to code points (``columnKind`` ``unicodeCodePoints``); ``endLine`` and
  ``endColumn`` come from the syntax tree when the finding carries them.
- URIs relative to the repository root (uriBaseId ``SRCROOT``, declared in ``originalUriBaseIds``),
  found by reading ``.git`` above the scanned folder, so a scan of ``repo/src`` names ``src/...``.
- every registered rule in ``tool.driver.rules`` with ``helpUri`` into ``docs/rules.md``,
  ``properties.precision`` and ``properties["problem.severity"]``.
- ``invocations``: ``executionSuccessful`` (true: the scan ran to the end; a file it could not read is a
  notification, not a failure), ``workingDirectory``, and every INP finding (a file that could not be
  read or parsed) again as a ``toolExecutionNotifications`` entry.
- findings silenced by ``# mpsready: ignore[CODE]`` as results with ``suppressions`` of kind
  ``inSource``, so code scanning shows them as suppressed instead of reopening them.

Severity maps to SARIF ``level``: blocker -> error, degrades -> warning, info -> note. Sources: OASIS
SARIF 2.1.0 (sarif-schema-2.1.0.json, errata01) and GitHub's "SARIF support for code scanning" page.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from mpsready import __version__
from mpsready import rules as registry
from mpsready.escape import json_safe
from mpsready.findings import Finding
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.interface import ScanFormat
from mpsready.scan.formats.fingerprint import Placer

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"blocker": "error", "degrades": "warning", "info": "note"}
# GitHub code scanning's rule property: error, warning or recommendation.
PROBLEM_SEVERITY = {"blocker": "error", "degrades": "warning", "info": "recommendation"}
FINGERPRINT_KEY = "mpsready/v1"

# precision (GitHub: very-high, high, medium, low) says how often a finding of the rule is a true problem.
# Rules that judge from a pattern of code rather than a name or a declared fact are "medium"; the tool's
# own notes about its input (INP) are "very-high"; the rest name a fact ("high").
_MEDIUM = frozenset({"API104", "API115", "API116", "DTY102", "DEP102", "DEP108"})


def precision(rule: registry.Rule) -> str:
    if rule.code in _MEDIUM:
        return "medium"
    if rule.prefix == "INP":
        return "very-high"
    return "high"


def sentence(text: str) -> str:
    """``text`` ending with a sentence break, so that " Fix: ..." starts a new sentence."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?" else text + "."


def _rule_entry(r: registry.Rule) -> dict:
    return {
        "id": r.code, "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.why},
        "helpUri": registry.doc_url(r),
        "help": {"text": f"{r.fix}\n\nSource: {r.source}",
                 "markdown": f"**Fix.** {r.fix}\n\n**Example.**\n\n```\n{r.example}\n```\n\n**Source.** {r.source}"},
        "defaultConfiguration": {"level": LEVELS[r.severity.value]},
        "properties": {"tags": ["mps", r.prefix], "precision": precision(r),
                       "problem.severity": PROBLEM_SEVERITY[r.severity.value]},
    }


def _uri(path: str) -> str:
    # SARIF 2.1.0 §3.4.3: `uri` is an RFC 3986 URI reference, so a space, '|', '#', '%', a newline or a
    # non-ASCII letter in a file name is percent-encoded (UTF-8); '/' stays the path separator
    # a non-UTF-8 file name (surrogateescape) percent-encodes its own bytes, as RFC 3986 wants
    return quote(path.encode("utf-8", "surrogateescape"), safe="/") if path else "."


def _dir_uri(path: Path) -> str:
    uri = path.as_uri()
    return uri if uri.endswith("/") else uri + "/"


class _Writer:
    def __init__(self, result: ScanResult) -> None:
        self.result = result
        self.placer = Placer(result.root)
        self.loc = self.placer.loc

    def physical(self, f: Finding) -> tuple[dict, str]:
        """(physicalLocation, repository-relative path) of a finding."""
        physical, repo_rel = self.placer.physical(f)
        return {"artifactLocation": {"uri": _uri(repo_rel), "uriBaseId": "SRCROOT"}, **physical}, repo_rel

    def fingerprint(self, f: Finding, repo_rel: str, region: dict) -> str:
        return self.placer.fingerprint(f, repo_rel, region)

    def result_entry(self, f: Finding, index: dict[str, int], suppressed: bool = False) -> dict:
        physical, repo_rel = self.physical(f)
        text = sentence(f.message) + (f" Fix: {f.fix}" if f.fix else "")
        res: dict = {
            "ruleId": f.code,
            "level": LEVELS[f.severity.value],
            "message": {"text": text},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {FINGERPRINT_KEY: self.fingerprint(f, repo_rel, physical["region"])},
            "properties": {"scope": f.scope.value, "basis": f.basis.value, "severity": f.severity.value,
                           **({"cell": f.evidence["cell"]} if "cell" in f.evidence else {})},
        }
        if f.code in index:
            res["ruleIndex"] = index[f.code]
        if suppressed:
            res["suppressions"] = [{"kind": "inSource",
                                    "justification": "# mpsready: ignore[...] comment on the line"}]
        return res

    def notification(self, f: Finding) -> dict:
        physical, _ = self.physical(f)
        return {"level": "warning", "message": {"text": sentence(f.message)},
                "descriptor": {"id": f.code}, "locations": [{"physicalLocation": physical}]}

    def run(self, automation_id: str | None = None) -> dict:
        rules = [_rule_entry(r) for r in registry.all_rules()]
        index = {r["id"]: i for i, r in enumerate(rules)}
        result = self.result
        results = [self.result_entry(f, index) for f in result.findings]
        results += [self.result_entry(f, index, suppressed=True) for f in result.suppressed_findings]
        notes = [self.notification(f) for f in result.findings if f.code.startswith("INP")]
        run: dict = {
            "tool": {"driver": {"name": "mpsready", "version": __version__, "semanticVersion": __version__,
                                "informationUri": registry.PROJECT_URL, "rules": rules}},
            "invocations": [{"executionSuccessful": True,
                             "workingDirectory": {"uri": _dir_uri(Path(os.getcwd()))},
                             "toolExecutionNotifications": notes}],
            "originalUriBaseIds": {"SRCROOT": {
                "uri": _dir_uri(self.loc.base),
                "description": {"text": "the repository root (the folder holding .git)" if self.loc.repo
                                else "the scanned folder (no git repository above it)"}}},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"outlook": result.outlook.value, "basis": "predicted",
                           "scanned": self.loc.prefix or "."},
        }
        if automation_id:
            run["automationDetails"] = {"id": automation_id}
        return run


def to_sarif(result: ScanResult) -> dict:
    """The SARIF log of one scan (one run)."""
    return to_sarif_many([result])


def to_sarif_many(results: list[ScanResult]) -> dict:
    """One SARIF log for several scanned paths: one run each. With more than one, each run has its own
    ``automationDetails.id`` (``mpsready/<repository-relative path>/``), which code scanning reads as the
    run's category, so runs of the same tool are not merged or rejected."""
    writers = [_Writer(r) for r in results]
    many = len(writers) > 1
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [w.run(f"mpsready/{w.loc.prefix or '.'}/" if many else None) for w in writers],
    }


class SarifFormat(ScanFormat):
    name = "sarif"

    def render(self, result: ScanResult) -> str:
        return json.dumps(json_safe(to_sarif(result)), indent=2) + "\n"

    def render_many(self, results: list[ScanResult]) -> str:
        return json.dumps(json_safe(to_sarif_many(results)), indent=2) + "\n"


__all__ = ["SarifFormat", "precision", "sentence", "to_sarif", "to_sarif_many"]
