"""ENV2xx, OPS2xx, PRF1xx: findings from a run record (``mpsready record``).

All are ``observed`` on the record's device; MPS-specific rules fire only for records made on
MPS (``device_kind == "mps"``), so a CPU or CUDA record never yields an MPS claim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.rules import Rule, register

_MPS_NOTES = "PyTorch 2.13 docs, notes/mps.html"
_FALLBACK_SRC = "aten/src/ATen/mps/MPSFallback.mm (PyTorch 2.3-2.14); PyTorch 2.13 docs, mps_environment_variables.html"
_RUNNER = "mpsready step runner (observed)"

ENV201 = register(Rule(
    "ENV201", "recorded-off-mps", Severity.INFO,
    "The run record was made on the CPU or a CUDA device, not on MPS.",
    "It is a reference for `mpsready compare`, not evidence that the step runs on a Mac.",
    "mpsready record train.py:step --device cpu --out runs/cpu",
    "Record the same entry with `--device mps` on a Mac and compare the two records.",
    _RUNNER))
ENV202 = register(Rule(
    "ENV202", "stage-failed", Severity.BLOCKER,
    "A stage of the representative step raised an exception on the recorded device.",
    "The step does not run there; the stages that depend on it were not run.",
    "backward: RuntimeError: ...",
    "Read the recorded traceback of the stage; fix or replace the failing call.",
    _RUNNER))
ENV203 = register(Rule(
    "ENV203", "stage-crashed", Severity.BLOCKER,
    "The process died (abort, segfault, killed) during a stage of the step.",
    "MPS has operators that abort the process; try/except cannot catch it, so the whole job would die.",
    "forward: the process died in stage forward (step 0): killed by SIGABRT",
    "Bisect the stage (smaller entry) to find the operator; avoid it on MPS or run that part on the CPU.",
    _RUNNER))
ENV204 = register(Rule(
    "ENV204", "mps-float64-refused", Severity.BLOCKER,
    "MPS refused a float64 tensor during the step (observed).",
    "MPS has no float64 (\"Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
    "float64\"); float64 often arrives from NumPy arrays.",
    "torch.from_numpy(np.zeros(3)).to('mps')",
    "Cast to float32 before moving to MPS (`.float()`, `torch.from_numpy(a).float()`), or set the default dtype.",
    "https://github.com/pytorch/pytorch/issues/122602 (closed: expected behaviour); " + _MPS_NOTES))
ENV205 = register(Rule(
    "ENV205", "nonfinite-values", Severity.DEGRADES,
    "The loss, an output or a gradient held NaN or Inf during the recorded steps.",
    "Non-finite values make any comparison meaningless and usually mean an unstable op or dtype overflow.",
    "loss:loss step 1: nan=1",
    "Find the first tensor (in order) with nan/inf counts above 0 and check that layer's inputs and dtype.",
    _RUNNER))
OPS201 = register(Rule(
    "OPS201", "mps-op-not-implemented-observed", Severity.BLOCKER,
    "An aten operator raised NotImplementedError on MPS during the step (observed).",
    "The operator has no MPS kernel in this PyTorch; without PYTORCH_ENABLE_MPS_FALLBACK=1 the step fails.",
    "NotImplementedError: The operator 'aten::grid_sampler_3d' is not currently implemented for the MPS device.",
    "Upgrade PyTorch if a later release has the kernel (`mpsready ops`), replace the call, or enable the CPU "
    "fallback knowingly (it costs time; record it).",
    _FALLBACK_SRC))
OPS202 = register(Rule(
    "OPS202", "mps-cpu-fallback-observed", Severity.DEGRADES,
    "Operators ran on the CPU through the MPS fallback during the step, counted per call.",
    "Each call copies its inputs to the CPU and back; the once-per-operator warning hides how often.",
    "aten::_embedding_bag: 24 calls (forward 12, backward 12)",
    "Replace the operator, or upgrade to a PyTorch release with an MPS kernel (`mpsready ops OP`).",
    _FALLBACK_SRC))
PRF101 = register(Rule(
    "PRF101", "step-time-and-memory", Severity.INFO,
    "Measured step time (device-synchronised) and peak memory of the recorded steps.",
    "Evidence for checklist item 8 (run time and memory); compare with the CUDA record.",
    "median step 0.041 s over 5 steps; peak 1.2 GiB (torch.mps.current_allocated_memory)",
    "Record enough steps (5+) so that warm-up does not dominate.",
    _RUNNER))
PRF102 = register(Rule(
    "PRF102", "first-step-warmup", Severity.INFO,
    "The first step took much longer (over 5x) than the median of the later steps.",
    "Kernel compilation/caching (MPS graph building, cuDNN autotuning) makes the first step unrepresentative.",
    "step 0: 2.1 s, later median 0.05 s",
    "Judge time on later steps; use --steps 5 or more.",
    _RUNNER))


def _f(rule: Rule, message: str, stage: str | None = None, operator: str | None = None,
       severity: Severity | None = None, **evidence: Any) -> Finding:
    return Finding(code=rule.code, severity=severity or rule.severity, message=message,
                   location=Location(stage=stage, operator=operator), basis=Basis.OBSERVED, fix=rule.fix,
                   source=rule.source, evidence=evidence)


def _nonfinite(out: Path | None) -> list[tuple[str, int, int, int]]:
    """``[(key, step, nan, inf)]`` for loss/output/grad entries with non-finite values."""
    if out is None or not (out / "tensors.jsonl").exists():
        return []
    hits = []
    with (out / "tensors.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                break
            st = d.get("stats") or {}
            if d.get("kind") in ("loss", "output", "grad") and (st.get("nan") or st.get("inf")):
                hits.append((d["key"], d["step"], st.get("nan", 0), st.get("inf", 0)))
    return hits


def evaluate(manifest: Mapping[str, Any], out: Path | None = None) -> list[Finding]:
    """Findings for a record manifest (``record.json`` as a dict); ``out`` lets it read tensors.jsonl."""
    # imported here: the rule registry imports this module for the rules' metadata alone
    from mpsready.record.mps import classify_error
    from mpsready.record.timing import step_timing

    found: list[Finding] = []
    kind = manifest.get("device_kind") or str(manifest.get("device", "")).split(":")[0]
    device = manifest.get("device")
    if kind != "mps":
        found.append(_f(ENV201, f"recorded on {device}, not on MPS: a reference, not evidence of an MPS run",
                        device=device))
    for st in manifest.get("stages", []):
        status = st.get("status")
        if status == "crashed":
            found.append(_f(ENV203, st.get("error") or f"the process died in {st['stage']}", stage=st["stage"],
                            device=device))
        elif status == "failed":
            what, op = classify_error(st.get("error"))
            msg = f"{st['stage']} failed on {device}: {st.get('error_type')}: {st.get('error')}"
            if what == "float64_refused" and kind == "mps":
                found.append(_f(ENV204, msg, stage=st["stage"], device=device))
            elif what == "op_not_implemented" and kind == "mps":
                found.append(_f(OPS201, msg, stage=st["stage"], operator=op, device=device))
            else:
                found.append(_f(ENV202, msg, stage=st["stage"], device=device, error_type=st.get("error_type")))
    fb = manifest.get("fallback") or {}
    if kind == "mps":
        by_stage = fb.get("by_stage") or {}
        for op, n in sorted((fb.get("calls") or {}).items()):
            stages = {s: c[op] for s, c in by_stage.items() if op in c}
            found.append(_f(OPS202, f"{op} ran on the CPU {n} time(s) via the MPS fallback", operator=op,
                            calls=n, by_stage=stages))
    from mpsready.numerics.rules import first_nonfinite_finding

    first = first_nonfinite_finding(manifest.get("first_nonfinite"), Basis.OBSERVED, str(device))
    if first is not None:
        found.append(first)
    for key, step, nan, inf in _nonfinite(out)[:10]:
        found.append(_f(ENV205, f"{key} at step {step}: nan={nan} inf={inf}", key=key, step=step, nan=nan, inf=inf))
    secs = [m["seconds"] for m in manifest.get("step_metrics", []) if m.get("seconds") is not None]
    mem = (manifest.get("memory") or {})
    if secs:
        timing = step_timing(secs)  # step 0 carries warm-up (PRF102); the report counts the same way
        median = timing.median_seconds
        found.append(_f(PRF101, f"median step {median:.4f} s over {len(timing.measured)} step(s) on {device}"
                        + (f" ({timing.note})" if timing.note else "")
                        + (f"; peak memory {mem['peak_bytes'] / 2**20:.1f} MiB ({mem.get('source')})"
                           if mem.get("peak_bytes") else ""),
                        median_seconds=median, steps=len(timing.measured), warmup_steps=timing.warmup_steps,
                        peak_memory_bytes=mem.get("peak_bytes"), memory_source=mem.get("source")))
        if len(secs) >= 3 and median is not None and median > 0 and secs[0] > 5 * median:
            found.append(_f(PRF102, f"step 0 took {secs[0]:.3f} s, {secs[0] / median:.1f}x the later median",
                            first_seconds=secs[0], median_seconds=median))
    return found
