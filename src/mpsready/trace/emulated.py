"""Trace on the emulated MPS device (``mpsready trace ENTRY --device mps`` without a Mac).

The step runs on the emulated device of :mod:`mpsready.emulate` (``--keep-going``: nothing raises), with the
recorder attached. Only tensors that reach MPS are judged: the recorder sees the device of each call as
``mps`` for resident tensors and ``cpu`` for the rest, and :func:`mpsready.trace.predict.predict` leaves
CPU calls out. What the emulator itself judged where the recorder cannot see it is merged into the
prediction as findings:

* a dtype MPS cannot allocate (float64, complex128; bfloat16/complex64 before macOS 14) at the line where the
  tensor is created on or moved to MPS (DTY201-DTY204), replacing the recorder's dtype findings for that dtype,
  so a NumPy array cast to float32 *before* the move is clean. A move the step runner makes (``Module.to`` of
  the Step's model in ``to_device``, the batch in ``data``) has no line of the user's: the finding then points
  at the line that made the tensor (a float64 ``register_buffer(torch.from_numpy(...))``), as the recorder saw
  it, and names the stage;
* composite-implicit ops MPS runs as a whole (``linalg_svd``: CPU fallback with a warning up to 2.13), whose
  CPU decomposition the recorder is told not to record (OPS102 / OPS101);
* shape rules (ConvTranspose3d before 2.8, ...) (OPS110).
"""

from __future__ import annotations

from typing import Any

from mpsready.findings import Basis, Finding, Location, Severity, sort_findings
from mpsready.step.runner import Observer
from mpsready.trace import rules as R
from mpsready.trace.frames import UserFrames
from mpsready.trace.model import DtypeEvent
from mpsready.trace.predict import OpPrediction, Prediction, Problem, _summary


def emulated_trace(entry: Any, torch_v: str, macos: str, fallback: bool, expand, steps: int, sdpa_math,
                   project: str | None):
    """``(OpTrace, Emulator)`` of ``entry`` run on the emulated device."""
    from mpsready.emulate import Emulator, Target
    from mpsready.trace.recorder import Recorder
    from mpsready.step.runner import run_entry

    roots = [str(entry.root)] + ([str(project)] if project else [])
    emu = Emulator(Target(torch_v, macos, fallback), roots[-1] if project else roots[0], keep_going=True)
    emu.frames = UserFrames(roots)
    rec = Recorder(roots, device="mps", expand=expand, sdpa_math=sdpa_math, simulate_moves=False)
    rec.suppress = lambda: emu.inside_kernel > 0
    emu.origin_of = rec.origin_of
    stages = _FailureStages(emu)
    emu.install()
    try:
        results, _ctx = run_entry(entry, device="mps", steps=steps, observers=[stages, rec])
    finally:
        emu.uninstall()
    trace = rec.to_trace(entry.spec, [r.to_dict() for r in results])
    trace.settings["emulated"] = True
    emu.failure_stages = stages.of_failures()
    trace.dtype_events = _dtype_events(emu)  # the recorder sees no move on this device: the emulator judged them
    return trace, emu


