"""The dtype findings of a trace (DTY201-DTY204, DTY210): tensors of a dtype MPS cannot hold that reach the
device, from the trace's dtype events (:class:`mpsready.trace.model.DtypeEvent`).

On a CPU or CUDA trace the events are the recorder's (created on or used on the device); on the emulated MPS
device they are the emulator's allocation refusals, each one :meth:`mpsready.ops.judge.Judge.allocation`'s
answer.
"""

from __future__ import annotations

from typing import Any

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.frames import Frame
from mpsready.ops.judge import Judge
from mpsready.trace import rules as R
from mpsready.trace.model import DtypeEvent, OpTrace
from mpsready.trace.stages import HOST_STAGES, stage_key

_GRAD_SCALER = "torch/amp/grad_scaler.py"

# What a creating op means for the user (recorder: aten::lift_fresh is where torch.tensor,
# torch.as_tensor and torch.from_numpy hand over a tensor made from Python or NumPy data).
_CREATOR_HINTS = {
    "aten::lift_fresh": "a tensor made from Python or NumPy data (torch.tensor, torch.as_tensor, torch.from_numpy; "
                        "NumPy arrays default to float64)",
    "aten::_to_copy": "a cast or device move (.to(...), .double(), .to(device) of a tensor of that dtype)",
    "aten::arange": "torch.arange with that dtype", "aten::arange.start": "torch.arange with that dtype",
    "aten::arange.start_step": "torch.arange with that dtype",
}


# how the step runner moves tensors to the device in each stage (mpsready.step.runner)
_RUNNER_MOVES = {"to_device": " (the runner's Module.to of the Step's model)",
                 "data": " (the runner's move of the Step's batch)",
                 "inference": " (the runner's move of the Step's inference_batch)"}


def _emulated_dtype_findings(trace: OpTrace, judge: Judge) -> list[Finding]:
    """On the emulated device the dtype events are the emulator's allocation refusals (trace/emulated.py):
    each is the judge's :meth:`~mpsready.ops.judge.Judge.allocation` answer, at the line of the creation or
    move, or, for a move the step runner made, in that stage with the line that made the tensor. Every stage
    counts (the device judged it there), ``build`` included."""
    out: list[Finding] = []
    for ev in trace.dtype_events:
        j = judge.allocation(ev.dtype)
        code = R.DTYPE_RULE_CODES.get(ev.dtype)
        if j is None or code is None:
            continue
        stage = ev.stage
        evidence: dict[str, Any] = {"dtype": ev.dtype, "op": ev.op, "how": "reaches_device", "emulated": True}
        at: Frame | None
        if ev.frame is not None:
            where, at = f" at {ev.frame.path}:{ev.frame.line}", ev.frame
        else:  # moved by the step runner (Module.to, the batch): no line of the user's made the move
            where = f" in stage {stage}{_RUNNER_MOVES.get(stage, '')}" if stage else ""
            at = ev.origin_frame
            if at is not None:
                where += f"; the tensor was made at {at.path}:{at.line}"
                evidence["origin_frame"] = at.to_dict()
        if stage:
            evidence["stage"] = stage
        out.append(Finding(
            code=code, severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted (emulated MPS device): a {ev.dtype} tensor reaches MPS{where} ({ev.op}). "
                    f"On MPS: {j.exception}: {j.message}",
            location=Location(path=at.path if at else None, line=at.line if at else None, operator=ev.op,
                              stage=stage),
            fix="cast to a supported dtype before the tensor moves to the device (e.g. .float() before .to(device))",
            source=j.source, evidence=evidence))
    return out


