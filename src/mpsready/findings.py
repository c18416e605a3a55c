"""The findings model shared by every stage.

A :class:`Finding` is one piece of evidence: a rule code, a severity, where it was
found (a file and line, or an operator and a pipeline stage), what it means on MPS,
the fix, and the source of the fact. Every finding carries a :class:`Basis`: a
*prediction* made from shipped data and static analysis, or an *observation* made
on the device it names. The report never mixes the two up.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence


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
    def title(self) -> str:  # type: ignore[override]  # shadows str.title on purpose: the verdict's display name
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


# The typed state the static scan's project passes hand on to later passes and to the outlook (mpsready.scan.model,
# mpsready.scan.outlook), in the order the passes set them. Documents still show each under ``evidence`` where the
# pass put it (Finding.output_evidence), so the JSON is what it was when this state lived in ``evidence``.
STATE_FIELDS = ("fallback", "pure_path", "reach", "entries", "behind_flag", "caller_guard", "core_op", "remedy")


@dataclass(frozen=True)
class Finding:
    """One piece of evidence.

    ``code`` is a stable rule code documented in the rule registry
    (:mod:`mpsready.rules`); ``evidence`` holds small JSON-able facts (the matched
    text, the package name, the dtype); ``source`` names where the fact about
    PyTorch or MPS comes from (a PyTorch file or doc and its version, a data
    table, an issue URL).

    The fields after ``evidence`` are the scan's pass state (:data:`STATE_FIELDS`), ``None`` unless a pass set
    them; set them with :meth:`with_state` (never positionally), so ``state_order`` records where each stood
    among the evidence keys: ``fallback`` the fallback that lowered a kernel or extension (``"imported under
    try/except at a.py:3"``); ``pure_path`` the ``file:line`` of a pure-PyTorch path wired in for it; ``reach`` where
    the finding sits relative to
    the project's main path (``off_main_path``, mpsready.scan.model.graph) and ``entries`` the entry scripts
    that reach it; ``behind_flag`` the off-by-default option it sits behind and ``caller_guard`` the function
    whose callers put it there; ``core_op`` the model's core use of a CUDA-only package; ``remedy`` what a Mac
    needs (``{"kind": "flag" | "edit" | "wire" | "swap" | "none", ...}``, mpsready.scan.model.remedy).
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
    fallback: str | None = None
    pure_path: str | None = None
    reach: str | None = None
    entries: Sequence[str] | None = None
    behind_flag: str | None = None
    caller_guard: str | None = None
    core_op: str | None = None
    remedy: Mapping[str, Any] | None = None
    # (state field, number of evidence keys before it) in the order the fields were first set: where
    # output_evidence writes each
    state_order: tuple[tuple[str, int], ...] = ()

    def with_state(self, **state: Any) -> "Finding":
        """A copy with the given :data:`STATE_FIELDS` set (``None`` clears one); raises ``TypeError`` on any
        other name. A field set for the first time is written after the evidence keys there are now."""
        unknown = set(state) - set(STATE_FIELDS)
        if unknown:
            raise TypeError(f"not a state field of Finding: {', '.join(sorted(unknown))}")
        order = list(self.state_order)
        placed = {name for name, _at in order}
        for name, value in state.items():
            if value is None:
                order = [(n, at) for n, at in order if n != name]
                placed.discard(name)
            elif name not in placed:
                order.append((name, len(self.evidence)))
                placed.add(name)
        return dataclasses.replace(self, state_order=tuple(order), **state)

    def with_evidence(self, evidence: Mapping[str, Any]) -> "Finding":
        """A copy whose evidence facts are ``evidence`` (keys kept in place, removed, or added at the end), the
        state fields keeping their places among the facts that remain."""
        old = list(self.evidence)
        kept = [k in evidence for k in old]
        order = tuple((name, sum(kept[:at])) for name, at in self.state_order)
        return dataclasses.replace(self, evidence=evidence, state_order=order)

    def output_evidence(self) -> dict[str, Any]:
        """The evidence as documents show it: the facts, with each state field set (:data:`STATE_FIELDS`) at the
        place it was set (a state field named like a fact takes that fact's place)."""
        if not self.state_order:
            return dict(self.evidence)
        facts = list(self.evidence.items())
        out: dict[str, Any] = {}
        pending = sorted(range(len(self.state_order)), key=lambda i: (self.state_order[i][1], i))
        j = 0
        for i, (key, value) in enumerate(facts + [(None, None)]):
            while j < len(pending) and self.state_order[pending[j]][1] <= i:
                name = self.state_order[pending[j]][0]
                out[name] = getattr(self, name)
                j += 1
            if key is not None and key not in out:
                out[key] = value
        for k in pending[j:]:
            name = self.state_order[k][0]
            out[name] = getattr(self, name)
        return out

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
        evidence = self.output_evidence()
        if evidence:
            d["evidence"] = evidence
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
