"""Adapter for ``mpsready run --format json`` (schema ``mpsready.run`` v1): an emulated Mac run.

The user's program ran on this machine with an emulated MPS device for a target PyTorch and macOS
(:mod:`mpsready.emulate`). Its failures and fallbacks are **predicted** (basis ``emulated``, a kind of
predicted evidence): nothing ran on a Mac. Report items 4 (the step on MPS) and 6 (CPU fallback) read it.
Item 5 (results match) reads its ``wrong_results``: a call that matches a known silent wrong-result advisory
cannot let that item pass. Only the failures the emulated device raised or marked (``mac`` true) are predicted Mac failures; the exception
that ended an ``inconclusive`` run (``program_error``: a missing module or file, the program's own bug) leaves
item 4 not checked, never failed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding
from mpsready.report.evidence._util import (
    EvidenceError,
    as_float,
    as_int,
    findings_of,
    load_json,
)


@dataclass(frozen=True)
class RunFailure:
    kind: str
    op: str | None
    dtype: str | None
    message: str
    where: str | None
    fixed_in: str | None

    def line(self) -> str:
        """``emulated: aten::_ctc_loss.Tensor (float32) at train.py:12: NotImplementedError ...; fixed in 2.14.1``."""
        s = "emulated Mac run: " + (self.op or self.kind)
        if self.dtype:
            s += f" ({self.dtype})"
        if self.where:
            s += f" at {self.where}"
        s += f": {self.message[:160]}"
        if self.op:
            s += f"; fixed in PyTorch {self.fixed_in}" if self.fixed_in else "; no fix in any release known"
        return s


@dataclass(frozen=True)
class RunProgramError:
    """The exception that ended an ``inconclusive`` run: the emulated Mac did not raise it (a module or file this
    environment lacks, the program's own error, a non-zero exit). Not a Mac failure, not a prediction."""

    kind: str  # environment | program_error | exit
    exception: str
    message: str
    where: str | None
    missing: str | None

    def line(self) -> str:
        """``emulated Mac run stopped at train.py:9 on ModuleNotFoundError: ...; not a Mac failure (...)``."""
        s = "emulated Mac run stopped" + (f" at {self.where}" if self.where else "")
        s += f" on {self.exception}: {self.message[:160]}; not a Mac failure ("
        if self.kind == "environment" and self.missing:
            s += f"this environment lacks {self.missing}"
        elif self.kind == "exit":
            s += "the program exited on its own"
        else:
            s += "the program's own error, not raised by the emulated MPS device"
        return s + "): nothing is known about the Mac beyond that point"


@dataclass(frozen=True)
class RunFallback:
    op: str
    calls: int
    share: float | None
    where: str | None
    fixed_in: str | None

    def line(self) -> str:
        s = f"emulated Mac run: {self.op} ran on the CPU {self.calls} time(s)"
        if self.share is not None:
            s += f", {self.share:.1%} of the run's time here"
        if self.where:
            s += f" (first at {self.where})"
        return s


@dataclass(frozen=True)
class RunWrongResult:
    """A predicted silent wrong result of the emulated run (an advisory of ``mps_wrong_results.yaml``)."""

    id: str
    op: str
    dtype: str | None
    summary: str
    where: str | None
    fixed_in: str | None
    report: str

    def line(self) -> str:
        """``emulated Mac run: aten::addcdiv_ (float32) at train.py:6 is predicted wrong: ...; fixed in ...; URL``."""
        s = f"emulated Mac run: {self.op}" + (f" ({self.dtype})" if self.dtype else "")
        s += (f" at {self.where}" if self.where else "") + f" is predicted wrong: {self.summary[:160]}"
        s += f"; fixed in PyTorch {self.fixed_in}" if self.fixed_in else "; no fixed release known"
        return s + f" (advisory {self.id}, {self.report})"


@dataclass
class RunEvidence:
    source: str | None
    outcome: str  # completed | unverified | failed | stopped | inconclusive
    torch_target: str | None
    macos_target: str | None
    fallback_enabled: bool | None
    failures: list[RunFailure]
    fallbacks: list[RunFallback]
    judged_ops: int
    steps: int | None
    program_error: RunProgramError | None = None
    wrong_results: list[RunWrongResult] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    # the run's own findings (NUM301 first NaN/Inf, PRF301 dynamic shapes: mpsready.numerics), basis predicted
    findings: list[Finding] = field(default_factory=list)

    @property
    def program(self) -> str:
        """The program's command line as given to ``mpsready run`` (``python train.py --epochs 1``)."""
        prog = self.raw.get("program") or {}
        argv = [str(a) for a in prog.get("argv") or []]
        if prog.get("kind") == "module":
            return " ".join(["python", "-m", str(prog.get("target")), *argv[1:]])
        return " ".join(["python", os.path.basename(argv[0]), *argv[1:]]) if argv else "PROGRAM"

    @property
    def mps_used(self) -> bool:
        """Whether a tensor reached the emulated MPS device (the document's ``mps_used``; older documents: an
        operator was judged)."""
        used = self.raw.get("mps_used")
        return bool(used) if isinstance(used, bool) else self.judged_ops > 0

    @property
    def fallback_share(self) -> float | None:
        shares = [f.share for f in self.fallbacks if f.share is not None]
        return min(1.0, sum(shares)) if shares else None


def _where(loc: Any) -> str | None:
    if isinstance(loc, dict) and loc.get("path"):
        return f"{loc['path']}:{loc['line']}" if loc.get("line") else str(loc["path"])
    return None


def from_doc(doc: dict[str, Any], source: str | None = None) -> RunEvidence:
    from mpsready.run.document import is_mac_failure, load_document

    try:
        load_document(doc)
    except ValueError as exc:
        raise EvidenceError(f"{source or 'run output'}: {exc}") from None
    tgt = doc.get("target") or {}
    entries = [f for f in doc.get("failures") or [] if isinstance(f, dict)]
    failures = [RunFailure(kind=str(f.get("kind") or "error"), op=f.get("op"), dtype=f.get("dtype"),
                           message=str(f.get("message") or ""), where=_where(f.get("location")),
                           fixed_in=f.get("fixed_in"))
                for f in entries if is_mac_failure(f)]
    pe = doc.get("program_error")
    if not isinstance(pe, dict):  # documents before program_error: a non-Mac kind among the failures
        pe = next((f for f in entries if not is_mac_failure(f)), None)
    program_error = None if pe is None else RunProgramError(
        kind=str(pe.get("kind") or "program_error"), exception=str(pe.get("exception") or "error"),
        message=str(pe.get("message") or ""), where=_where(pe.get("location")), missing=pe.get("missing"))
    fallbacks = [RunFallback(op=str(f.get("op")), calls=as_int(f.get("calls")) or 0, share=as_float(f.get("share")),
                             where=_where(f.get("location")), fixed_in=f.get("fixed_in"))
                 for f in doc.get("fallbacks") or [] if isinstance(f, dict) and f.get("op")]
    wrong = [RunWrongResult(id=str(w.get("id")), op=str(w.get("op")), dtype=w.get("dtype"),
                            summary=str(w.get("summary") or ""), where=_where(w.get("location")),
                            fixed_in=w.get("fixed_in"), report=str(w.get("report") or ""))
             for w in doc.get("wrong_results") or [] if isinstance(w, dict) and w.get("id")]
    return RunEvidence(source=source, outcome=doc["outcome"], torch_target=tgt.get("torch"),
                       macos_target=tgt.get("macos"), fallback_enabled=tgt.get("fallback"), failures=failures,
                       fallbacks=fallbacks, judged_ops=len(doc.get("predictions") or []),
                       steps=as_int(doc.get("steps")), program_error=program_error,
                       wrong_results=wrong, raw=doc, findings=findings_of(doc))


def load(path: str | os.PathLike[str]) -> RunEvidence:
    from mpsready.run.document import SCHEMA

    return from_doc(load_json(path, SCHEMA), source=str(path))
