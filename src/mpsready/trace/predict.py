"""Classify a recorded :class:`~mpsready.trace.model.OpTrace` for a target PyTorch and macOS.

Every judgement comes from the support data (:mod:`mpsready.ops.api`): ``route()`` maps a
CPU- or CUDA-specific op to what the same Python call dispatches on MPS, ``lookup()`` gives
its status in the target release, ``dtype_rules()`` the dtypes MPS lacks. Nothing here
imports torch, so a trace saved as JSON can be re-classified for other versions.

Per op (after routing) the verdict is one of:

* ``runs``: an MPS kernel exists for the dtypes seen (or the op is a composite whose
  recorded callees are judged on their own, ``composite``);
* ``error``: the user would see an exception on MPS (no kernel, a sparse tensor without a
  SparseMPS kernel, a dtype or macOS limit of the kernel);
* ``fallback``: the op runs on the CPU, because it is on PyTorch's always-fallback list or
  because it has no kernel and ``PYTORCH_ENABLE_MPS_FALLBACK=1`` is assumed
  (``fallback=True``);
* ``unknown``: the data does not know the op; never guessed as supported;
* ``host``: not predicted (the ``build`` stage, where models are usually made on the CPU, or
  CPU tensors in a CUDA trace).

All results are predictions (``basis: "predicted"``); none was observed on a Mac.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import replace
from typing import Any, Iterable, cast

from mpsready.findings import Basis, Finding, Location, Severity, sort_findings
from mpsready.ops import api as ops_api
from mpsready.ops.judge import CallFacts, Judge, Judgement
from mpsready.ops.judge import severity as judged_severity
from mpsready.ops.judge import verdict as judged_verdict
from mpsready.ops.messages import ISSUE_NEW, ISSUE_OLD  # noqa: F401  (re-exported for older callers)
from mpsready.trace import rules as R
from mpsready.trace.dtypes import dtype_findings
from mpsready.trace.judged import DeviceJudgements, device_findings
from mpsready.trace.model import OpCall, OpTrace
from mpsready.trace.prediction import OpPrediction, Prediction, Problem
from mpsready.trace.stages import GRAD_OFF_STAGES, HOST_STAGES, STAGE_ORDER, stage_key  # noqa: F401  (STAGE_ORDER re-exported)

from mpsready.defaults import DEFAULT_MACOS  # noqa: F401  (shared with the argument definitions)
from mpsready import versions
SPARSE_CTOR = "aten::_sparse_coo_tensor_with_dims_and_tensors"

# ------------------------------------------------------------------------------------ helpers






class _Classifier:
    """Asks :class:`mpsready.ops.judge.Judge` about each recorded call; adds only what the trace knows: the stage
    (grad mode), whether a composite's callees were recorded, whether a call was made inside a composite."""

    def __init__(self, judge: Judge, expanded: set[str], views: Set[str] = frozenset(), exact: bool = True,
                 installed: str = ""):
        self.judge, self.db, self.expanded, self.views = judge, judge.db, expanded, views
        self.exact, self.installed = exact, installed
        self._sup: dict[str, ops_api.OpSupport] = {}

    def support(self, op: str) -> ops_api.OpSupport:
        s = self._sup.get(op)
        if s is None:
            s = self._sup[op] = self.db.lookup(op, macos=self.judge.macos)
        return s

    def target(self, op: str, stage: str = "") -> str:
        """The op MPS dispatches for recorded ``op``: grad is on outside ``inference`` and ``checkpoint``."""
        return self.judge.target(op, grad=stage not in GRAD_OFF_STAGES)

    def judgement(self, call: OpCall, target: str, recorded_op: str, inside: bool) -> Judgement:
        """The judge's answer for one call group, as dispatched where the trace saw it (``inside``: within a
        composite's kernel as the recording PyTorch decomposed it)."""
        sparse = any(layout.startswith("sparse") for layout in call.layouts)
        return self.judge.call(target, CallFacts(dtypes=call.in_dtypes, out_dtypes=call.out_dtypes, sparse=sparse),
                               grad=call.stage not in GRAD_OFF_STAGES, inside=inside, exact=self.exact,
                               installed=self.installed,
                               expanded=(recorded_op in self.expanded or target in self.expanded
                                         or recorded_op in self.views),
                               parent=call.parent if inside else None)


