"""The static outlook: the best verdict the static evidence still allows, and the findings that limit it.

- ``stay_on_cuda``: a main-scope, required blocker with no known alternative and no fallback (a
  CUDA-only package with no Mac alternative, a CUDA kernel or extension without a fallback).
- ``mac_for_dev``: blockers exist, but each has an alternative or fallback, is optional, or sits
  outside the main scope (distributed, tests, docs, examples, vendored).
- ``runs_on_mac``: no blocker.

A collection of subprojects (no declaration at the root, two or more subprojects) is condemned to
``stay_on_cuda`` only when every subproject is; one CUDA-only subproject limits the collection to
``mac_for_dev``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from mpsready.findings import Finding, Scope, Severity, Verdict


def is_hard(f: Finding) -> bool:
    ev = f.evidence or {}
    return (f.severity is Severity.BLOCKER and f.scope is Scope.MAIN and bool(ev.get("no_alternative"))
            and not ev.get("optional") and not ev.get("fallback") and not ev.get("guarded"))


def verdict_of(findings: Iterable[Finding]) -> tuple[Verdict, list[Finding]]:
    findings = list(findings)
    hard = [f for f in findings if is_hard(f)]
    if hard:
        return Verdict.STAY_ON_CUDA, hard
    blockers = [f for f in findings if f.severity is Severity.BLOCKER]
    if blockers:
        return Verdict.MAC_FOR_DEV, blockers
    return Verdict.RUNS_ON_MAC, []


@dataclass(frozen=True)
class Subproject:
    path: str
    outlook: Verdict
    limiting: tuple[Finding, ...]


def collection_outlook(findings: list[Finding], subproject_dirs: list[str]) -> tuple[Verdict, list[Finding], list[Subproject]]:
    """Outlook of a collection: per-subproject verdicts, and the collection's (see module doc)."""
    subs: list[Subproject] = []
    for d in subproject_dirs:
        inside = [f for f in findings if (f.location.path or "").startswith(d + "/")]
        v, lim = verdict_of(inside)
        subs.append(Subproject(d, v, tuple(lim)))
    overall, limiting = verdict_of(findings)
    if overall is Verdict.STAY_ON_CUDA and subs and not all(s.outlook is Verdict.STAY_ON_CUDA for s in subs):
        overall = Verdict.MAC_FOR_DEV
        limiting = [f for f in findings if f.severity is Severity.BLOCKER]
    return overall, limiting, subs
