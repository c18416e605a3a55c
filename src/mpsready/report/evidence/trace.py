"""Adapter for ``mpsready trace --format json`` (schema ``mpsready.trace`` v1).

A trace runs the step on the machine at hand (CPU or CUDA) and *predicts* what MPS
would do for a target PyTorch and macOS version: every operator is classified
``runs`` / ``error`` / ``fallback`` / ``unknown``, and problems carry ``fixed_in``
(the first PyTorch release with the kernel, or ``None``). Everything here is a
prediction, whatever device the trace ran on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding
from mpsready.report.evidence._util import (as_float, as_int, check_schema, dig, findings_of, first_str,
                                            load_json)

SCHEMA = "mpsready.trace"

# Status words other versions of the trace may use, mapped to the four the report knows.
_STATUS = {
    "runs": "runs", "supported": "runs", "ok": "runs", "kernel": "runs", "composite": "runs",
    "error": "error", "missing": "error", "unsupported": "error", "fails": "error", "blocker": "error",
    "fallback": "fallback", "cpu_fallback": "fallback", "cpu_fallback_always": "fallback",
    "falls_back": "fallback",
    "host": "runs",  # not a device op (shape/metadata): nothing to run on MPS
    "unknown": "unknown",
}


@dataclass(frozen=True)
class TracedOp:
    """One operator overload the step dispatched, with its predicted MPS status."""

    op: str  # "aten::linalg_eig"
    status: str  # runs | error | fallback | unknown
    calls: int | None = None
    dtypes: tuple[str, ...] = ()
    where: str | None = None  # "model.py:42" (innermost user frame)
    stage: str | None = None
    fixed_in: str | None = None  # first PyTorch release with an MPS kernel, if any
    reason: str | None = None
    problems: tuple[str, ...] = ()  # kinds: missing, always_fallback, guard, sparse, macos, dtype, unknown

    def line(self) -> str:
        """``aten::linalg_eig x3 (float32) at model.py:42 [forward]: error on MPS; fixed in 2.14``."""
        s = self.op
        if self.calls:
            s += f" x{self.calls}"
        if self.dtypes:
            s += f" ({', '.join(self.dtypes)})"
        if self.where:
            s += f" at {self.where}"
        if self.stage:
            s += f" [{self.stage}]"
        s += {"error": ": error on MPS", "fallback": ": falls back to the CPU on MPS",
              "unknown": ": MPS support unknown", "runs": ": runs on MPS"}[self.status]
        if self.status in ("error", "fallback"):
            s += f"; fixed in PyTorch {self.fixed_in}" if self.fixed_in else "; no fix in any release known"
        return s


@dataclass
class TraceEvidence:
    source: str | None
    traced_on: str | None  # where the trace ran: cpu, cuda, "emulated mps" (no Mac), mps only on a Mac
    torch_target: str | None
    macos_target: str | None
    ops: list[TracedOp]
    findings: list[Finding]
    stage_info: dict[str, dict[str, Any]]  # stage -> {"status", "error_type", "error", ...} on the traced device
    fallback_time_share: float | None = None  # predicted share of step time moved to the CPU, 0..1
    step_seconds: float | None = None  # traced step time on traced_on (includes tracing overhead)
    dtype_origins: list[str] = field(default_factory=list)  # "path:line" where unsupported dtypes were made
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def by_status(self, status: str) -> list[TracedOp]:
        return [o for o in self.ops if o.status == status]

    @property
    def failed_stages(self) -> list[str]:
        return [s for s, st in self.stage_info.items() if st.get("status") in ("failed", "crashed")]

    @property
    def stages(self) -> dict[str, str]:
        return {s: st.get("status", "unknown") for s, st in self.stage_info.items()}


def _op_from(d: Any) -> TracedOp | None:
    if not isinstance(d, dict):
        return None
    name = first_str([d.get("op"), d.get("overload"), d.get("name"), d.get("operator")])
    if not name:
        return None
    # The trace writes its runs/error/fallback/unknown judgement as "verdict" ("status" is the
    # support-table status: kernel, missing, ...); older or hand-made documents use "status".
    status_raw = first_str([d.get("verdict"), dig(d, "mps.status", "prediction.status"), d.get("status")]) \
        or "unknown"
    status = _STATUS.get(status_raw.lower(), "unknown")
    dtypes = d.get("dtypes") or []
    if isinstance(dtypes, dict):
        dtypes = list(dtypes)
    where = d.get("where") or d.get("locations") or d.get("location") or d.get("source")
    if isinstance(where, dict):
        path, line = where.get("path") or where.get("file"), where.get("line")
        where = f"{path}:{line}" if path and line else path
    elif isinstance(where, list) and where and isinstance(where[0], dict):
        w = where[0]
        path, line = w.get("path") or w.get("file"), w.get("line")
        where = f"{path}:{line}" if path and line else path
    fixed = dig(d, "fixed_in", "mps.fixed_in", "prediction.fixed_in")
    return TracedOp(
        op=name, status=status, calls=as_int(d.get("calls", d.get("count"))),
        dtypes=tuple(str(x) for x in dtypes if isinstance(x, str)),
        where=where if isinstance(where, str) else None,
        stage=first_str([d.get("stage")] + [s for s in (d.get("stages") or [])[:1]]),
        fixed_in=str(fixed) if fixed is not None else None,
        reason=first_str([d.get("reason"), dig(d, "mps.reason", "prediction.reason")]
                         + [p.get("detail") for p in d.get("problems") or [] if isinstance(p, dict)]),
        problems=tuple(str(p.get("kind")) for p in d.get("problems") or [] if isinstance(p, dict) and p.get("kind")),
    )


def _stages_from(raw: Any) -> dict[str, dict[str, Any]]:
    """stage -> its result dict (at least ``status``)."""
    out: dict[str, dict[str, Any]] = {}
    if isinstance(raw, list):
        for s in raw:
            if isinstance(s, dict) and isinstance(s.get("stage"), str):
                out[s["stage"]] = dict(s, status=str(s.get("status", "unknown")))
    elif isinstance(raw, dict):
        for k, v in raw.items():
            out[k] = dict(v, status=str(v.get("status", "unknown"))) if isinstance(v, dict) else {"status": str(v)}
    return out


def _dtype_origins(events: Any) -> list[str]:
    """The user's lines that made the float64/complex128 tensors (``dtype_events[].origin_frame``)."""
    out: list[str] = []
    for e in events if isinstance(events, list) else []:
        frame = e.get("origin_frame") if isinstance(e, dict) else None
        if isinstance(frame, dict) and frame.get("path") and frame.get("line"):
            where = f"{frame['path']}:{frame['line']}"
            if where not in out:
                out.append(where)
    return out