def _problem(j: Judgement, judge: Judge) -> Problem | None:
    """The trace's form of a judgement that does not simply run (None for ``runs`` and ``composite``), in the
    judge's words (:meth:`mpsready.ops.judge.Judge.reason`)."""
    why = judge.reason(j)
    if why is None:
        return None
    return Problem(why.kind, why.detail, why.message, j.fixed_in, j.dtype if why.kind == "dtype" else None, j.outcome)


def _mps_calls(cls: _Classifier, calls: Iterable[OpCall]) -> Iterable[tuple[OpCall, str, bool]]:
    """``(call, MPS op, inside a composite)`` for each recorded call, plus the calls a routed fused kernel stands
    for (inside a composite only where the recorded call was: the route names MPS's own kernel, not a
    decomposition of the installed PyTorch).

    A route with ``with`` (:meth:`mpsready.ops.api.SupportDB.route_info`) means the same Python call
    dispatches several ops on MPS: CUDA's fused ``aten::native_dropout`` is ``empty_like``,
    ``bernoulli_.float``, ``div_.Scalar`` and ``mul.Tensor`` there (Dropout.cpp ``_dropout_impl``;
    ``is_fused_kernel_acceptable`` excludes MPS). Those ops are added as calls of the same stage, frame
    and count, with the recorded call's first dtype, so a CUDA trace and a CPU trace (which takes
    ``_dropout_impl`` as MPS does) give the same prediction. A ``parent`` marks a composite's callee,
    and the composite counts as expanded (its callees are then judged, not called unknown).
    """
    calls = list(calls)
    extras: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        info = cls.db.route_info(call.op)
        if info and info.get("with"):
            extras[call.op] = info["with"]
            # before any call is judged: a composite is "expanded" for every call of it, whatever the order
            cls.expanded.update("aten::" + w["parent"] for w in info["with"] if w.get("parent"))
    for call in calls:
        target = cls.target(call.op, call.stage)
        yield call, target, call.parent is not None
        extra = extras.get(call.op) if target != call.op else None
        if not extra:
            continue
        dt = (call.in_dtypes[:1] or call.out_dtypes[:1])
        for w in extra:
            parent = "aten::" + w["parent"] if w.get("parent") else call.parent
            yield (replace(call, parent=parent, in_dtypes=dt, out_dtypes=dt, seconds=0.0), "aten::" + w["op"],
                   call.parent is not None)


