"""``compare_records``: the comparison of two run records, optionally against a reference.

Reads records through :class:`~mpsready.record.layout.RunRecord` (JSON and safetensors;
nothing is unpickled, torch is not needed). Raw tensors are streamed one pair at a time,
in chunks (:mod:`mpsready.compare.tensorio`), so memory is bounded by a few chunk buffers
whatever the size of the records.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Iterator

from mpsready.compare.matching import StructureIssue, match_entries, match_stages, sort_key
from mpsready.compare.metrics import PairMetrics, jsonable, checksum_identical, compare_chunks, compare_stats
from mpsready.compare.tensorio import RawTensorError, RawTensorFile, compute_dtype, iter_chunks
from mpsready.compare.tolerances import Tolerance, ToleranceSpec, default_tolerance
from mpsready.record.layout import RunRecord

# Three-way factor: B counts as "not worse" than A against the reference C when
# err(B,C) <= K * err(A,C) + EPS * atol, err being the max absolute error against C
# (PairMetrics.error; for stats-only pairs the worst statistic in units of its bound, with
# slack EPS). Two correct implementations of the same float32 maths differ in reduction
# order and fused operations, which moves rounding error by small factors; 2 leaves room
# for that, while a backend that loses precision (TF32, a half-precision accumulator, a
# lower-accuracy transcendental) is off by 10x or more. The slack (0.1% of atol) keeps an
# exactly-matching A (err 0) from making any rounding in B "worse".
DEFAULT_K = 2.0
EPS = 1e-3
CHUNK = 1 << 20  # elements read per I/O call

DROPOUT_TYPES = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")


@dataclass
class ThreeWay:
    """B and A against the reference C for one tensor (C is the expected side)."""

    a_vs_ref: PairMetrics | None
    b_vs_ref: PairMetrics | None
    tolerance: Tolerance
    k: float
    judgement: str  # "b_not_worse" | "b_worse" | "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {"a_vs_ref": self.a_vs_ref.to_dict() if self.a_vs_ref else None,
                "b_vs_ref": self.b_vs_ref.to_dict() if self.b_vs_ref else None,
                "tolerance": self.tolerance.to_dict(), "k": self.k, "judgement": self.judgement}


@dataclass
class TensorComparison:
    """One matched tensor. ``status``: ``pass``, ``fail`` or ``incomparable`` (shapes differ)."""

    key: str
    kind: str
    name: str
    step: int
    order: int
    module_type: str | None
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    dtype_a: str
    dtype_b: str
    tolerance: Tolerance
    status: str
    metrics: PairMetrics | None = None
    note: str | None = None
    three_way: ThreeWay | None = None

    @property
    def failed(self) -> bool:
        return self.status != "pass"

    def to_dict(self) -> dict[str, Any]:
        d = {"key": self.key, "kind": self.kind, "name": self.name, "step": self.step, "order": self.order,
             "module_type": self.module_type, "shape_a": list(self.shape_a), "shape_b": list(self.shape_b),
             "dtype_a": self.dtype_a, "dtype_b": self.dtype_b, "tolerance": self.tolerance.to_dict(),
             "status": self.status, "metrics": self.metrics.to_dict() if self.metrics else None}
        if self.note:
            d["note"] = self.note
        if self.three_way:
            d["three_way"] = self.three_way.to_dict()
        return d


@dataclass
class StepLoss:
    """The loss of one step in both runs (``None`` where the run has none)."""

    index: int
    loss_a: float | None
    loss_b: float | None
    loss_ref: float | None
    abs_diff: float | None
    rel_diff: float | None
    tolerance: Tolerance
    passed: bool | None  # None when a side has no loss

    def to_dict(self) -> dict[str, Any]:
        return {k: (jsonable(v) if not isinstance(v, Tolerance) else v.to_dict()) for k, v in self.__dict__.items()}


@dataclass
class RunInfo:
    path: str
    device: str
    basis: str
    dtype: str | None
    raw_tensors: bool
    entry: str | None
    observed_on: str | None = None  # the recorder's description, e.g. "cpu (Intel Xeon); not an MPS run"
    synthetic_inputs: str | None = None  # the record whose input shapes were replayed, if any
    name: str | None = None  # the run's label: ``compare --label``, else ``record --label`` (manifest "label")

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["label"] = self.label
        return d

    @property
    def label(self) -> str:
        """``"cpu"``, ``"cpu float64"`` when the record names its dtype, and ``"NAME (cpu float64)"`` for a
        labelled run, so that three CPU variants do not read as three identical "cpu" rows."""
        base = self.device
        if self.dtype and self.dtype.replace("float", "").isdigit():
            base = f"{self.device} {self.dtype}"
        return f"{self.name} ({base})" if self.name else base


@dataclass
class Comparison:
    """Everything ``mpsready compare`` reports; renderers read only this."""

    a: RunInfo
    b: RunInfo
    reference: RunInfo | None
    tensors: list[TensorComparison]
    steps: list[StepLoss]
    structure: list[StructureIssue]
    first_forward: TensorComparison | None
    first_backward: TensorComparison | None
    first_param: TensorComparison | None
    random_ops: list[str]
    spec: ToleranceSpec
    k: float = DEFAULT_K
    findings: list[Any] = field(default_factory=list)

    @property
    def basis(self) -> str:
        runs = [self.a, self.b] + ([self.reference] if self.reference else [])
        return "observed" if all(r.basis == "observed" for r in runs) else "predicted"

    @property
    def failed(self) -> list[TensorComparison]:
        return [t for t in self.tensors if t.failed]

    @property
    def loss_failed(self) -> list[StepLoss]:
        return [s for s in self.steps if s.passed is False]

    @property
    def ok(self) -> bool:
        """True when everything matched and is within tolerance (exit code 0)."""
        return not self.failed and not self.structure and not self.loss_failed

    @property
    def stats_only(self) -> list[TensorComparison]:
        return [t for t in self.tensors if t.metrics is not None and t.metrics.method == "stats"]

    @property
    def worse(self) -> list[TensorComparison]:
        return [t for t in self.tensors if t.three_way and t.three_way.judgement == "b_worse"]

    @property
    def rng_dependent(self) -> bool:
        return bool(self.random_ops)

    def summary(self) -> dict[str, Any]:
        bases: dict[str, int] = {}
        for t in self.tensors:
            if t.metrics:
                bases[t.metrics.method] = bases.get(t.metrics.method, 0) + 1
        d = {
            "ok": self.ok,
            "compared": len(self.tensors),
            "passed": sum(1 for t in self.tensors if t.status == "pass"),
            "failed": sum(1 for t in self.tensors if t.status == "fail"),
            "incomparable": sum(1 for t in self.tensors if t.status == "incomparable"),
            "identical": sum(1 for t in self.tensors if t.metrics and t.metrics.identical),
            "by_method": bases,
            "structure_issues": len(self.structure),
            "loss_steps_failed": len(self.loss_failed),
            "rng_dependent": self.rng_dependent,
        }
        if self.reference:
            d["three_way"] = {
                "k": self.k,
                "b_worse": len(self.worse),
                "b_not_worse": sum(1 for t in self.tensors if t.three_way and t.three_way.judgement == "b_not_worse"),
                "unknown": sum(1 for t in self.tensors if t.three_way and t.three_way.judgement == "unknown"),
            }
        return d

    def loss_drift(self) -> dict[str, Any] | None:
        """How the loss difference evolves: first and last absolute difference, their
        ratio, and whether it grew at every step (the runs drift apart)."""
        diffs = [s.abs_diff for s in self.steps if s.abs_diff is not None]
        if not diffs:
            return None
        first, last = diffs[0], diffs[-1]
        growth = (last / first) if first else (math.inf if last else 1.0)
        grows = len(diffs) >= 3 and all(y >= x for x, y in zip(diffs, diffs[1:])) and last > first
        rels = [s.rel_diff for s in self.steps if s.rel_diff is not None]
        return {"first_abs_diff": first, "last_abs_diff": last, "growth": jsonable(growth),
                "grows_every_step": grows, "max_rel_diff": jsonable(max(rels)) if rels else None,
                "steps": len(diffs)}


def _run_info(r: RunRecord, name: str | None = None) -> RunInfo:
    m = r.manifest
    if name is None and isinstance(m.get("label"), str) and m["label"].strip():
        name = m["label"].strip()
    entry = m.get("entry")
    if isinstance(entry, dict):
        entry = entry.get("spec") or entry.get("name") or str(entry)
    syn = m.get("synthetic_inputs")
    return RunInfo(path=str(r.path), device=str(r.device), basis=str(m.get("basis", "observed")),
                   dtype=m.get("dtype"), raw_tensors=bool(m.get("raw_tensors", False)),
                   entry=None if entry is None else str(entry),
                   observed_on=None if m.get("observed_on") is None else str(m["observed_on"]),
                   synthetic_inputs=None if not syn else str(syn), name=name)


def _open(x: Any) -> RunRecord:
    return x if isinstance(x, RunRecord) else RunRecord.open(x)


@contextlib.contextmanager
def _raw_files(records: list[RunRecord | None], step: int) -> Iterator[list[RawTensorFile | None]]:
    files: list[RawTensorFile | None] = []
    try:
        for r in records:
            if r is not None and r.has_raw(step):
                files.append(RawTensorFile(r.raw_path(step)))
            else:
                files.append(None)
        yield files
    finally:
        for f in files:
            if f is not None:
                f.close()


def _raw_info(f: RawTensorFile | None, e: Any) -> Any:
    if f is None or e.key not in f:
        return None
    info = f.tensors[e.key]
    if not info.supported or info.numel != math.prod(e.shape):
        return None
    return info


def compare_pair(ea: Any, eb: Any, fa: RawTensorFile | None, fb: RawTensorFile | None, tol: Tolerance,
                 trust_checksums: bool = True, chunk: int = CHUNK,
                 histogram: bool = False) -> tuple[PairMetrics | None, str | None]:
    """Metrics of one pair (``ea`` expected) and an optional note; ``None`` metrics when
    the shapes differ so no element can be paired."""
    if tuple(ea.shape) != tuple(eb.shape):
        return None, f"shape differs: {list(ea.shape)} in A, {list(eb.shape)} in B"
    note = None if ea.dtype == eb.dtype else f"dtype differs: {ea.dtype} in A, {eb.dtype} in B"
    if trust_checksums and ea.dtype == eb.dtype and ea.checksum and ea.checksum == eb.checksum:
        return checksum_identical(ea.stats.numel, ea.stats.nan, ea.stats.inf), note
    ia, ib = _raw_info(fa, ea), _raw_info(fb, eb)
    if ia is not None and ib is not None:
        target = compute_dtype(ia.dtype, ib.dtype)
        assert fa is not None and fb is not None
        return compare_chunks(iter_chunks(fa, ia, fb, ib, target, chunk), ia.numel, tol, histogram), note
    missing = [s for s, i in (("A", ia), ("B", ib)) if i is None]
    why = f"no raw tensor in {' and '.join(missing)}"
    return compare_stats(ea.stats, eb.stats, tol), (note + "; " if note else "") + f"stats only ({why})"


def manifest_random_ops(r: RunRecord) -> list[str] | None:
    """The random operators a record's manifest lists, or ``None`` when it says nothing.

    ``mpsready record`` writes ``random_ops`` as ``{overload: {"calls": n, "stages": [...]}}``
    (docs/run-record.md); a list of names, or a mapping name -> count, is accepted too. Entries
    with zero calls are ignored.
    """
    ops = r.manifest.get("random_ops")
    if isinstance(ops, dict):
        out = []
        for k, v in ops.items():
            n = v.get("calls") if isinstance(v, dict) else v
            if n:
                out.append(str(k))
        return out
    if isinstance(ops, list):
        return [str(x) for x in ops]
    return None


def detect_random_ops(ra: RunRecord, rb: RunRecord, tensors: list[TensorComparison],
                      structure: list[StructureIssue]) -> list[str]:
    """Random operators that may explain differences between the runs.

    When both manifests carry ``random_ops`` (:func:`manifest_random_ops`), their union and
    nothing else: the recorder saw every random aten call of the step, functional ones
    (``F.dropout``, ``torch.randn`` in ``forward``) included, so a record listing none used none.
    Otherwise (an older record, a worker that died before reporting) the listed ops plus dropout
    modules (``module_type`` a torch.nn dropout class) whose outputs differ between the runs or
    could not be paired: a dropout with p=0, or in eval mode, draws nothing and passes its input
    through, so dropout modules whose outputs agree are not reported.
    """
    listed = [manifest_random_ops(r) for r in (ra, rb)]
    found: list[str] = [op for ops in listed if ops for op in ops]
    if all(ops is not None for ops in listed):
        return sorted(set(found))
    unmatched = {k for i in structure for k in i.keys_a + i.keys_b}
    for t in tensors:
        if t.kind == "activation" and t.module_type in DROPOUT_TYPES and t.failed:
            found.append(f"{t.module_type} ({t.name.split('#')[0]})")
    for r in (ra, rb):
        for e in r.entries():
            if e.kind == "activation" and e.module_type in DROPOUT_TYPES and e.key in unmatched:
                found.append(f"{e.module_type} ({e.name.split('#')[0]})")
    return sorted(set(found))


def _loss_dtype(entries: list[Any], step: int) -> str:
    for e in entries:
        if e.kind == "loss" and e.step == step:
            return e.dtype
    return "float32"


def _input_issues(ra: RunRecord, rb: RunRecord) -> list[StructureIssue]:
    """One run replayed synthetic inputs (``mpsready record --synthetic-inputs``), the other
    did not: the inputs differ by construction, so does everything computed from them."""
    sa, sb = ra.manifest.get("synthetic_inputs"), rb.manifest.get("synthetic_inputs")
    if bool(sa) == bool(sb):
        return []
    side, other = ("A", "B") if sa else ("B", "A")
    return [StructureIssue("inputs", f"{side} replayed synthetic inputs and {other} did not: the inputs differ by "
                           "construction; record both runs with --synthetic-inputs from the same record to compare "
                           "them")]


def _loss_of(m: dict[str, Any]) -> Any:
    """A step's loss; JSON has no NaN/Inf, so the recorder writes ``loss: null`` and
    ``loss_nonfinite: "nan" | "inf" | "-inf"`` for a non-finite loss."""
    loss = m.get("loss")
    if loss is None and m.get("loss_nonfinite") in ("nan", "inf", "-inf"):
        return float(m["loss_nonfinite"])
    return loss


def _step_losses(ra: RunRecord, rb: RunRecord, rc: RunRecord | None, spec: ToleranceSpec) -> list[StepLoss]:
    la = {int(m["index"]): _loss_of(m) for m in ra.step_metrics if "index" in m}
    lb = {int(m["index"]): _loss_of(m) for m in rb.step_metrics if "index" in m}
    lc = {int(m["index"]): _loss_of(m) for m in rc.step_metrics if "index" in m} if rc else {}
    out = []
    for i in sorted(la.keys() | lb.keys()):
        a, b = la.get(i), lb.get(i)
        tol = spec.resolve("loss", _loss_dtype(ra.entries(), i), _loss_dtype(rb.entries(), i))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if math.isfinite(a) and math.isfinite(b):
                ad = abs(b - a)
                rd = ad / abs(a) if a else (0.0 if ad == 0 else math.inf)
                passed = ad <= tol.atol + tol.rtol * abs(a)
            else:  # as for tensors: the same NaN/Inf on both sides agrees, on one side only it does not
                same = a == b or (math.isnan(a) and math.isnan(b))
                ad, rd, passed = (0.0, 0.0, True) if same else (math.inf, math.inf, False)
            out.append(StepLoss(i, a, b, lc.get(i), ad, rd, tol, passed))
        else:
            out.append(StepLoss(i, a, b, lc.get(i), None, None, tol, None))
    return out


def _first(tensors: list[TensorComparison], kinds: tuple[str, ...]) -> TensorComparison | None:
    cands = [t for t in tensors if t.failed and t.kind in kinds]
    return min(cands, key=sort_key, default=None)


def compare_records(a: str | os.PathLike[str] | RunRecord, b: str | os.PathLike[str] | RunRecord,
                    reference: str | os.PathLike[str] | RunRecord | None = None,
                    tolerances: ToleranceSpec | None = None, k: float = DEFAULT_K,
                    trust_checksums: bool = True, chunk: int = CHUNK, labels: tuple[str | None, ...] = (),
                    histogram: bool = False) -> Comparison:
    """Compare run records ``a`` (baseline, e.g. CUDA) and ``b`` (candidate, e.g. MPS).

    ``reference`` (e.g. the same step on the CPU in float64) adds the three-way judgement
    per tensor. ``tolerances`` defaults to the dtype defaults of
    ``torch.testing.assert_close``. With ``trust_checksums`` equal sha256 checksums (same
    shape and dtype) count as identical without reading the tensors. Raises
    :class:`~mpsready.record.layout.RecordError` for a missing or malformed record and
    :class:`~mpsready.compare.tensorio.RawTensorError` for a malformed safetensors file.
    The findings (NUM1xx) are in ``Comparison.findings``.

    ``labels``: names for A, B and the reference, in that order (``--label``; a record's own ``label``
    otherwise). ``histogram``: each raw pair's metrics carry the error histogram per decade.
    """
    ra, rb = _open(a), _open(b)
    rc = _open(reference) if reference is not None else None
    spec = tolerances or ToleranceSpec()
    pairs, issues = match_entries(ra.entries(), rb.entries())
    issues = match_stages(ra.stages, rb.stages) + _input_issues(ra, rb) + issues
    ref_index = {(e.step, e.key): e for e in rc.entries()} if rc else {}
    tensors: list[TensorComparison] = []
    for step, group in groupby(pairs, key=lambda p: p[0].step):
        with _raw_files([ra, rb, rc], step) as (fa, fb, fc):
            for ea, eb in group:
                tol = spec.resolve(ea.key, ea.dtype, eb.dtype)
                metrics, note = compare_pair(ea, eb, fa, fb, tol, trust_checksums, chunk, histogram)
                status = "incomparable" if metrics is None else ("pass" if metrics.passed else "fail")
                if metrics is None:
                    issues.append(StructureIssue("shape", f"{ea.key} (step {step}): {note}", [ea.key], [eb.key],
                                                 [step]))
                tc = TensorComparison(ea.key, ea.kind, ea.name, ea.step, ea.order, ea.module_type or eb.module_type,
                                      tuple(ea.shape), tuple(eb.shape), ea.dtype, eb.dtype, tol, status, metrics,
                                      note)
                if rc is not None:
                    tc.three_way = _three_way(ea, eb, ref_index.get((step, ea.key)), fa, fb, fc, spec, k,
                                              trust_checksums, chunk)
                tensors.append(tc)
    steps = _step_losses(ra, rb, rc, spec)
    if rc is not None and tensors:
        # a reference from another model or entry pairs with little or nothing: say so rather than let its
        # three-way judgements read "unknown" (or, for a same-named loss, compare unrelated numbers)
        lacking = [t for t in tensors if (t.step, t.key) not in ref_index
                   or tuple(ref_index[(t.step, t.key)].shape) != t.shape_a]
        if lacking:
            issues.append(StructureIssue(
                "reference", f"the reference C has no tensor of the same shape for {len(lacking)} of {len(tensors)} "
                             "compared tensors (another model or entry?); their three-way judgement is unknown",
                keys_a=[t.key for t in lacking[:20]]))
    if not tensors and not any(s.passed is not None for s in steps):
        # a check that compared nothing must not read as passed
        issues.append(StructureIssue("empty", "nothing to compare: the records share no tensor and no step loss"))
    comp = Comparison(
        a=_run_info(ra, _nth(labels, 0)), b=_run_info(rb, _nth(labels, 1)),
        reference=_run_info(rc, _nth(labels, 2)) if rc else None, tensors=tensors,
        steps=steps, structure=issues,
        first_forward=_first(tensors, ("input", "activation", "output", "loss")),
        first_backward=_first(tensors, ("grad",)), first_param=_first(tensors, ("param",)),
        random_ops=detect_random_ops(ra, rb, tensors, issues), spec=spec, k=k,
    )
    from mpsready.compare.diagnose import findings_for

    comp.findings = findings_for(comp)
    from mpsready.findings import Basis, sort_findings
    from mpsready.numerics.rules import compare_nonfinite_finding

    first = compare_nonfinite_finding(ra.manifest, rb.manifest,
                                      Basis.OBSERVED if comp.basis == "observed" else Basis.PREDICTED)
    if first is not None:  # NUM302: which run went non-finite first, at which op and line
        comp.findings = sort_findings(comp.findings + [first])
    return comp


def _nth(labels: tuple[str | None, ...], i: int) -> str | None:
    return labels[i] if i < len(labels) and labels[i] else None


def _three_way(ea: Any, eb: Any, ec: Any, fa: Any, fb: Any, fc: Any, spec: ToleranceSpec, k: float,
               trust: bool, chunk: int) -> ThreeWay:
    dts = [ea.dtype, eb.dtype] + ([ec.dtype] if ec is not None else [])
    tol = spec.resolve(ea.key, *dts)
    if ec is None:
        return ThreeWay(None, None, tol, k, "unknown")
    ma, _ = compare_pair(ec, ea, fc, fa, tol, trust, chunk)
    mb, _ = compare_pair(ec, eb, fc, fb, tol, trust, chunk)
    if ma is None or mb is None or ma.error is None or mb.error is None or ma.method != mb.method \
            and "stats" in (ma.method, mb.method):
        return ThreeWay(ma, mb, tol, k, "unknown")
    slack = EPS if ma.method == "stats" else EPS * tol.atol
    judgement = "b_not_worse" if mb.error <= k * ma.error + slack else "b_worse"
    return ThreeWay(ma, mb, tol, k, judgement)


__all__ = ["compare_records", "Comparison", "TensorComparison", "StepLoss", "ThreeWay", "RunInfo",
           "default_tolerance", "RawTensorError", "DEFAULT_K"]
