"""Adapter for ``mpsready scan --format json`` (schema ``mpsready.scan`` v1).

Reads ``outlook`` (the best verdict the static evidence allows), ``findings`` and the
counts it may carry. What matters to the report is each CUDA-only component and
whether an alternative or fallback exists for it; a scan finding names an
alternative in ``evidence.alternative`` (dependencies) or ``evidence.fallback``
(extensions with a pure-PyTorch path), or says the component has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding, Scope, Severity, Verdict
from mpsready.report.evidence._util import as_int, check_schema, dig, findings_of, load_json

SCHEMA = "mpsready.scan"

# Finding code prefixes that name a CUDA-only component of the project (checklist items 1 and 2).
DEPENDENCY_PREFIXES = ("DEP",)
EXTENSION_PREFIXES = ("EXT",)
# The scan's "no dependency declaration found" rule (mpsready.scan.rules.deps.NO_DECLARATION).
NO_DECLARATION_CODE = "DEP110"

# Evidence keys a scan finding may use to name the portable alternative of a component.
_ALTERNATIVE_KEYS = ("alternative", "mps_alternative", "replacement", "fallback", "fallback_path")


def alternative_of(f: Finding) -> str | None:
    """The way around a finding: its alternative or fallback, else ``None`` when there is none.

    Follows the scan's convention (``mpsready.scan.outlook.is_hard``): ``evidence.no_alternative``
    marks a component with no known alternative, unless it is ``optional``, has a ``fallback`` or is
    ``guarded``. ``evidence.fallback`` may be ``True`` (a fallback exists, unnamed) or a text; a value
    of ``False``/``None``/``""`` or the text ``"none"`` means none. A finding that names no alternative
    and is not marked ``no_alternative`` has its ``fix`` as the way around (e.g. "move the torch pin to
    a current release").
    """
    found = named_alternative(f)
    if found:
        return found
    ev = f.evidence if isinstance(f.evidence, dict) else {}
    if ev.get("optional"):
        return "optional: the project runs without it"
    if ev.get("guarded"):
        return "guarded: the code skips it when CUDA is absent"
    if ev.get("no_alternative"):
        return None
    return f.fix or None


def named_alternative(f: Finding) -> str | None:
    """The alternative package/API or fallback the finding names itself, else ``None``."""
    for key in _ALTERNATIVE_KEYS:
        value = f.evidence.get(key) if isinstance(f.evidence, dict) else None
        if value is True:
            return "fallback present"
        if isinstance(value, str) and value.strip() and value.strip().lower() not in ("none", "no", "false"):
            return value.strip()
        if isinstance(value, dict):
            name = value.get("name") or value.get("api") or value.get("package")
            if isinstance(name, str) and name:
                return name
        if isinstance(value, list) and value:
            return ", ".join(str(v) for v in value)
    return None


def component_of(f: Finding) -> str:
    """The component a finding is about: the package, the extension, else the file."""
    ev = f.evidence if isinstance(f.evidence, dict) else {}
    for key in ("package", "name", "extension", "module", "kernel"):
        if isinstance(ev.get(key), str) and ev[key]:
            return ev[key]
    where = f"{f.location.path}:{f.location.line}" if f.location.path and f.location.line else str(f.location)
    if isinstance(ev.get("library"), str) and ev["library"]:  # a Triton / CuPy / Numba kernel
        return f"{ev['library']} kernel at {where}"
    return where


@dataclass
class ScanEvidence:
    """What the static audit saw. ``findings`` are all predictions (the scan runs nothing)."""

    source: str | None
    root: str | None
    findings: list[Finding]
    outlook: Verdict | None = None
    files: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def main_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.scope is Scope.MAIN]

    def components(self) -> list[Finding]:
        """CUDA-only dependencies and extensions in the main scope (blockers and degraders)."""
        return [f for f in self.main_findings
                if f.code.startswith(DEPENDENCY_PREFIXES + EXTENSION_PREFIXES)
                and f.severity.rank >= Severity.DEGRADES.rank]

    @property
    def declares_no_dependencies(self) -> bool:
        """True when the scan found no dependency declaration at all (DEP110): item 1 had nothing to check."""
        return any(f.code == NO_DECLARATION_CODE for f in self.findings)

    def blockers(self) -> list[Finding]:
        return [f for f in self.main_findings if f.severity is Severity.BLOCKER]


def from_doc(doc: dict[str, Any], source: str | None = None) -> ScanEvidence:
    check_schema(doc, SCHEMA, source or "scan output")
    outlook = dig(doc, "outlook.verdict", "outlook")
    try:
        outlook_v = Verdict(outlook) if isinstance(outlook, str) else None
    except ValueError:
        outlook_v = None
    return ScanEvidence(
        source=source,
        root=dig(doc, "root", "path", "project.path"),
        findings=findings_of(doc),
        outlook=outlook_v,
        files=as_int(dig(doc, "summary.files", "files_scanned", "stats.files", "summary.files_scanned")),
        raw=doc,
    )


def load(path: str | os.PathLike[str]) -> ScanEvidence:
    """Read a scan JSON file; raises :class:`~mpsready.report.evidence._util.EvidenceError`."""
    return from_doc(load_json(path, SCHEMA), source=str(path))
