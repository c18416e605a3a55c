"""Adapter for ``mpsready compare --format json`` (schema ``mpsready.compare`` v1).

A comparison is an observation about two run records (devices ``a`` and ``b``, and an
optional high-precision reference): per-tensor errors against the study's tolerances,
the first divergence, the losses side by side. Whether it speaks about MPS depends on
the devices of the records compared.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding
from mpsready.report.evidence._util import (as_bool, as_float, as_int, check_schema, dig, findings_of,
                                            first_str, load_json)

SCHEMA = "mpsready.compare"


@dataclass(frozen=True)
class CompareRow:
    """One compared tensor. Errors are absolute/relative maxima over elements."""

    name: str
    ok: bool | None
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    kind: str | None = None
    order: int | None = None
    step: int | None = None


@dataclass
class CompareEvidence:
    source: str | None
    device_a: str | None
    device_b: str | None
    device_ref: str | None
    passed: bool | None  # everything within tolerance
    compared: int | None
    failed: int | None
    unmatched: int | None
    first_divergence: str | None
    rng_dependent: bool | None
    rows: list[CompareRow]
    losses_a: list[float]
    losses_b: list[float]
    findings: list[Finding]
    plots: dict[str, str] = field(default_factory=dict)  # name -> PNG path, when the stage wrote them
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    label_a: str | None = None  # the runs' labels (compare/record --label: "cpu-eager (cpu)"), where given
    label_b: str | None = None

    def involves(self, backend: str) -> bool:
        return any((d or "").split(":")[0] == backend for d in (self.device_a, self.device_b))

    def devices(self) -> str:
        """``"cuda vs mps"``, or the runs' labels where they have them (``"cpu-eager (cpu) vs mps-fp16 (mps)"``)."""
        return f"{self.label_a or self.device_a or '?'} vs {self.label_b or self.device_b or '?'}"


def _rows(doc: dict[str, Any]) -> list[CompareRow]:
    raw = doc.get("tensors") or doc.get("rows") or dig(doc, "results.tensors") or []
    out = []
    for i, r in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(r, dict):
            continue
        name = first_str([r.get("key"), r.get("name"), r.get("tensor")])
        if not name:
            continue
        m = r["metrics"] if isinstance(r.get("metrics"), dict) else r
        ok = as_bool(r.get("ok", r.get("passed", r.get("within_tolerance", r.get("allclose")))))
        if ok is None and isinstance(r.get("status"), str):
            # "incomparable" (shapes differ) counts as not within tolerance.
            ok = r["status"] in ("ok", "pass", "passed", "within")
        out.append(CompareRow(
            name=name, ok=ok,
            max_abs=as_float(m.get("max_abs", m.get("max_abs_error"))),
            max_rel=as_float(m.get("max_rel", m.get("max_rel_error"))),
            cosine=as_float(m.get("cosine", m.get("cosine_similarity"))),
            kind=first_str([r.get("kind")]), order=as_int(r.get("order", i)), step=as_int(r.get("step")),
        ))
    return out


def _losses(doc: dict[str, Any]) -> tuple[list[float], list[float]]:
    raw = doc.get("losses") or doc.get("steps") or dig(doc, "loss.steps") or []
    a, b = [], []
    if isinstance(raw, list):
        for s in raw:
            if isinstance(s, dict):
                la, lb = as_float(s.get("a", s.get("loss_a"))), as_float(s.get("b", s.get("loss_b")))
                if la is not None and lb is not None:
                    a.append(la)
                    b.append(lb)
    elif isinstance(raw, dict):
        a = [float(x) for x in raw.get("a") or [] if as_float(x) is not None]
        b = [float(x) for x in raw.get("b") or [] if as_float(x) is not None]
    return a, b


def _device(doc: dict[str, Any], side: str) -> str | None:
    v = dig(doc, f"devices.{side}", f"runs.{side}.device", f"{side}.device", f"records.{side}.device",
            f"{side}_device")
    return v if isinstance(v, str) else None


def from_doc(doc: dict[str, Any], source: str | None = None) -> CompareEvidence:
    check_schema(doc, SCHEMA, source or "compare output")
    rows = _rows(doc)
    passed = as_bool(dig(doc, "ok", "summary.ok"))
    if passed is None:
        passed = as_bool(dig(doc, "summary.passed", "passed", "summary.within_tolerance"))
    failed = as_int(dig(doc, "summary.failed", "summary.failing", "summary.out_of_tolerance"))
    if failed is None and rows:
        failed = sum(1 for r in rows if r.ok is False)
    if passed is None and failed is not None and (rows or as_int(dig(doc, "summary.compared"))):
        passed = failed == 0
    fd = dig(doc, "first_divergence.forward.key", "first_divergence.backward.key", "first_divergence.param.key",
             "first_divergence.key", "first_divergence.name", "summary.first_divergence")
    if fd is None and isinstance(doc.get("first_divergence"), str):
        fd = doc["first_divergence"]
    plots = doc["plots"] if isinstance(doc.get("plots"), dict) else {}
    la, lb = _losses(doc)
    return CompareEvidence(
        source=source,
        device_a=_device(doc, "a"), device_b=_device(doc, "b"), device_ref=_device(doc, "reference"),
        passed=passed,
        compared=as_int(dig(doc, "summary.compared", "summary.tensors")) or (len(rows) or None),
        failed=failed,
        unmatched=as_int(dig(doc, "summary.unmatched")),
        first_divergence=fd if isinstance(fd, str) else None,
        rng_dependent=as_bool(dig(doc, "summary.rng_dependent", "rng.dependent", "rng_dependent")),
        rows=rows, losses_a=la, losses_b=lb, findings=findings_of(doc),
        plots={k: v for k, v in plots.items() if isinstance(v, str)},
        raw=doc, label_a=_label(doc, "a"), label_b=_label(doc, "b"),
    )


def _label(doc: dict[str, Any], side: str) -> str | None:
    """A run's label when it differs from its bare device (``runs.a.label``, compare's JSON)."""
    v = dig(doc, f"runs.{side}.label")
    return v if isinstance(v, str) and v and v != _device(doc, side) else None


def load(path: str | os.PathLike[str]) -> CompareEvidence:
    return from_doc(load_json(path, SCHEMA), source=str(path))
