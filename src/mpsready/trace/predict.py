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

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from mpsready.findings import Basis, Finding, Location, Severity, sort_findings
from mpsready.ops import api as ops_api
from mpsready.ops.judge import CallFacts, Judge, Judgement
from mpsready.ops.judge import severity as judged_severity
from mpsready.ops.judge import verdict as judged_verdict
from mpsready.ops.messages import ISSUE_NEW, ISSUE_OLD  # noqa: F401  (re-exported for older callers)
from mpsready.trace import rules as R
from mpsready.trace.model import DtypeEvent, Frame, OpCall, OpTrace

from mpsready.defaults import DEFAULT_MACOS  # noqa: F401  (shared with the argument definitions)
_GRAD_SCALER = "torch/amp/grad_scaler.py"
HOST_STAGES = frozenset({"build"})
STAGE_ORDER = ("build", "to_device", "data", "forward", "loss", "backward", "optimizer_step", "checkpoint",
               "inference", "step")
SPARSE_CTOR = "aten::_sparse_coo_tensor_with_dims_and_tensors"

# What a creating op means for the user (recorder: aten::lift_fresh is where torch.tensor,
# torch.as_tensor and torch.from_numpy hand over a tensor made from Python or NumPy data).
_CREATOR_HINTS = {
    "aten::lift_fresh": "a tensor made from Python or NumPy data (torch.tensor, torch.as_tensor, torch.from_numpy; "
                        "NumPy arrays default to float64)",
    "aten::_to_copy": "a cast or device move (.to(...), .double(), .to(device) of a tensor of that dtype)",
    "aten::arange": "torch.arange with that dtype", "aten::arange.start": "torch.arange with that dtype",
    "aten::arange.start_step": "torch.arange with that dtype",
}


@dataclass(frozen=True)
class Problem:
    """Why an op does not simply run on MPS: ``kind`` is ``missing``, ``always_fallback``, ``guard``,
    ``sparse``, ``macos``, ``dtype`` or ``unknown``; ``dtype`` is set for ``dtype``."""

    kind: str
    detail: str
    message: str | None = None
    fixed_in: str | None = None
    dtype: str | None = None
    outcome: str | None = field(default=None, compare=False)  # the judge's outcome (not in the JSON)


@dataclass
class OpPrediction:
    """The prediction for one op as MPS would dispatch it, over all its recorded calls.

    ``recorded_as``: the device-specific names the trace saw when they differ from ``op``
    (``aten::mkldnn_convolution`` for ``aten::_mps_convolution``). ``count``/``seconds``: calls
    and traced wall time (seconds, including callees). ``call_share``/``time_share``: fraction of
    the predicted device calls and of the traced step time (0..1); meaningful for problems.
    """

    op: str
    verdict: str
    status: str
    how: str = ""
    recorded_as: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    count: int = 0
    seconds: float = 0.0
    stages: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    frame_stages: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    call_share: float = 0.0
    time_share: float = 0.0
    fixed_in: str | None = None
    sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "op": self.op, "basis": Basis.PREDICTED.value, "verdict": self.verdict, "status": self.status,
            "how": self.how, "count": self.count, "seconds": round(self.seconds, 7), "stages": self.stages,
            "dtypes": self.dtypes, "locations": [dict(f.to_dict(), stage=s) for f, s in
                                                 zip(self.frames, self.frame_stages)],
        }
        if self.recorded_as:
            d["recorded_as"] = self.recorded_as
        if self.parents:
            d["called_by"] = self.parents
        if self.problems:
            d["problems"] = [{k: v for k, v in p.__dict__.items() if v is not None and k != "outcome"}
                             for p in self.problems]
            d["call_share"] = round(self.call_share, 4)
            d["time_share"] = round(self.time_share, 4)
            d["fixed_in"] = self.fixed_in
        if self.sources:
            d["sources"] = self.sources
        return d


@dataclass
class Prediction:
    """All op predictions and findings for one target (``torch`` is the resolved table release)."""

    torch: str
    macos: str
    fallback: bool
    ops: list[OpPrediction]
    findings: list[Finding]
    summary: dict[str, Any]

    def op(self, name: str) -> OpPrediction | None:
        return next((o for o in self.ops if o.op == name), None)


# ------------------------------------------------------------------------------------ helpers
def _stage_key(stage: str) -> int:
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER)




GRAD_OFF_STAGES = frozenset({"inference", "checkpoint"})  # the runner's stages without autograd