# ------------------------------------------------------------------------------------ main entry
def predict(trace: OpTrace, torch: str, macos: str = DEFAULT_MACOS, fallback: bool = False,
            emulated: DeviceJudgements | None = None) -> Prediction:
    """Classify ``trace`` for PyTorch ``torch`` (e.g. ``"2.13"``) and macOS ``macos`` (e.g. ``"14.4"``).

    ``fallback``: assume ``PYTORCH_ENABLE_MPS_FALLBACK=1`` (ops without a kernel then fall back
    to the CPU instead of raising). ``emulated``: what the emulated MPS device judged where the recorder
    cannot see it (:mod:`mpsready.trace.judged`), for a trace run on it; its ops and findings join the
    prediction and the summary says ``emulated``. Raises ``ValueError`` for a torch version outside the
    shipped tables or a malformed macOS version.
    """
    judge = Judge(torch, macos, fallback)  # ValueError for a release without a table or a malformed macOS
    db = judge.db
    expanded = set(getattr(trace, "expanded_ops", ()) or ())
    if not expanded:  # traces recorded before expanded_ops existed: every parent was expanded
        expanded = {c.parent for c in trace.calls if c.parent}
    installed = getattr(trace, "torch_version", "") or ""
    cls = _Classifier(judge, expanded, set(getattr(trace, "view_ops", ()) or ()), judge.same_release(installed),
                      installed)
    outcomes: dict[str, list[str]] = {}  # the judged outcomes of each op's calls
    dev_type = trace.device.split(":")[0]

    preds: dict[str, OpPrediction] = {}
    problem_seconds: dict[str, float] = {}  # traced seconds of the calls that have a problem, per op
    total_calls = 0
    for call, target, inside in _mps_calls(cls, sorted(trace.calls, key=lambda c: stage_key(c.stage))):
        sup = cls.support(target)
        host = (call.stage in HOST_STAGES or call.device not in (dev_type, "meta")
                or (not call.in_dtypes and not call.out_dtypes))
        # the internals of a simulated move of a sparse tensor are specific to the meta device; the implied
        # sparse constructor (below) stands for what a real move dispatches
        simulated_inner = call.device == "meta" and call.parent is not None and bool(call.layouts)
        p = preds.get(target)
        if p is None:
            p = preds[target] = OpPrediction(op=target, verdict="host", status=sup.status, how=sup.how,
                                             sources=list(sup.sources))
        if call.op != target and call.op not in p.recorded_as:
            p.recorded_as.append(call.op)
        if host or simulated_inner:
            continue
        total_calls += call.count
        j = cls.judgement(call, target, call.op, inside)
        outcomes.setdefault(target, []).append(j.outcome)
        if _add_call(p, call, _problem(j, judge)):
            problem_seconds[target] = problem_seconds.get(target, 0.0) + call.seconds
        if any(layout.startswith("sparse") for layout in call.layouts):
            _imply_sparse_ctor(preds, cls, call, outcomes)

    step_seconds = sum(v for k, v in trace.stage_seconds.items() if k not in HOST_STAGES) or 0.0
    for p in preds.values():
        if p.verdict == "host":
            continue
        p.verdict = judged_verdict(outcomes.get(p.op, ()), p.status == "composite")
        if p.problems:
            p.call_share = p.count / total_calls if total_calls else 0.0
            p.time_share = min(1.0, problem_seconds.get(p.op, 0.0) / step_seconds) if step_seconds else 0.0
            fixes = [pr.fixed_in for pr in p.problems if pr.kind != "unknown"]
            p.fixed_in = None if (not fixes or None in fixes) else max(cast(list[str], fixes), key=versions.release)
    ops = sorted(preds.values(), key=lambda o: (_VERDICT_RANK[o.verdict], o.op))
    findings = _op_findings(ops, db.torch_version, fallback) + dtype_findings(trace, judge)
    findings += _stage_findings(trace)
    if not judge.available:
        findings.append(Finding(
            code=R.OPS_RELEASE_MACOS.code, severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted: torch {db.torch_version} needs macOS {db.min_macos} for MPS; on macOS {macos} "
                    "torch.backends.mps.is_available() is False and no op of the step can run on MPS.",
            location=Location(), fix=f"upgrade to macOS {db.min_macos} or later, or use an older PyTorch",
            source=getattr(db, "min_macos_source", None), evidence={"min_macos": db.min_macos, "macos": macos}))
    if emulated is not None:
        device_ops, device_found = device_findings(emulated, judge, {o.op for o in ops})
        ops += device_ops
        findings += device_found
    findings = sort_findings(findings)
    summary = _summary(ops, findings, total_calls, step_seconds)
    if emulated is not None:
        summary = dict(summary, emulated=True)
    return Prediction(torch=db.torch_version, macos=macos, fallback=fallback, ops=ops, findings=findings,
                      summary=summary)


_VERDICT_RANK = {"error": 0, "fallback": 1, "unknown": 2, "runs": 3, "composite": 4, "host": 5}


def _add_call(p: OpPrediction, call: Any, problem: Problem | None) -> bool:
    """Count one judged call into its op's prediction (problems, calls, seconds, stages, dtypes, up to five user
    frames, parents); True when the call has a problem."""
    if problem is not None and problem not in p.problems:
        p.problems.append(problem)
    if p.verdict == "host":
        p.verdict = "runs"
    p.count += call.count
    p.seconds += call.seconds
    if call.stage not in p.stages:
        p.stages.append(call.stage)
    for dt in call.in_dtypes + call.out_dtypes:
        if dt not in p.dtypes:
            p.dtypes.append(dt)
    if call.frame and call.frame not in p.frames and len(p.frames) < 5:
        p.frames.append(call.frame)
        p.frame_stages.append(call.stage)
    if call.parent and call.parent not in p.parents:
        p.parents.append(call.parent)
    return problem is not None

