"""Trace on the emulated MPS device (``mpsready trace ENTRY --device mps`` without a Mac).

The step runs on the emulated device of :mod:`mpsready.emulate` (``--keep-going``: nothing raises), with the
recorder attached. Only tensors that reach MPS are judged: the recorder sees the device of each call as
``mps`` for resident tensors and ``cpu`` for the rest, and :func:`mpsready.trace.predict.predict` leaves
CPU calls out. Every call is judged by the same :class:`mpsready.ops.judge.Judge` as ``mpsready run``; a
composite the recorder expands has its results marked resident as the emulator marks them
(:func:`_land_composite`). What the emulator itself judged where the recorder cannot see it is added to the
prediction (:func:`merge`; nothing is removed from it):

* a dtype MPS cannot allocate (float64, complex128; bfloat16/complex64 before macOS 14) at the line where the
  tensor is created on or moved to MPS: these refusals *are* the trace's dtype events (the recorder's own are
  not used on this device), and :func:`~mpsready.trace.predict.predict` turns them into DTY201-DTY204 findings,
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
from mpsready.frames import UserFrames
from mpsready.trace.model import DtypeEvent
from mpsready.trace.predict import OpPrediction, Prediction, Problem, _summary


def emulated_trace(entry: Any, torch_v: str, macos: str, fallback: bool, expand, steps: int, sdpa_math,
                   project: str | None, numerics: Any = None):
    """``(OpTrace, Emulator)`` of ``entry`` run on the emulated device (``numerics``: a
    :class:`mpsready.numerics.hooks.TraceWatch` fed by the recorder, or ``None``)."""
    from mpsready.emulate import Emulator, Target
    from mpsready.step.runner import run_entry
    from mpsready.trace.recorder import Recorder

    roots = [str(entry.root)] + ([str(project)] if project else [])
    emu = Emulator(Target(torch_v, macos, fallback), roots[-1] if project else roots[0], keep_going=True)
    emu.frames = UserFrames(roots)
    rec = Recorder(roots, device="mps", expand=expand, sdpa_math=sdpa_math, simulate_moves=False)
    rec.suppress = lambda: emu.inside_kernel > 0
    rec.numerics = numerics
    rec.expanded_hook = lambda name, args, kwargs, out, depth: _land_composite(emu, name, args, kwargs, out, depth)
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


def _land_composite(emu, name: str, args, kwargs, out, depth: int) -> None:
    """What the emulated device does with the result of a composite it expands itself
    (:meth:`mpsready.emulate.dispatch.MPSDispatch._land`), for a composite the recorder expanded: made from a
    tensor resident on MPS (or inside a factory or move onto MPS), its results are resident too, after the
    dtype of each is judged as an allocation (``zeros_like(x, dtype=torch.float64)``). Without this, a factory
    callee (``empty_strided`` inside ``ones_like``) left the result on the CPU, and with it autograd's seed
    gradient and every backward op fed only by it."""
    import torch

    from mpsready.emulate import residence
    from mpsready.emulate.dispatch import land

    marks = residence._MARKS
    ins = [t for t in _flat(args) + _flat(kwargs.values()) if isinstance(t, torch.Tensor)]
    if emu.creating > 0 or any(t in marks for t in ins):
        land(emu, out if isinstance(out, (list, tuple)) else [out], name, ins, depth)


def _flat(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        else:
            out.append(v)
    return out


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
    findings = list(pred.findings)  # the allocation refusals are already there: trace.dtype_events
    cia = set(getattr(emu, "cia_ops", ()))
    listed = {o.op for o in pred.ops}
    for r in emu.records.values():
        if r.op not in cia:
            continue
        if r.outcome == "runs" and r.op not in listed:  # an MPS kernel of its own (linear): judged whole, runs
            sup = emu.judge.db.lookup(r.op, macos=emu.judge.macos)
            pred.ops.append(OpPrediction(op=r.op, verdict="runs", status=sup.status, how=sup.how, count=r.calls,
                                         seconds=r.seconds, stages=[], dtypes=list(r.dtypes),
                                         sources=list(sup.sources)))
            listed.add(r.op)
            continue
        if r.outcome not in ("fallback", "error"):
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