def _traced_on(doc: dict[str, Any]) -> str | None:
    """The trace device as the report names it: ``emulated mps`` when ``traced_on.emulated`` (or
    ``summary.emulated``) says the emulated MPS device ran the step, so no line reads as a Mac run."""
    device = first_str([dig(doc, "traced_on.device", "device", "traced_on", "summary.device")])
    if dig(doc, "traced_on.emulated") is True or dig(doc, "summary.emulated") is True:
        return f"emulated {device or 'mps'}"
    return device


def from_doc(doc: dict[str, Any], source: str | None = None) -> TraceEvidence:
    check_schema(doc, SCHEMA, source or "trace output")
    ops = [o for o in (_op_from(d) for d in (doc.get("ops") or [])) if o is not None]
    share = as_float(dig(doc, "summary.fallback_time_share", "summary.cpu_fallback_time_share",
                         "summary.fallback_share", "summary.estimated_fallback_time_share"))
    if share is not None and share > 1.0:  # given in percent
        share = share / 100.0
    return TraceEvidence(
        source=source,
        traced_on=_traced_on(doc),
        torch_target=first_str([dig(doc, "target.torch", "torch_target", "target_torch", "summary.torch")]),
        macos_target=first_str([dig(doc, "target.macos", "macos_target", "target_macos", "summary.macos")]),
        ops=ops,
        findings=findings_of(doc),
        stage_info=_stages_from(doc.get("stages")),
        fallback_time_share=share,
        step_seconds=as_float(dig(doc, "summary.traced_step_seconds", "summary.step_seconds", "step_seconds")),
        dtype_origins=_dtype_origins(doc.get("dtype_events")),
        raw=doc,
    )


def load(path: str | os.PathLike[str]) -> TraceEvidence:
    return from_doc(load_json(path, SCHEMA), source=str(path))