def _imply_sparse_ctor(preds: dict[str, OpPrediction], cls: _Classifier, call: OpCall,
                       outcomes: dict[str, list[str]]) -> None:
    """A sparse COO tensor on the device is built by ``_sparse_coo_tensor_with_dims_and_tensors`` on the
    SparseMPS key, whether it is moved there (``_to_copy``) or created there (``to_sparse``)
    (aten/src/ATen/native/sparse/SparseTensor.cpp; pytorch#141711). Record that implied call, judged as the
    emulated device judges a sparse tensor landing on MPS."""
    if "sparse_coo" not in call.layouts:
        return
    sup = cls.support(SPARSE_CTOR)
    p = preds.get(SPARSE_CTOR)
    if p is None:
        p = preds[SPARSE_CTOR] = OpPrediction(op=SPARSE_CTOR, verdict="runs", status=sup.status, how=sup.how,
                                              sources=list(sup.sources) + ["implied by a sparse COO tensor on the "
                                                                           "device (pytorch#141711)"])
    p.verdict = "runs"
    if call.op not in p.parents:
        p.parents.append(call.op)
    if call.stage not in p.stages:
        p.stages.append(call.stage)
    if call.frame and call.frame not in p.frames and len(p.frames) < 5:
        p.frames.append(call.frame)
        p.frame_stages.append(call.stage)
    if not p.dtypes:
        p.dtypes = [d for d in dict.fromkeys(call.in_dtypes + call.out_dtypes)]
    j = cls.judge.op(SPARSE_CTOR, CallFacts(dtypes=tuple(p.dtypes[:1]), sparse=True))
    outcomes.setdefault(SPARSE_CTOR, []).append(j.outcome)
    pr = _problem(j, cls.judge)
    if pr is not None and not any(q.kind == pr.kind for q in p.problems):
        if pr.kind == "sparse":
            pr = replace(pr, detail=f"{pr.detail}: a sparse tensor cannot be put on the MPS device")
        p.problems.append(pr)


def _where(p: OpPrediction) -> Location:
    if p.frames:
        f = p.frames[0]
        return Location(path=f.path, line=f.line, operator=p.op, stage=p.frame_stages[0])
    return Location(operator=p.op, stage=p.stages[0] if p.stages else None)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _op_findings(ops: list[OpPrediction], tv: str, fallback: bool) -> list[Finding]:
    out: list[Finding] = []
    for p in ops:
        if not p.problems:
            continue
        loc = _where(p)
        ev_base = {"op": p.op, "calls": p.count, "stages": p.stages, "dtypes": p.dtypes,
                   "call_share": round(p.call_share, 4), "time_share": round(p.time_share, 4)}
        if p.recorded_as:
            ev_base["recorded_as"] = p.recorded_as
        if p.parents:
            ev_base["called_by"] = p.parents
        if len(p.frames) > 1:
            ev_base["other_locations"] = [f"{f.path}:{f.line}" for f in p.frames[1:]]
        src = "; ".join(p.sources[:2]) or None
        seen: set[str] = set()
        for pr in p.problems:
            key = pr.kind + (pr.dtype or "")
            if key in seen:
                continue
            seen.add(key)
            ev = dict(ev_base, fixed_in=pr.fixed_in, expected_message=pr.message) if pr.message else \
                dict(ev_base, fixed_in=pr.fixed_in)
            fixed = (f" First fixed in torch {pr.fixed_in}." if pr.fixed_in else
                     " No shipped PyTorch release fixes it." if pr.kind not in ("unknown",) else "")
            share = (f" {p.count} call(s), {_pct(p.call_share)} of device calls, about {_pct(p.time_share)} of the "
                     "traced step time would run on the CPU with PYTORCH_ENABLE_MPS_FALLBACK=1.")
            via = f" (called by {', '.join(p.parents[:3])})" if p.parents else ""
            pre = f"Predicted for torch {tv}{via}: "
            falls = pr.outcome == "fallback" if pr.outcome else fallback
            if pr.kind == "missing":
                code = R.OPS_FALLBACK.code if falls else R.OPS_MISSING.code
                sev = Severity.DEGRADES if falls else Severity.BLOCKER
                what = "falls back to the CPU (PYTORCH_ENABLE_MPS_FALLBACK=1)" if falls else "raises on MPS"
                msg = f"{pre}{p.op} has no MPS kernel and {what}.{share}{fixed}"
            elif pr.kind == "always_fallback":
                code, sev = R.OPS_FALLBACK.code, Severity.DEGRADES
                msg = f"{pre}{p.op} always runs on the CPU on MPS ({pr.detail}).{share}{fixed}"
            elif pr.kind == "guard":
                code, sev = R.OPS_MISSING.code, Severity.BLOCKER
                msg = f"{pre}{p.op} {pr.detail}.{fixed}"
            elif pr.kind == "sparse":
                code, sev = R.OPS_SPARSE.code, Severity.BLOCKER
                msg = f"{pre}{p.op}: {pr.detail}.{fixed}"
            elif pr.kind == "macos":
                code, sev = R.OPS_MACOS.code, Severity.BLOCKER
                msg = f"{pre}{p.op}: {pr.detail}."
            elif pr.kind == "dtype":
                code, sev = R.OPS_DTYPE.code, Severity.BLOCKER
                msg = f"{pre}{p.op}: {pr.detail}.{fixed}"
            else:
                custom = not p.op.startswith("aten::")
                code = R.OPS_CUSTOM.code if custom else R.OPS_UNKNOWN.code
                sev = Severity.INFO
                msg = f"{pre}{p.op}: MPS support unknown ({pr.detail}); not assumed to run."
            judged = judged_severity(pr.outcome) if pr.outcome else None
            sev = Severity(judged) if judged else sev  # the judge's severity; the chain above only names the rule
            out.append(Finding(code=code, severity=sev, message=msg, location=loc, basis=Basis.PREDICTED,
                               fix=_fix(pr, p), source=src, evidence=ev))
    return out


