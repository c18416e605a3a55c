"""What the emulated MPS device judged where the trace's recorder cannot see it, as plain records, and the ops and
findings :func:`mpsready.trace.predict.predict` makes of them (one prediction, built once: nothing is removed
from it or patched in afterwards).

* composite-implicit ops MPS runs as a whole (``linalg_svd``: CPU fallback with a warning up to 2.13), whose CPU
  decomposition the recorder is told not to record (OPS102 / OPS101), and those that run (``linear``);
* shape rules (ConvTranspose3d before 2.8, ...) (OPS110).

Every record carries the :class:`mpsready.ops.judge.Judgement` the emulator was given: nothing here judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.frames import Frame
from mpsready.ops.judge import Judge, Judgement
from mpsready.trace import rules as R
from mpsready.trace.prediction import OpPrediction, Problem


@dataclass(frozen=True)
class WholeOp:
    """All calls of one composite-implicit op the emulated device judged whole with one judgement ``j``:
    ``calls``, wall ``seconds`` on this CPU, the ``dtypes`` seen (first dtype of each call) and the user's
    ``frame`` of the first call that fell back (None otherwise)."""

    j: Judgement
    calls: int
    seconds: float
    dtypes: tuple[str, ...] = ()
    frame: Frame | None = None


@dataclass(frozen=True)
class JudgedCall:
    """One failing call the emulated device judged (``j``), at the user's ``frame``."""

    j: Judgement
    frame: Frame | None = None


@dataclass(frozen=True)
class DeviceJudgements:
    """The emulated device's own judgements of one traced run (module docstring): ``whole`` in the order first
    met, ``failures`` in the order met."""

    whole: tuple[WholeOp, ...] = ()
    failures: tuple[JudgedCall, ...] = field(default=())


def device_findings(judged: DeviceJudgements, judge: Judge, listed: set[str]) -> tuple[list[OpPrediction],
                                                                                      list[Finding]]:
    """The ops and findings of ``judged`` for the target of ``judge``: a composite-implicit op that runs is
    listed (once, unless ``listed``, the ops the recorder's calls already gave, has it), one that falls back or
    raises is listed with an OPS101 / OPS102 finding, and every shape failure is an OPS110 finding."""
    ops: list[OpPrediction] = []
    findings: list[Finding] = []
    listed = set(listed)
    tv = judge.torch
    for w in judged.whole:
        j = w.j
        if j.outcome == "runs" and j.op not in listed:  # an MPS kernel of its own (linear): judged whole, runs
            sup = judge.db.lookup(j.op, macos=judge.macos)
            ops.append(OpPrediction(op=j.op, verdict="runs", status=sup.status, how=sup.how, count=w.calls,
                                    seconds=w.seconds, stages=[], dtypes=list(w.dtypes), sources=list(sup.sources)))
            listed.add(j.op)
            continue
        if j.outcome not in ("fallback", "error"):
            continue
        name = j.named or j.op
        loc = Location(path=w.frame.path if w.frame else None, line=w.frame.line if w.frame else None,
                       operator=name)
        if j.outcome == "fallback":
            code, sev = R.OPS_FALLBACK.code, Severity.DEGRADES
            msg = f"Predicted for torch {tv} (emulated MPS device): {name} runs on the CPU " \
                  f"({j.kind}, {w.calls} call(s)): {j.message}"
        else:
            code, sev = R.OPS_MISSING.code, Severity.BLOCKER
            msg = f"Predicted for torch {tv} (emulated MPS device): {name}: {j.message}"
        findings.append(Finding(code=code, severity=sev, basis=Basis.PREDICTED, message=msg, location=loc,
                                fix=(f"upgrade to torch {j.fixed_in}" if j.fixed_in else "run it on the CPU explicitly"),
                                source="aten/src/ATen/mps/MPSFallback.mm via mpsready.ops",
                                evidence={"op": name, "calls": w.calls, "emulated": True}))
        sup = judge.db.lookup(j.op, macos=judge.macos)
        ops.append(OpPrediction(
            op=name, verdict=j.outcome, status=sup.status, how=sup.how,
            problems=[Problem(j.kind or "missing", "judged on the emulated MPS device", j.message, j.fixed_in)],
            count=w.calls, seconds=w.seconds, dtypes=list(w.dtypes), frames=[w.frame] if w.frame else [],
            frame_stages=["step"] if w.frame else [], fixed_in=j.fixed_in, sources=list(sup.sources)))
    for f in judged.failures:
        j = f.j
        if j.kind != "shape":
            continue
        findings.append(Finding(
            code=R.OPS_SHAPE.code, severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted for torch {tv} (emulated MPS device): {j.op}: "
                    f"{j.exception or 'process abort'}: {j.message}",
            location=Location(path=f.frame.path if f.frame else None, line=f.frame.line if f.frame else None,
                              operator=j.op),
            fix=f"upgrade to torch {j.fixed_in}" if j.fixed_in else "run this call on the CPU or change its shape",
            source=j.source, evidence={"op": j.op, "dtype": j.dtype, "emulated": True}))
    return ops, findings