class _Classifier:
    """Asks :class:`mpsready.ops.judge.Judge` about each recorded call; adds only what the trace knows: the stage
    (grad mode), whether a composite's callees were recorded, whether a call was made inside a composite."""

    def __init__(self, judge: Judge, expanded: set[str], views: set[str] = frozenset(), exact: bool = True,
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
        sparse = any(l.startswith("sparse") for l in call.layouts)
        j = self.judge.op(target, CallFacts(dtypes=call.in_dtypes, out_dtypes=call.out_dtypes, sparse=sparse),
                          grad=call.stage not in GRAD_OFF_STAGES)
        j = self.judge.inside_composite(j, inside, self.exact, self.installed)
        if recorded_op in self.expanded or target in self.expanded or recorded_op in self.views:
            return j
        return self.judge.callees_unseen(j)


def _problem(j: Judgement, sup: ops_api.OpSupport, tv: str) -> Problem | None:
    """The trace's form of a judgement that does not simply run (None for ``runs`` and ``composite``): ``detail``
    says why in a few words, ``message`` is what Python would print (exception class first)."""
    if j.outcome in ("runs", "composite"):
        return None
    kind = j.kind or "unknown"
    if j.outcome == "fallback":
        msg = f"UserWarning: {j.message}" if j.message else None
    elif j.exception and j.message:
        msg = f"{j.exception}: {j.message}"
    else:
        msg = j.message
    exc = (sup.dtype_exceptions.get(j.dtype or "") or {}) if kind == "dtype" else {}
    if kind == "missing":
        detail = f"no MPS kernel in torch {tv}"
    elif kind == "always_fallback":
        detail = f"on PyTorch's always-CPU list in torch {tv} (MPSFallback.mm)"
    elif kind == "guard":
        detail = f"registered to raise on MPS in torch {tv}"
    elif kind == "sparse":
        detail = f"no SparseMPS kernel in torch {tv}"
    elif kind == "macos" and sup.min_macos:
        detail = f"the MPS kernel needs macOS {sup.min_macos}"
    elif kind == "dtype" and exc.get("unsupported"):
        detail = f"{j.dtype} unsupported by the MPS kernel"
    elif kind == "dtype" and exc.get("min_macos"):
        detail = f"{j.dtype} needs macOS {exc['min_macos']}"
    elif kind == "composite_unseen":
        kind, detail, msg = "unknown", "composite op whose callees were not recorded (trace with this --torch)", None
    elif kind == "unknown":
        ns = j.op.split("::", 1)[0]
        msg = None
        detail = (f"custom operator namespace '{ns}': MPS support not in the shipped data" if ns != "aten"
                  else f"not in the support table of torch {tv}")
    else:  # callee_of_other_release, shape, and kinds the judge may add: its own words
        detail = j.message or kind
    return Problem(kind, detail, msg, j.fixed_in, j.dtype if kind == "dtype" else None, j.outcome)


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
def predict(trace: OpTrace, torch: str, macos: str = DEFAULT_MACOS, fallback: bool = False) -> Prediction:
    """Classify ``trace`` for PyTorch ``torch`` (e.g. ``"2.13"``) and macOS ``macos`` (e.g. ``"14.4"``).

    ``fallback``: assume ``PYTORCH_ENABLE_MPS_FALLBACK=1`` (ops without a kernel then fall back
    to the CPU instead of raising). Raises ``ValueError`` for a torch version outside the shipped
    tables or a malformed macOS version.
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
    for call, target, inside in _mps_calls(cls, sorted(trace.calls, key=lambda c: _stage_key(c.stage))):
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
        pr1 = _problem(j, sup, db.torch_version)
        probs = [pr1] if pr1 is not None else []
        for pr in probs:
            if pr not in p.problems:
                p.problems.append(pr)
        if p.verdict == "host":
            p.verdict = "runs"
        p.count += call.count
        p.seconds += call.seconds
        if probs:
            problem_seconds[target] = problem_seconds.get(target, 0.0) + call.seconds
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
        if any(l.startswith("sparse") for l in call.layouts):
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
            p.fixed_in = None if (not fixes or None in fixes) else max(fixes, key=ops_api._vtuple)
    ops = sorted(preds.values(), key=lambda o: (_VERDICT_RANK[o.verdict], o.op))
    findings = _op_findings(ops, db.torch_version, fallback) + _dtype_findings(trace, db, macos, judge)
    findings += _stage_findings(trace)
    if not db.macos_supported(macos):
        findings.append(Finding(
            code=R.OPS_RELEASE_MACOS.code, severity=Severity.BLOCKER, basis=Basis.PREDICTED,
            message=f"Predicted: torch {db.torch_version} needs macOS {db.min_macos} for MPS; on macOS {macos} "
                    "torch.backends.mps.is_available() is False and no op of the step can run on MPS.",
            location=Location(), fix=f"upgrade to macOS {db.min_macos} or later, or use an older PyTorch",
            source=getattr(db, "min_macos_source", None), evidence={"min_macos": db.min_macos, "macos": macos}))
    findings = sort_findings(findings)
    summary = _summary(ops, findings, total_calls, step_seconds)
    return Prediction(torch=db.torch_version, macos=macos, fallback=fallback, ops=ops, findings=findings,
                      summary=summary)


_VERDICT_RANK = {"error": 0, "fallback": 1, "unknown": 2, "runs": 3, "composite": 4, "host": 5}


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
    pr = _problem(j, sup, cls.db.torch_version)
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


def _dtype_findings(trace: OpTrace, db: ops_api.SupportDB, macos: str, judge: Judge | None = None) -> list[Finding]:
    rules = {r.dtype: r for r in db.dtype_rules(macos=macos)}
    if trace.emulated and judge is not None:
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
            groups.items(), key=lambda kv: (_stage_key(kv[1][0].stage), kv[0][0], kv[0][1])):
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
        ev = {"dtype": dtype, "op": op, "how": how, "count": sum(e.count for e in evs),
              "expected_message": rule.message, "fixed_in": None}
        if origin:
            ev["origin"] = origin
        if internal:
            ev["internal"] = internal
        if how == "created" and folded.get(dtype):
            ev["also_used_by"] = folded.pop(dtype)[:10]
        loc = Location(path=frame.path if frame else None, line=frame.line if frame else None, operator=op,
                       stage=stage)
        out.append(Finding(code=code, severity=sev, message=msg, location=loc, basis=Basis.PREDICTED,
                           fix=_dtype_fix(dtype), source=rule.source, evidence=ev))
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
