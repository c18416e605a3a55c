"""Hand-made stage outputs (as the other stages specify them), for judging without running them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mpsready.findings import Basis, Finding, Location, Scope, Severity
from mpsready.record.layout import RecordWriter
from mpsready.schema import envelope
from mpsready.step.contract import STAGES


def finding(code, severity="blocker", message="m", path=None, line=None, operator=None, basis="predicted",
            fix=None, scope="main", **evidence) -> dict[str, Any]:
    return Finding(code, Severity(severity), message, Location(path=path, line=line, operator=operator),
                   Basis(basis), fix=fix, scope=Scope(scope), evidence=evidence).to_dict()


FLASH_ATTN = finding("DEP101", message="flash-attn is CUDA-only (no macOS wheel)", path="requirements.txt", line=4,
                     package="flash-attn", alternative="torch.nn.functional.scaled_dot_product_attention",
                     fix="use torch.nn.functional.scaled_dot_product_attention")
APEX_NO_ALT = finding("DEP101", message="apex is CUDA-only", path="requirements.txt", line=2, package="apex",
                      no_alternative=True)
CUDA_EXT_WITH_FALLBACK = finding("EXT101", severity="degrades", message="CUDAExtension fused_gelu_cuda",
                                 path="setup.py", line=9, extension="fused_gelu_cuda", fallback=True)


def scan_doc(findings=(), outlook="runs_on_mac", root="/proj", files=12) -> dict[str, Any]:
    return envelope("mpsready.scan", 1, basis="predicted", root=root, outlook=outlook,
                    summary={"files": files}, findings=list(findings))


def env_doc(mac=False, mps_built=None, mps_available=None, memory_gb=None, fallback=None) -> dict[str, Any]:
    if mps_built is None:
        mps_built = mac
    if mps_available is None:
        mps_available = mac
    doc = envelope("mpsready.env", 1, basis="observed",
                   os={"system": "Darwin" if mac else "Linux", "machine": "arm64" if mac else "x86_64",
                       **({"macos": "14.4.1"} if mac else {})},
                   python={"version": "3.12.3"}, torch={"version": "2.13.0"},
                   mps={"is_built": mps_built, "is_available": mps_available},
                   cuda={"is_available": False},
                   env_vars={} if fallback is None else {"PYTORCH_ENABLE_MPS_FALLBACK": "1" if fallback else "0"},
                   git={"commit": "0123456789abcdef0123", "dirty": False}, findings=[])
    if memory_gb:
        doc["memory"] = {"total_bytes": int(memory_gb * 2**30)}
    return doc


def op(name, verdict="runs", calls=1, fixed_in=None, dtypes=("float32",), where="model.py:10", stage="forward",
       problems=()):
    """An op as the trace writes it: ``verdict`` runs/error/fallback/unknown, ``status`` the table's status."""
    path, line = where.split(":")
    d = {"op": name, "basis": "predicted", "verdict": verdict, "status": "kernel" if verdict == "runs" else "missing",
         "count": calls, "dtypes": list(dtypes), "stages": [stage],
         "locations": [{"path": path, "line": int(line), "function": "f", "stage": stage}]}
    if verdict != "runs":
        d["problems"] = [{"kind": k, "detail": f"{k} problem"} for k in problems] or [{"kind": "missing",
                                                                                       "detail": "no MPS kernel"}]
        d["fixed_in"] = fixed_in
    return d


CLEAN_OPS = [op("aten::linear"), op("aten::relu"), op("aten::nll_loss_forward", stage="loss")]


def trace_doc(ops=CLEAN_OPS, findings=(), device="cpu", fallback_share=None) -> dict[str, Any]:
    summary: dict[str, Any] = {"ops": len(ops)}
    if fallback_share is not None:
        summary["fallback_time_share"] = fallback_share
    return envelope("mpsready.trace", 1, basis="predicted", device=device,
                    target={"torch": "2.13.0", "macos": "15.0"}, ops=list(ops),
                    stages=[{"stage": s, "status": "passed"} for s in STAGES],
                    findings=list(findings), summary=summary)


