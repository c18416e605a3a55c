"""JSON output: envelope ``mpsready.compare`` version 1 (docs/compare.md describes the fields)."""

from __future__ import annotations

import json
from typing import Any

from mpsready.compare.metrics import jsonable
from mpsready.schema import envelope

SCHEMA_NAME = "mpsready.compare"
SCHEMA_VERSION = 1


def _first(t: Any) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"key": t.key, "step": t.step, "kind": t.kind, "module_type": t.module_type, "status": t.status}


def to_document(comp: Any, exit_code: int) -> dict[str, Any]:
    """The comparison as a JSON-able dict; every result carries ``basis``."""
    basis = comp.basis
    runs = {"a": comp.a.to_dict(), "b": comp.b.to_dict()}
    if comp.reference:
        runs["reference"] = comp.reference.to_dict()
    devices = {k: v["device"] for k, v in runs.items()}
    tensors = []
    for t in comp.tensors:
        d = t.to_dict()
        d["basis"] = basis
        tensors.append(d)
    steps = []
    for s in comp.steps:
        d = s.to_dict()
        d["basis"] = basis
        steps.append(d)
    return envelope(
        SCHEMA_NAME, SCHEMA_VERSION,
        basis=basis,
        basis_note=(f"observed: measured on the devices named ({', '.join(f'{k}={v}' for k, v in devices.items())})"
                    if basis == "observed" else "a record was not observed on a device"),
        observed_on={k: v["observed_on"] for k, v in runs.items() if v.get("observed_on")},
        devices=devices,
        runs=runs,
        ok=comp.ok,
        exit_code=exit_code,
        summary=comp.summary(),
        k=comp.k,
        tolerances=comp.spec.to_dict(),
        first_divergence={"forward": _first(comp.first_forward), "backward": _first(comp.first_backward),
                          "param": _first(comp.first_param)},
        random_ops=comp.random_ops,
        loss_drift=comp.loss_drift(),
        steps=steps,
        structure=[dict(i.to_dict(), basis=basis) for i in comp.structure],
        tensors=tensors,
        findings=[f.to_dict() for f in comp.findings],
    )


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return jsonable(x)


def render(comp: Any, exit_code: int) -> str:
    """Strict JSON (no NaN/Infinity literals: non-finite numbers are the strings "inf", "nan")."""
    return json.dumps(_clean(to_document(comp, exit_code)), indent=2, allow_nan=False) + "\n"
