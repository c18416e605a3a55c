"""Assemble a :class:`Report` from evidence: checklist, outlook, verdict. No rendering here."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding, sort_findings
from mpsready.report.checklist import CheckItem, build_checklist
from mpsready.report.evidence import Evidence
from mpsready.report.outlook import Outlook, build_outlook
from mpsready.report.verdict import VerdictResult, decide
from mpsready.report.versus import Versus, build_versus
from mpsready.schema import envelope

SCHEMA_NAME = "mpsready.report"
SCHEMA_VERSION = 1

# Finding code prefix -> the kind shown in the findings-by-kind summary.
KINDS = {"DEP": "dependencies", "EXT": "extensions", "API": "CUDA-only code", "DTY": "dtypes",
         "OPS": "operators", "NUM": "numerics", "PRF": "time and memory", "ENV": "environment",
         "INP": "unreadable input"}


@dataclass
class Report:
    evidence: Evidence
    checklist: list[CheckItem]
    outlook: Outlook
    verdict: VerdictResult
    project: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)  # which files each stage came from
    versus: Versus | None = None  # predicted vs observed, with --mac-results

    def all_findings(self) -> list[Finding]:
        ev = self.evidence
        out: list[Finding] = []
        for part in (ev.scan, ev.env, ev.trace, ev.compare, ev.run):
            if part is not None:
                out += part.findings
        for r in ev.records:
            out += r.findings
        out += self.outlook.findings
        return sort_findings(out)

    def findings_by_kind(self) -> dict[str, Counter]:
        """kind -> Counter(severity) over every finding, kinds in registry order."""
        out: dict[str, Counter] = {}
        for f in self.all_findings():
            kind = KINDS.get(f.code.rstrip("0123456789"), "other")
            out.setdefault(kind, Counter())[f.severity.value] += 1
        order = list(KINDS.values()) + ["other"]
        return dict(sorted(out.items(), key=lambda kv: order.index(kv[0])))

    def to_dict(self) -> dict[str, Any]:
        return envelope(
            SCHEMA_NAME, SCHEMA_VERSION,
            basis=self.verdict.basis.value,
            project=self.project,
            inputs=self.inputs,
            stages_present=self.evidence.stages_present(),
            stages_skipped=self.evidence.skipped,
            verdict=self.verdict.to_dict(),
            checklist=[c.to_dict() for c in self.checklist],
            outlook=self.outlook.to_dict(),
            findings=[f.to_dict() for f in self.all_findings()],
            predicted_vs_observed=self.versus.to_dict() if self.versus else None,
        )


def build_report(ev: Evidence, situation: str | None = None, job_steps: int | None = None,
                 mac_memory_gb: float | None = None, time_budget_hours: float | None = None,
                 project: str | None = None) -> Report:
    items = build_checklist(ev)
    outlook = build_outlook(ev, job_steps, mac_memory_gb, time_budget_hours)
    verdict = decide(ev, items, outlook, situation, job_steps)
    inputs = {"scan": ev.scan.source if ev.scan else None, "env": ev.env.source if ev.env else None,
              "trace": ev.trace.source if ev.trace else None, "records": [r.source for r in ev.records],
              "compare": ev.compare.source if ev.compare else None, "run": ev.run.source if ev.run else None,
              "tests": ev.tests.source if ev.tests else None, "mac_results": ev.mac.source if ev.mac else None}
    return Report(ev, items, outlook, verdict, project or (ev.scan.root if ev.scan else None), inputs,
                  build_versus(ev))
