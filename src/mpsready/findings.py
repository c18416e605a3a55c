"""The findings model shared by every stage.

A :class:`Finding` is one piece of evidence: a rule code, a severity, where it was
found (a file and line, or an operator and a pipeline stage), what it means on MPS,
the fix, and the source of the fact. Every finding carries a :class:`Basis`: a
*prediction* made from shipped data and static analysis, or an *observation* made
on the device it names. The report never mixes the two up.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping


class Severity(str, enum.Enum):
    """How badly a finding affects a move to MPS, ordered ``info < degrades < blocker``."""

    INFO = "info"
    DEGRADES = "degrades"  # runs, but slower, on the CPU, or with different numerics
    BLOCKER = "blocker"  # fails on MPS, or the needed component does not exist there

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        """Parse a user-given severity name; raises ``ValueError`` on anything else."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown severity {text!r}; expected one of: {names}") from None


_SEVERITY_RANK = {Severity.INFO: 0, Severity.DEGRADES: 1, Severity.BLOCKER: 2}


class Basis(str, enum.Enum):
    """Whether a result was predicted from data or observed on a real device."""

    PREDICTED = "predicted"
    OBSERVED = "observed"


class Verdict(str, enum.Enum):
    """The three verdicts of the spec, by machine name, ordered best first."""

    RUNS_ON_MAC = "runs_on_mac"
    MAC_FOR_DEV = "mac_for_dev"
    STAY_ON_CUDA = "stay_on_cuda"

    @property
    def rank(self) -> int:
        """0 for the best verdict, 2 for the worst."""
        return list(Verdict).index(self)

    @staticmethod
    def worst(verdicts: Iterable["Verdict"]) -> "Verdict":
        return max(verdicts, key=lambda v: v.rank, default=Verdict.RUNS_ON_MAC)

    @property
    def title(self) -> str:
        return _VERDICT_TITLES[self]


_VERDICT_TITLES = {
    Verdict.RUNS_ON_MAC: "runs on Mac",
    Verdict.MAC_FOR_DEV: "Mac for development and tests, CUDA for the main work",
    Verdict.STAY_ON_CUDA: "stay on CUDA",
}


class Scope(str, enum.Enum):
    """Which part of a project a finding sits in; findings outside ``main`` are weighted apart."""

    MAIN = "main"
    DISTRIBUTED = "distributed"  # multi-GPU launchers, distributed/ folders
    TESTS = "tests"
    DOCS = "docs"
    EXAMPLES = "examples"
    VENDORED = "vendored"  # third_party/, vendor/, external/


@dataclass(frozen=True)
class Location:
    """Where a finding applies. File positions are 1-based lines and 1-based columns (for Python code,
    ``ast``'s UTF-8 byte offset + 1). ``end_line``/``end_column`` are set when the finding spans a
    syntax-tree node: ``ast``'s ``end_lineno`` and ``end_col_offset`` + 1, the column just past the node."""

    path: str | None = None
    line: int | None = None
    column: int | None = None
    operator: str | None = None  # an aten overload such as "aten::add.Tensor"
    stage: str | None = None  # a pipeline or step stage such as "backward"
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        parts = []
        if self.path:
            pos = self.path
            if self.line:
                pos += f":{self.line}"
                if self.column:
                    pos += f":{self.column}"
            parts.append(pos)
        if self.operator:
            parts.append(self.operator)
        if self.stage:
            parts.append(f"[{self.stage}]")
        return " ".join(parts) or "-"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Location":
        return cls(**{k: d.get(k) for k in ("path", "line", "column", "operator", "stage", "end_line", "end_column")})


@dataclass(frozen=True)
class Finding:
    """One piece of evidence.

    ``code`` is a stable rule code documented in the rule registry
    (:mod:`mpsready.rules`); ``evidence`` holds small JSON-able facts (the matched
    text, the package name, the dtype); ``source`` names where the fact about
    PyTorch or MPS comes from (a PyTorch file or doc and its version, a data
    table, an issue URL).
    """

    code: str
    severity: Severity
    message: str
    location: Location = field(default_factory=Location)
    basis: Basis = Basis.PREDICTED
    fix: str | None = None
    source: str | None = None
    scope: Scope = Scope.MAIN
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "basis": self.basis.value,
            "message": self.message,
            "location": self.location.to_dict(),
            "scope": self.scope.value,
        }
        if self.fix:
            d["fix"] = self.fix
        if self.source:
            d["source"] = self.source
        if self.evidence:
            d["evidence"] = dict(self.evidence)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Finding":
        return cls(
            code=d["code"],
            severity=Severity(d["severity"]),
            message=d["message"],
            location=Location.from_dict(d.get("location") or {}),
            basis=Basis(d.get("basis", "predicted")),
            fix=d.get("fix"),
            source=d.get("source"),
            scope=Scope(d.get("scope", "main")),
            evidence=d.get("evidence") or {},
        )


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first, then by file, line and code, so outputs are stable."""
    return sorted(
        findings,
        key=lambda f: (
            -f.severity.rank,
            f.location.path or "",
            f.location.line or 0,
            f.code,
            f.location.operator or "",
        ),
    )


def at_or_above(findings: Iterable[Finding], threshold: Severity) -> list[Finding]:
    return [f for f in findings if f.severity.rank >= threshold.rank]