def _fix(pr: Problem, p: OpPrediction) -> str:
    if pr.kind in ("missing", "always_fallback"):
        up = f"upgrade to torch {pr.fixed_in}, " if pr.fixed_in else ""
        return (f"{up}replace {p.op.split('::')[1]}, run it on the CPU explicitly, or set "
                "PYTORCH_ENABLE_MPS_FALLBACK=1 before importing torch")
    if pr.kind == "sparse":
        up = f"upgrade to torch {pr.fixed_in} (SparseMPS kernels), or " if pr.fixed_in else ""
        return f"{up}keep the tensor dense or on the CPU (e.g. convert the buffer with .to_dense())"
    if pr.kind == "dtype":
        return f"cast {pr.dtype} tensors to a supported dtype around {p.op.split('::')[1]}"
    if pr.kind == "macos":
        return "upgrade macOS or run this op on the CPU"
    if pr.kind == "guard":
        return "run this op on the CPU"
    return "observe it on a Mac with `mpsready record ENTRY --device mps`"


def _stage_findings(trace: OpTrace) -> list[Finding]:
    out = []
    for s in trace.stages:
        if s.get("status") in ("failed", "crashed"):
            out.append(Finding(code=R.OPS_STAGE.code, severity=Severity.INFO,
                               message=f"Stage {s['stage']} failed on the trace device ({trace.device}): "
                                       f"{s.get('error_type')}: {(s.get('error') or '')[:200].rstrip('.')}. Ops after the failure "
                                       "are not in the prediction.",
                               location=Location(stage=s["stage"]), basis=Basis.PREDICTED,
                               evidence={"stage": s["stage"], "error_type": s.get("error_type")}))
    return out


def _summary(ops: Iterable[OpPrediction], findings: list[Finding], total_calls: int,
             step_seconds: float) -> dict[str, Any]:
    ops = list(ops)
    count = {v: sum(1 for o in ops if o.verdict == v) for v in ("runs", "composite", "error", "fallback",
                                                                "unknown", "host")}
    fb = [o for o in ops if any(p.kind in ("missing", "always_fallback") for p in o.problems)]
    return {
        "ops": len([o for o in ops if o.verdict != "host"]),
        "verdicts": count,
        "device_calls": total_calls,
        "traced_step_seconds": round(step_seconds, 6),
        "fallback_call_share": round(sum(o.call_share for o in fb), 4),
        "fallback_time_share": round(min(1.0, sum(o.time_share for o in fb)), 4),
        "findings": {sev.value: sum(1 for f in findings if f.severity is sev) for sev in Severity},
        "predicted_errors": count["error"],
        "dtype_blockers": sum(1 for f in findings if f.code.startswith("DTY") and f.severity is Severity.BLOCKER),
    }
