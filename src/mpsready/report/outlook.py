"""Time and memory outlook, from observed step times and peak memory.

Step times are the median of the measured steps (seconds, device-synchronised by the record
stage; step 0 left out as warm-up, :mod:`mpsready.record.timing`), shown with their spread (the
fastest and slowest measured step). The projection for the real job is ``median step seconds x job
steps`` for each device, made only from at least ``MIN_MEASURED`` (5) measured steps. It stands for the
device recorded and the representative step's model and batch (parameter count from the record's
tensors, input shapes from record.json), which the report states next to the figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.record.timing import MIN_MEASURED
from mpsready.report import rules
from mpsready.report.evidence import Evidence

FALLBACK_SHARE_LIMIT = 0.10  # a fallback share above this is reported (PRF202): step time grows by that much
MEMORY_HEADROOM = 0.75  # above 75% of the Mac's memory the system itself competes for it


@dataclass(frozen=True)
class DeviceTiming:
    device: str
    basis: Basis
    step_seconds: float | None
    steps_measured: int
    peak_memory_bytes: int | None
    projected_seconds: float | None  # for the job's steps, when given
    source: str | None = None
    memory_source: str | None = None
    warmup_steps: int = 0  # leading steps left out of step_seconds and steps_measured (step 0, warm-up)
    spread_seconds: tuple[float, float] | None = None  # (fastest, slowest) measured step
    observed_on: str | None = None  # the record's device description ("cpu (Intel Xeon ...)")
    parameters: int | None = None  # model parameters (elements) of the representative step
    batch: str | None = None  # its inputs, "inputs 6x1x8x8, target 6"
    label: str | None = None  # the run's label (record --label), shown before the device

    @property
    def name(self) -> str:
        """The run as the report names it: ``"eager (cpu)"`` with a label, else the bare device."""
        return f"{self.label} ({self.device})" if self.label else self.device

    @property
    def steps_text(self) -> str:
        """``steps_measured`` with the warm-up exclusion, e.g. ``"2 (step 0 left out as warm-up)"``."""
        return f"{self.steps_measured} (step 0 left out as warm-up)" if self.warmup_steps else str(self.steps_measured)

    @property
    def enough_steps(self) -> bool:
        return self.steps_measured >= MIN_MEASURED

    @property
    def stands_for(self) -> str:
        """What a projection from this timing stands for: the device and the step's model and batch."""
        parts = [f"device {self.observed_on or self.device}"]
        if self.parameters is not None:
            parts.append(f"model of {self.parameters:,} parameters")
        else:
            parts.append("model size not in the record")
        if self.batch:
            parts.append(f"batch {self.batch}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "basis": self.basis.value, "step_seconds": self.step_seconds,
                "steps_measured": self.steps_measured, "warmup_steps": self.warmup_steps,
                "spread_seconds": list(self.spread_seconds) if self.spread_seconds else None,
                "peak_memory_bytes": self.peak_memory_bytes,
                "projected_seconds": self.projected_seconds, "source": self.source,
                "memory_source": self.memory_source, "observed_on": self.observed_on,
                "parameters": self.parameters, "batch": self.batch, "stands_for": self.stands_for, "label": self.label}


@dataclass
class Outlook:
    timings: list[DeviceTiming]
    job_steps: int | None
    fallback_share: float | None  # share of step time on the CPU under the MPS fallback, 0..1
    fallback_basis: Basis | None
    mac_memory_bytes: int | None
    mac_memory_source: str | None
    time_budget_hours: float | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.timings and self.fallback_share is None

    def timing(self, backend: str) -> DeviceTiming | None:
        return next((t for t in self.timings if t.device.split(":")[0] == backend), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "timings": [t.to_dict() for t in self.timings], "job_steps": self.job_steps,
            "fallback_share": self.fallback_share,
            "fallback_basis": self.fallback_basis.value if self.fallback_basis else None,
            "mac_memory_bytes": self.mac_memory_bytes, "mac_memory_source": self.mac_memory_source,
            "time_budget_hours": self.time_budget_hours,
            "findings": [f.to_dict() for f in self.findings],
        }