def dtype_findings(trace: OpTrace, judge: Judge) -> list[Finding]:
    """The dtype findings of ``trace`` for ``judge``'s target (module docstring): the dtype rules at its macOS
    (:meth:`mpsready.ops.judge.Judge.dtype_rules`); on the emulated device, the judge's allocation refusals."""
    rules, macos = judge.dtype_rules(), judge.macos
    if trace.emulated:
        return _emulated_dtype_findings(trace, judge) + _int64_finding(trace, rules, macos)
    out: list[Finding] = []
    groups: dict[tuple, list[DtypeEvent]] = {}
    events = [ev for ev in trace.dtype_events if ev.stage not in HOST_STAGES and ev.dtype in rules]
    created = {ev.dtype for ev in events if ev.how == "created"}
    # A use with no known origin, of a dtype some traced op created, is usually the same data under another
    # tensor object (nn.Module.to(dtype) wraps the cast result in a new Parameter): fold it into that finding.
    folded: dict[str, list[str]] = {}
    for ev in events:
        if ev.how == "used" and ev.origin is None and ev.dtype in created:
            folded.setdefault(ev.dtype, []).append(
                f"{ev.op} at {ev.frame.path}:{ev.frame.line}" if ev.frame else ev.op)
            continue
        groups.setdefault((ev.dtype, ev.op, ev.how, ev.frame, ev.origin, ev.internal), []).append(ev)
    for (dtype, op, how, frame, origin, internal), evs in sorted(
            groups.items(), key=lambda kv: (stage_key(kv[1][0].stage), kv[0][0], kv[0][1])):
        rule = rules[dtype]
        code = R.DTYPE_RULE_CODES.get(dtype, R.DTY_LIMITED.code)
        sev = Severity.DEGRADES if rule.effect == "limited" else Severity.BLOCKER
        stage = evs[0].stage
        hint = _CREATOR_HINTS.get(origin or op, "")
        where = f" at {frame.path}:{frame.line} ({frame.function})" if frame else ""
        if how == "created":
            msg = f"Predicted: a {dtype} tensor is created on the device by {op}{where} in stage {stage}"
        else:
            came = f", made by {origin}" + (f" at {evs[0].origin_frame.path}:{evs[0].origin_frame.line}"
                                            if evs[0].origin_frame else "") if origin else \
                ", entering without a traced op (e.g. torch.from_numpy, or built before the step)"
            msg = f"Predicted: a {dtype} tensor{came} is used on the device by {op}{where} in stage {stage}"
        msg += f" ({hint})." if hint else "."
        msg += f" On MPS: {rule.message}"
        if rule.min_macos and rule.effect != "error":
            msg += f" (target macOS {macos} < {rule.min_macos})"
        if internal and internal.startswith(_GRAD_SCALER):
            # torch/amp/grad_scaler.py unscale_ computes 1/scale in float64 except on MPS, where it stays float32
            # (the MPS branch of PyTorch 2.13, added after pytorch#142397, PR #144022): not a blocker by itself;
            # before 2.8 GradScaler fails on MPS anyway through _amp_foreach_non_finite_check_and_unscale_.
            sev = Severity.INFO
            msg = (f"Predicted: torch.amp.GradScaler ({internal}) creates a float64 inverse scale at "
                   f"{frame.path}:{frame.line} on this device; on MPS PyTorch keeps it float32 (MPS branch in "
                   "grad_scaler.py; pytorch#142397 reported the float64 TypeError on 2.5). GradScaler's own "
                   "kernels are judged as ops (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_)."
                   if frame else f"Predicted: torch.amp.GradScaler ({internal}) creates a float64 inverse scale "
                   "on this device; on MPS PyTorch keeps it float32.")
        evidence: dict[str, Any] = {"dtype": dtype, "op": op, "how": how, "count": sum(e.count for e in evs),
                                    "expected_message": rule.message, "fixed_in": None}
        if origin:
            evidence["origin"] = origin
        if internal:
            evidence["internal"] = internal
        if how == "created" and folded.get(dtype):
            evidence["also_used_by"] = folded.pop(dtype)[:10]
        loc = Location(path=frame.path if frame else None, line=frame.line if frame else None, operator=op,
                       stage=stage)
        out.append(Finding(code=code, severity=sev, message=msg, location=loc, basis=Basis.PREDICTED,
                           fix=_dtype_fix(dtype), source=rule.source, evidence=evidence))
    return out + _int64_finding(trace, rules, macos)


def _int64_finding(trace: OpTrace, rules: dict, macos: str) -> list[Finding]:
    out: list[Finding] = []
    int64 = rules.get("int64")
    if int64 is not None:
        users = sorted({c.op for c in trace.calls if c.stage not in HOST_STAGES and "int64" in c.in_dtypes
                        and c.parent is None})
        if users:
            out.append(Finding(code=R.DTY_LIMITED.code, severity=Severity.DEGRADES,
                               message=f"Predicted: int64 tensors feed {len(users)} op(s) and the target macOS "
                                       f"{macos} is older than {int64.min_macos}: {int64.message}.",
                               location=Location(operator=users[0]), basis=Basis.PREDICTED,
                               fix=f"upgrade to macOS {int64.min_macos} or later", source=int64.source,
                               evidence={"dtype": "int64", "ops": users[:20]}))
    return out


def _dtype_fix(dtype: str) -> str:
    if dtype in ("float64", "complex128"):
        return ("cast to float32/complex64 before the tensor reaches the device (e.g. torch.from_numpy(a).float()), "
                "or pass dtype=torch.float32")
    return "use a dtype the target macOS supports (float16/float32), or upgrade macOS to 14 or later"