class _FailureStages(Observer):
    """Which step stage each of the emulator's failures happened in (``of_failures()[i]`` for ``failures[i]``)."""

    def __init__(self, emu):
        self.emu = emu
        self.starts: list[tuple[int, str]] = []

    def stage_started(self, ctx, stage: str) -> None:
        self.starts.append((len(self.emu.failures), stage))

    def of_failures(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(len(self.emu.failures)):
            stage = None
            for first, name in self.starts:
                if first <= i:
                    stage = name
            out.append(stage)
        return out


# how the step runner moves tensors to the device in each stage (mpsready.step.runner)
_RUNNER_MOVES = {"to_device": " (the runner's Module.to of the Step's model)",
                 "data": " (the runner's move of the Step's batch)",
                 "inference": " (the runner's move of the Step's inference_batch)"}


def allocation_failures(emu) -> list[tuple[Any, str | None]]:
    """``(Failure, stage)`` for each dtype MPS refuses to allocate, in the order met, without the restatements:
    ``torch.load(map_location=device)`` in the runner's ``checkpoint`` stage restores the state the step saved,
    so a refusal there of a dtype already refused earlier is the same tensor again (a Mac never had it on MPS
    to save)."""
    stage_of = getattr(emu, "failure_stages", [])
    out = []
    failed_dtypes: set[str] = set()
    for i, f in enumerate(emu.failures):
        j = f.judgement
        if not (j.kind == "dtype" and j.dtype in R.DTYPE_RULE_CODES and j.exception == "TypeError"):
            continue
        stage = stage_of[i] if i < len(stage_of) else None
        if stage == "checkpoint" and f.frame is None and j.dtype in failed_dtypes:
            continue
        failed_dtypes.add(j.dtype)
        out.append((f, stage))
    return out


def _dtype_events(emu) -> list[DtypeEvent]:
    """The emulator's allocation refusals as the trace's dtype events (``origin_frame``: the line that made a
    tensor the runner moved), so reports can name where to cast."""
    return [DtypeEvent(dtype=f.judgement.dtype, stage=stage or "step", op=f.judgement.named or f.judgement.op,
                       how="created", frame=f.frame, origin_frame=f.origin)
            for f, stage in allocation_failures(emu)]


def merge(pred: Prediction, emu) -> Prediction:
    """Add the emulator's own judgements to ``pred`` (module docstring); returns ``pred``."""
    findings = list(pred.findings)
    kept = allocation_failures(emu)
    dtypes = {f.judgement.dtype for f, _stage in kept}
    findings = [f for f in findings if not (f.code in R.DTYPE_RULE_CODES.values()
                                            and isinstance(f.evidence, dict) and f.evidence.get("dtype") in dtypes)]
    for f, stage in kept:
        j = f.judgement
        evidence = {"dtype": j.dtype, "op": j.named or j.op, "how": "reaches_device", "emulated": True}
        if f.frame is not None:
            where, at = f" at {f.frame.path}:{f.frame.line}", f.frame
        else:  # moved by the step runner (Module.to, the batch): no line of the user's made the move
            by = _RUNNER_MOVES.get(stage or "", "")
            where = f" in stage {stage}{by}" if stage else ""
            at = f.origin
            if f.origin is not None:
                where += f"; the tensor was made at {f.origin.path}:{f.origin.line}"
                evidence["origin_frame"] = f.origin.to_dict()
        if stage:
            evidence["stage"] = stage
        findings.append(Finding(
            code=R.DTYPE_RULE_CODES[j.dtype], severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted (emulated MPS device): a {j.dtype} tensor reaches MPS{where} ({j.named or j.op}). "
                    f"On MPS: TypeError: {j.message}",
            location=Location(path=at.path if at else None, line=at.line if at else None,
                              operator=j.named or j.op, stage=stage),
            fix="cast to a supported dtype before the tensor moves to the device (e.g. .float() before .to(device))",
            source=j.source, evidence=evidence))
    cia = set(getattr(emu, "cia_ops", ()))
    for r in emu.records.values():
        if r.op not in cia or r.outcome not in ("fallback", "error"):
            continue
        loc = Location(path=r.frame.path if r.frame else None, line=r.frame.line if r.frame else None,
                       operator=r.named or r.op)
        if r.outcome == "fallback":
            code, sev = R.OPS_FALLBACK.code, Severity.DEGRADES
            msg = f"Predicted for torch {emu.judge.torch} (emulated MPS device): {r.named or r.op} runs on the CPU " \
                  f"({r.kind}, {r.calls} call(s)): {r.message}"
        else:
            code, sev = R.OPS_MISSING.code, Severity.BLOCKER
            msg = f"Predicted for torch {emu.judge.torch} (emulated MPS device): {r.named or r.op}: {r.message}"
        findings.append(Finding(code=code, severity=sev, basis=Basis.PREDICTED, message=msg, location=loc,
                                fix=(f"upgrade to torch {r.fixed_in}" if r.fixed_in else "run it on the CPU explicitly"),
                                source="aten/src/ATen/mps/MPSFallback.mm via mpsready.ops",
                                evidence={"op": r.named or r.op, "calls": r.calls, "emulated": True}))
        sup = emu.judge.db.lookup(r.op, macos=emu.judge.macos)
        pred.ops.append(OpPrediction(
            op=r.named or r.op, verdict=r.outcome, status=sup.status, how=sup.how,
            problems=[Problem(r.kind or "missing", "judged on the emulated MPS device", r.message, r.fixed_in)],
            count=r.calls, seconds=r.seconds, dtypes=list(r.dtypes), frames=[r.frame] if r.frame else [],
            frame_stages=["step"] if r.frame else [], fixed_in=r.fixed_in, sources=list(sup.sources)))
    for f in emu.failures:
        j = f.judgement
        if j.kind != "shape":
            continue
        findings.append(Finding(
            code=R.OPS_SHAPE.code, severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted for torch {emu.judge.torch} (emulated MPS device): {j.op}: "
                    f"{j.exception or 'process abort'}: {j.message}",
            location=Location(path=f.frame.path if f.frame else None, line=f.frame.line if f.frame else None,
                              operator=j.op),
            fix=f"upgrade to torch {j.fixed_in}" if j.fixed_in else "run this call on the CPU or change its shape",
            source=j.source, evidence={"op": j.op, "dtype": j.dtype, "emulated": True}))
    pred.findings = sort_findings(findings)
    summary = _summary(pred.ops, pred.findings, pred.summary.get("device_calls", 0),
                       pred.summary.get("traced_step_seconds", 0.0))
    pred.summary = dict(summary, emulated=True)
    return pred
