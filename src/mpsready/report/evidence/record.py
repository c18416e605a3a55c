"""Adapter for a run record directory (:mod:`mpsready.record.layout`, format v1).

A run record is an **observation** on the device it names: per-stage status, losses
and step times (seconds, with device synchronisation), peak memory (bytes), and on
MPS the operators that actually fell back to the CPU with their call counts.
``record.json`` is read, and of ``tensors.jsonl`` only the parameters' element counts (the model size
the time projection stands for); tensors are never loaded here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.record.layout import RecordError, RunRecord
from mpsready.record.timing import StepTiming, step_timing
from mpsready.report.evidence import env as env_adapter
from mpsready.findings import Finding
from mpsready.report.evidence._util import EvidenceError, as_bool, as_float, as_int, dig, findings_of, first_str

@dataclass
class RecordEvidence:
    source: str
    device: str  # "cpu", "cuda", "cuda:0", "mps"
    entry: str | None
    stages: dict[str, dict[str, Any]]  # stage -> StageResult dict (status, error, seconds, ...)
    losses: list[float]
    step_seconds: list[float]
    peak_memory_bytes: int | None
    memory_source: str | None  # how peak memory was measured ("torch.cuda.max_memory_allocated", "process peak RSS")
    fallback_enabled: bool | None
    fallback_ops: dict[str, int]  # op -> CPU-fallback calls observed (MPS only); 0 = seen in a warning, uncounted
    fallback_checked: bool | None  # whether fallbacks were counted per call (the record stage's dispatch check)
    raw_tensors: bool
    env: env_adapter.EnvEvidence | None
    findings: list[Finding] = field(default_factory=list)  # the record stage's own (ENV2xx, OPS2xx, PRF1xx)
    warning_counts: dict[str, int] = field(default_factory=dict)  # warnings seen in the run, by category
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    parameters: int | None = None  # elements in the model's parameters (step 0 of tensors.jsonl)
    parameter_tensors: int | None = None

    @property
    def observed_on(self) -> str | None:
        """The record's own description of the device (``"cuda:0 (NVIDIA A100 ...)"``), if it has one."""
        return first_str([self.raw.get("observed_on")])

    @property
    def label(self) -> str | None:
        """The run's label (``record --label NAME``), or ``None`` when it was given none."""
        return first_str([self.raw.get("label")])

    @property
    def batch(self) -> str | None:
        """The inputs of one step as ``name shape`` pairs (``"inputs 6x1x8x8, target 6"``), from record.json."""
        tensors = dig(self.raw, "inputs.tensors")
        if not isinstance(tensors, list):
            return None
        parts = []
        for t in tensors:
            if isinstance(t, dict) and isinstance(t.get("shape"), list):
                shape = "x".join(str(n) for n in t["shape"]) or "scalar"
                parts.append(f"{t.get('name', '?')} {shape}")
        return ", ".join(parts) or None

    @property
    def backend(self) -> str:
        """``"mps"``, ``"cuda"`` or ``"cpu"`` (the device without an index)."""
        return self.device.split(":")[0]

    def status(self, stage: str) -> str | None:
        s = self.stages.get(stage)
        return s.get("status") if s else None

    @property
    def failed_stages(self) -> list[str]:
        return [k for k, v in self.stages.items() if v.get("status") in ("failed", "crashed")]

    @property
    def all_passed(self) -> bool:
        """Every recorded stage passed or was skipped as not applicable, and at least one ran."""
        ok = [v.get("status") in ("passed", "skipped") for v in self.stages.values()]
        return bool(ok) and all(ok) and any(v.get("status") == "passed" for v in self.stages.values())

    def step_timing(self) -> StepTiming:
        """The steps that count toward the step time: step 0 is left out as warm-up when there are more
        (:func:`mpsready.record.timing.step_timing`, the same rule as PRF101)."""
        return step_timing(self.step_seconds)

    def typical_step_seconds(self) -> float | None:
        """Median step time in seconds over :meth:`step_timing`'s measured steps; ``None`` without timings."""
        return self.step_timing().median_seconds


def from_manifest(m: dict[str, Any], source: str) -> RecordEvidence:
    stages: dict[str, dict[str, Any]] = {}
    for s in m.get("stages") or []:
        if isinstance(s, dict) and isinstance(s.get("stage"), str):
            stages[s["stage"]] = s
    losses, times, peaks = [], [], []
    for sm in m.get("step_metrics") or []:
        if not isinstance(sm, dict):
            continue
        if as_float(sm.get("loss")) is not None:
            losses.append(float(sm["loss"]))
        if as_float(sm.get("seconds")) is not None:
            times.append(float(sm["seconds"]))
        if as_int(sm.get("peak_memory_bytes")) is not None:
            peaks.append(int(sm["peak_memory_bytes"]))
    peak = as_int(dig(m, "memory.peak_bytes", "memory.peak_memory_bytes", "memory.peak"))
    if peak is None and peaks:
        peak = max(peaks)
    fb = m["fallback"] if isinstance(m.get("fallback"), dict) else {}
    ops_raw = fb.get("ops") or fb.get("operators") or fb.get("calls") or {}
    fallback_ops: dict[str, int] = {}
    if isinstance(ops_raw, dict):
        fallback_ops = {str(k): int(v) for k, v in ops_raw.items() if as_int(v)}
    elif isinstance(ops_raw, list):
        for o in ops_raw:
            if isinstance(o, dict) and o.get("op"):
                fallback_ops[str(o["op"])] = as_int(o.get("calls", o.get("count"))) or 1
    for op in fb.get("warned_ops") or []:  # PyTorch warns once per op: a name without a count
        if isinstance(op, str):
            fallback_ops.setdefault(op, 0)
    env = None
    if isinstance(m.get("env"), dict):
        try:
            env = env_adapter.from_doc(m["env"], source=f"{source} (env)")
        except EvidenceError:
            env = None
    return RecordEvidence(
        source=source,
        device=first_str([m.get("device")]) or "?",
        entry=first_str([m.get("entry"), dig(m, "entry.spec")]),
        stages=stages,
        losses=losses,
        step_seconds=times,
        peak_memory_bytes=peak,
        memory_source=first_str([dig(m, "memory.source")]),
        fallback_enabled=as_bool(fb.get("enabled")),
        fallback_ops=fallback_ops,
        fallback_checked=as_bool(fb.get("checked")),
        raw_tensors=bool(m.get("raw_tensors")),
        env=env,
        findings=findings_of(m),
        warning_counts={str(k): v for k, v in (m.get("warning_counts") or {}).items() if as_int(v)}
        if isinstance(m.get("warning_counts"), dict) else {},
        raw=m,
    )


def load(path: str | os.PathLike[str]) -> RecordEvidence:
    """Open a run record directory (or its ``record.json``); raises ``EvidenceError``."""
    try:
        rec = RunRecord.open(path)
    except RecordError as exc:
        raise EvidenceError(str(exc)) from None
    ev = from_manifest(rec.manifest, str(path))
    try:
        params = [e for e in rec.iter_entries() if e.kind == "param" and e.step == 0]
    except RecordError:
        params = []  # a damaged tensors.jsonl only costs the model size; compare reports the damage
    if params:
        ev.parameters = sum(e.stats.numel for e in params)
        ev.parameter_tensors = len(params)
    return ev