def build_outlook(ev: Evidence, job_steps: int | None = None, mac_memory_gb: float | None = None,
                  time_budget_hours: float | None = None) -> Outlook:
    """Collect timings from the run records and derive the PRF2xx findings."""
    timings = []
    for r in ev.records:
        timing = r.step_timing()  # the same steps PRF101's median is taken over
        step = timing.median_seconds
        project = step is not None and job_steps and timing.enough  # fewer steps give no stable estimate
        timings.append(DeviceTiming(
            device=r.device, basis=Basis.OBSERVED, step_seconds=step, steps_measured=len(timing.measured),
            peak_memory_bytes=r.peak_memory_bytes,
            projected_seconds=step * job_steps if project and step is not None and job_steps else None, source=r.source,
            memory_source=r.memory_source, warmup_steps=timing.warmup_steps, spread_seconds=timing.spread_seconds,
            observed_on=r.observed_on, parameters=r.parameters, batch=r.batch, label=r.label))
    mac_mem, mac_src = None, None
    if mac_memory_gb:
        mac_mem, mac_src = int(mac_memory_gb * 2**30), "--mac-memory-gb"
    else:
        mac = ev.mac_env()
        if mac is not None and mac.memory_bytes:
            mac_mem, mac_src = mac.memory_bytes, f"env record ({mac.describe()})"
    share, share_basis = None, None
    mps = ev.record_on("mps")
    if mps is not None and mps.fallback_checked is True and not mps.fallback_ops:
        share, share_basis = 0.0, Basis.OBSERVED
    elif ev.trace is not None and ev.trace.fallback_time_share is not None:
        share, share_basis = ev.trace.fallback_time_share, Basis.PREDICTED
    out = Outlook(timings, job_steps, share, share_basis, mac_mem, mac_src, time_budget_hours)
    out.findings = _findings(out)
    return out


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def _findings(o: Outlook) -> list[Finding]:
    found = []
    if o.mac_memory_bytes:
        for t in o.timings:
            if t.peak_memory_bytes and t.device.split(":")[0] in ("cuda", "mps") \
                    and t.peak_memory_bytes > MEMORY_HEADROOM * o.mac_memory_bytes:
                over = t.peak_memory_bytes > o.mac_memory_bytes
                found.append(Finding(
                    rules.PEAK_MEMORY.code, Severity.BLOCKER if over else Severity.DEGRADES,
                    f"peak {_gib(t.peak_memory_bytes)} on {t.device} against {_gib(o.mac_memory_bytes)} on the Mac"
                    + ("" if over else f" (above {MEMORY_HEADROOM:.0%})"),
                    Location(stage="step"), basis=t.basis, fix=rules.PEAK_MEMORY.fix,
                    source=rules.PEAK_MEMORY.source,
                    evidence={"device": t.device, "peak_memory_bytes": t.peak_memory_bytes,
                              "mac_memory_bytes": o.mac_memory_bytes}))
    if o.fallback_share is not None and o.fallback_share >= FALLBACK_SHARE_LIMIT:
        found.append(Finding(
            rules.FALLBACK_SHARE.code, Severity.DEGRADES,
            f"about {o.fallback_share:.0%} of the step time would run on the CPU through the MPS fallback",
            Location(stage="step"), basis=o.fallback_basis or Basis.PREDICTED, fix=rules.FALLBACK_SHARE.fix,
            source=rules.FALLBACK_SHARE.source, evidence={"share": round(o.fallback_share, 4)}))
    mps, cuda = o.timing("mps"), o.timing("cuda")
    if o.time_budget_hours and mps is not None and mps.projected_seconds is not None \
            and mps.projected_seconds > o.time_budget_hours * 3600:
        found.append(Finding(
            rules.TIME_BUDGET.code, Severity.BLOCKER,
            f"{o.job_steps} steps x {mps.step_seconds:.3g} s = {mps.projected_seconds / 3600:.2f} h on {mps.device}; "
            f"budget {o.time_budget_hours:g} h", Location(stage="step"), basis=Basis.OBSERVED,
            fix=rules.TIME_BUDGET.fix, source=rules.TIME_BUDGET.source,
            evidence={"projected_seconds": mps.projected_seconds, "budget_hours": o.time_budget_hours}))
    if mps is not None and cuda is not None and mps.step_seconds and cuda.step_seconds \
            and mps.step_seconds > 3 * cuda.step_seconds:
        ratio = mps.step_seconds / cuda.step_seconds
        found.append(Finding(
            rules.SLOWER_THAN_CUDA.code, Severity.INFO,
            f"step {mps.step_seconds:.3g} s on {mps.device} vs {cuda.step_seconds:.3g} s on {cuda.device} "
            f"({ratio:.1f}x)", Location(stage="step"), basis=Basis.OBSERVED, fix=rules.SLOWER_THAN_CUDA.fix,
            source=rules.SLOWER_THAN_CUDA.source, evidence={"ratio": round(ratio, 3)}))
    return found
