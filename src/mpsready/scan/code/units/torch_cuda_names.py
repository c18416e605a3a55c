"""API102 ``torch-cuda-api`` for ``torch.cuda.*`` names, judged from the torch.cuda table
(``scan/data/cuda_api.yaml``), which may give another code instead: API107 ``nccl-backend``, API108 ``cuda-amp``, API110
``cuda-graphs``, API111 ``nvtx``, API112 ``cuda-event-timing``; the severity, the MPS and ``torch.accelerator``
equivalents (the fix) come from the table. A bare ``torch.cuda.is_available`` outside a CUDA check is not a
finding (a selection is API104), nor is ``torch.cuda.device_count()`` in a condition."""

from __future__ import annotations

import ast
from typing import Any

from mpsready.findings import Severity
from mpsready.scan.code.units import QualifiedName, on
from mpsready.scan.rules import api as A

RULES = {"API102": A.TORCH_CUDA_CALL, "API107": A.NCCL, "API108": A.CUDA_AMP, "API110": A.CUDA_GRAPHS,
         "API111": A.NVTX, "API112": A.CUDA_EVENT}
SPECIFIC = {"API110": "CUDA graphs do not exist on MPS", "API111": "NVTX is not built into macOS PyTorch "
            "('NVTX functions not installed')", "API112": "CUDA events need CUDA; on a Mac they fail",
            "API107": "NCCL is not built into macOS PyTorch"}
WHAT = {"blocker": "raises 'Torch not compiled with CUDA enabled' on a Mac",
        "degrades": "returns a CUDA-only answer or does nothing on a Mac",
        "info": "harmless on a Mac"}


@on(QualifiedName)
def check(v, node: ast.AST, name: str) -> bool:
    if not name.startswith("torch.cuda."):
        return False
    attr = name.split(".")[2]
    info = {**v.api["default"], **v.api["names"].get(attr, {})}
    code = info.get("code", "API102")
    rule = RULES[code]
    severity = Severity(info["severity"])
    alts = [a for a in (info.get("mps"), info.get("accelerator")) if a]
    evidence: dict[str, Any] = {"api": name}
    if info.get("mps"):
        evidence["mps"] = info["mps"]
    if info.get("accelerator"):
        evidence["accelerator"] = info["accelerator"]
    fix = ("Use " + " or ".join(alts) + ".") if alts else "No MPS equivalent: guard it with torch.cuda.is_available()."
    v.resolve_guards()
    if attr == "is_available" and isinstance(node, ast.Attribute) and not v.cuda_guard:
        # a bare availability check is only a finding when it drives a device choice (API104)
        return True
    if attr == "device_count" and v.in_test:
        return True  # `if torch.cuda.device_count() > 0:` is an availability check, judged as a selection
    kw: dict[str, Any] = {"scope": "distributed"} if code == "API107" else {}
    message = f"{name}: {SPECIFIC[code]}" if code in SPECIFIC else f"{name}: {WHAT[severity.value]}"
    v.add(rule, node, message, severity=severity, fix=fix, evidence=evidence, **kw)
    return True