def write_record(path: Path, device="cpu", failed_stage=None, losses=(2.3, 2.1, 1.9, 1.8, 1.7, 1.6),
                 seconds=(0.5, 0.1, 0.1, 0.1, 0.1, 0.1),
                 peak=None, fallback=None, raw=False, env=None, error_type="NotImplementedError",
                 error="The operator 'aten::foo' is not currently implemented for the MPS device.",
                 whole=False) -> Path:
    stages = []
    dead = False
    for s in (("build", "step") if whole else STAGES):
        if dead:
            stages.append({"stage": s, "status": "not_run", "seconds": 0.0, "steps_run": 0})
        elif s == failed_stage:
            stages.append({"stage": s, "status": "failed", "seconds": 0.01, "steps_run": 1, "error_type": error_type,
                           "error": error})
            dead = True
        else:
            stages.append({"stage": s, "status": "passed", "seconds": 0.01, "steps_run": 1})
    metrics = [{"index": i, "loss": loss, "seconds": t, "peak_memory_bytes": peak} for i, (loss, t)
               in enumerate(zip(losses, seconds))] if not failed_stage else []
    with RecordWriter(path, device=device, entry="step.py:step", steps=len(losses), stages=stages,
                      step_metrics=metrics, env=env or env_doc(mac=device == "mps"),
                      fallback=fallback if fallback is not None else {"enabled": False, "checked": device == "mps",
                                                                      "calls": {}, "warned_ops": []},
                      raw_tensors=raw, memory={"peak_bytes": peak} if peak else {}):
        pass
    return path


def compare_doc(a="cuda", b="mps", failed=0, rows=None, losses_a=(2.3, 2.1), losses_b=(2.3, 2.1)) -> dict[str, Any]:
    rows = rows if rows is not None else [
        {"key": "activation:blocks.0", "ok": True, "max_abs": 1e-6, "max_rel": 2e-6, "cosine": 1.0},
        {"key": "activation:blocks.1", "ok": failed == 0, "max_abs": 3e-2 if failed else 1e-6,
         "max_rel": 0.4 if failed else 3e-6, "cosine": 0.97 if failed else 1.0},
        {"key": "output:model", "ok": failed == 0, "max_abs": 0.1 if failed else 1e-6,
         "max_rel": 0.6 if failed else 3e-6, "cosine": 0.95 if failed else 1.0},
    ]
    return envelope("mpsready.compare", 1, basis="observed", a={"device": a}, b={"device": b},
                    summary={"compared": len(rows), "failed": failed, "passed": failed == 0},
                    first_divergence="activation:blocks.1" if failed else None, tensors=rows,
                    losses=[{"step": i, "a": x, "b": y} for i, (x, y) in enumerate(zip(losses_a, losses_b))],
                    findings=[])


def dump(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def many_findings(n_files: int = 14) -> list[dict[str, Any]]:
    """A scan of a real-sized repository: 104 findings over many files, long paths and messages, some in
    tests and examples (the layout the issue-38 report must keep readable from 390 to 1,400 px)."""
    out = [FLASH_ATTN, APEX_NO_ALT]
    deep = "src/a_rather_long_package_name_for_research_code/models/backbones/transformer_with_a_long_name"
    for i in range(60):
        out.append(finding("API101", "degrades", "device selection picks cuda and never mps: "
                           "torch.device('cuda' if torch.cuda.is_available() else 'cpu') " + "x" * 40,
                           path=f"{deep}_{i % n_files}.py", line=10 + i, fix="pick mps when available"))
    for i in range(22):
        out.append(finding("API103", "degrades", "torch.cuda.synchronize() has no effect on MPS",
                           path=f"tests/test_training_loop_{i % 5}.py", line=3 + i, scope="tests"))
    for i in range(20):
        out.append(finding("DTY201", "info", "float64 tensor created (MPS has no float64)",
                           path=f"examples/notebook_export_{i % 3}.py", line=7 + i, scope="examples"))
    return out
