"""Predicted vs observed: every prediction the report holds beside what a Mac observed (``report --mac-results``).

Predictions, with where each came from: the scan's **outlook** and its **dependency** findings, each operator the
**trace** or the **emulated run** judged (error, CPU fallback, runs) and the predicted failures of the **emulated
test suite**, the **float64** refusals, and the **wrong-result advisories** the emulated run matched. What the
Mac observed comes from the results archive (:mod:`mpsready.report.evidence.mac`): the step's stages, the
operators that raised, fell back or were dispatched on MPS, the tests, the comparison of the two records and the
install steps. Each row agrees, disagrees, or was not observed (the Mac never reached that operator, or the
results come from a dry run on the CPU). Disagreements come first and every kind is counted.

Tests (``report --tests`` beside a kit run with ``--tests``) are set beside each other by node id: one row per test
the emulated Mac predicted to fail, and per test predicted to pass on MPS that the Mac failed; the tests predicted to
pass that passed on the Mac (or were not observed) are one row each, counted. Only definite predictions take part:
a test that never reached MPS here, failed on its own exception (inconclusive), was judged on no data
(unverified) or matched a wrong-result advisory (the kit's tests do not compare values) has no row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpsready.report.evidence import Evidence
from mpsready.report.evidence import scan as scan_adapter
from mpsready.report.evidence.mac import MacEvidence, ObservedOp, float64_refused, observed_ops

AGREE, DISAGREE, UNSEEN = "agrees", "disagrees", "not observed"
_WORD = {"error": "fails on MPS", "fallback": "falls back to the CPU", "runs": "runs on MPS"}


@dataclass(frozen=True)
class Row:
    kind: str  # outlook | operator | dtype | wrong_result | install | test
    subject: str
    predicted: str
    observed: str | None
    state: str  # AGREE | DISAGREE | UNSEEN
    source: str  # where the prediction came from
    op_status: str | None = None  # for an operator: what the Mac did (error | fallback | runs)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "predicted": self.predicted, "observed": self.observed,
                "state": self.state, "prediction_source": self.source}


@dataclass
class Versus:
    where: str
    on_mac: bool
    note: str | None
    rows: list[Row] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {AGREE: 0, DISAGREE: 0, UNSEEN: 0}
        for r in self.rows:
            out[r.state] += 1
        return out

    def ordered(self) -> list[Row]:
        rank = {DISAGREE: 0, AGREE: 1, UNSEEN: 2}
        return sorted(self.rows, key=lambda r: rank[r.state])

    def to_dict(self) -> dict[str, Any]:
        return {"observed_on": self.where, "on_mac": self.on_mac, "note": self.note, "counts": self.counts(),
                "rows": [r.to_dict() for r in self.ordered()]}


def _state(agree: bool | None) -> str:
    return UNSEEN if agree is None else (AGREE if agree else DISAGREE)


def build_versus(ev: Evidence) -> Versus | None:
    mac: MacEvidence | None = ev.mac
    if mac is None or not mac.ran:
        return None
    note = None
    if not mac.on_mac:
        note = (f"The results come from a dry run on {mac.device}" if mac.dry_run or mac.device != "mps" else
                "The results do not come from macOS") + ": nothing here was observed on a Mac"
    out = Versus(mac.where, mac.on_mac, note)
    seen = observed_ops(mac)
    out.rows += _outlook(ev, mac)
    out.rows += _operators(ev, seen)
    out.rows += _float64(ev, mac)
    out.rows += _wrong_results(ev, mac)
    out.rows += _installs(ev, mac)
    out.rows += _tests(ev, mac)
    return out


def _outlook(ev: Evidence, mac: MacEvidence) -> list[Row]:
    if ev.scan is None or ev.scan.outlook is None:
        return []
    pred = ev.scan.outlook.value
    rec = mac.device_record() if mac.on_mac else None
    if rec is None or not rec.stages:
        return [Row("outlook", "static outlook", pred, None, UNSEEN, ev.scan.source or "scan")]
    ran = rec.all_passed
    obs = "the step ran on MPS unchanged" if ran else f"the step failed on MPS in {', '.join(rec.failed_stages)}"
    agree = {("runs_on_mac", True): True, ("runs_on_mac", False): False, ("stay_on_cuda", True): False,
             ("stay_on_cuda", False): True, ("mac_for_dev", False): True}.get((pred, ran))
    return [Row("outlook", "static outlook", pred, obs, _state(agree), ev.scan.source or "scan")]


def _predicted_ops(ev: Evidence) -> dict[str, tuple[str, str]]:
    """op -> (predicted status, source): the emulated run first, then the emulated tests, then the trace."""
    out: dict[str, tuple[str, str]] = {}
    if ev.run is not None:
        for f in ev.run.failures:
            if f.op and f.kind != "dtype":
                out.setdefault(f.op, ("error", f"emulated run ({ev.run.source})"))
        for fb in ev.run.fallbacks:
            out.setdefault(fb.op, ("fallback", f"emulated run ({ev.run.source})"))
    if ev.tests is not None:
        for tf in ev.tests.failures:
            if tf.op and tf.kind != "dtype":
                out.setdefault(tf.op, ("error", f"emulated tests ({ev.tests.source})"))
        for op in ev.tests.fallback_ops:
            out.setdefault(op, ("fallback", f"emulated tests ({ev.tests.source})"))
    if ev.trace is not None:
        for o in ev.trace.ops:
            if o.status in _WORD:
                out.setdefault(o.op, (o.status, f"trace ({ev.trace.source})"))
    return out


def _operators(ev: Evidence, seen: dict[str, ObservedOp]) -> list[Row]:
    rows = []
    for op, (pred, src) in sorted(_predicted_ops(ev).items()):
        got = seen.get(op)
        if got is None:
            rows.append(Row("operator", op, _WORD[pred], None, UNSEEN, src))
            continue
        rows.append(Row("operator", op, _WORD[pred], f"{_WORD[got.status]} ({got.how})",
                        _state(pred == got.status), src, got.status))
    return rows


def _float64(ev: Evidence, mac: MacEvidence) -> list[Row]:
    sources = []
    if ev.run is not None and any(f.kind == "dtype" and f.dtype == "float64" for f in ev.run.failures):
        sources.append(f"emulated run ({ev.run.source})")
    if ev.trace is not None and any(f.code.startswith("DTY") for f in ev.trace.findings):
        sources.append(f"trace ({ev.trace.source})")
    if not sources:
        return []
    where = float64_refused(mac)
    rec = mac.device_record() if mac.on_mac else None
    if where:
        return [Row("dtype", "float64 on MPS", "refused", f"refused in {where}", AGREE, "; ".join(sources))]
    if rec is not None and rec.all_passed:
        return [Row("dtype", "float64 on MPS", "refused", "the step ran on MPS without a float64 refusal", DISAGREE,
                    "; ".join(sources))]
    return [Row("dtype", "float64 on MPS", "refused", None, UNSEEN, "; ".join(sources))]


def _wrong_results(ev: Evidence, mac: MacEvidence) -> list[Row]:
    if ev.run is None or not ev.run.wrong_results:
        return []
    c = ev.compare if ev.compare is not None and ev.compare.involves("mps") and mac.on_mac else None
    rows = []
    for w in ev.run.wrong_results:
        pred = f"a wrong result (advisory {w.id})"
        if c is None or c.passed is None:
            rows.append(Row("wrong_result", w.op, pred, None, UNSEEN, f"emulated run ({ev.run.source})"))
        else:
            obs = f"{c.devices()}: " + ("every tensor within tolerance" if c.passed else f"{c.failed} out of tolerance")
            rows.append(Row("wrong_result", w.op, pred, obs, _state(not c.passed), f"emulated run ({ev.run.source})"))
    return rows


def _package(step_name: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = step_name[len("install "):]
    try:
        return str(canonicalize_name(Requirement(text).name))
    except InvalidRequirement:
        return None


def _installs(ev: Evidence, mac: MacEvidence) -> list[Row]:
    from packaging.utils import canonicalize_name

    if ev.scan is None:
        return []
    blocked = {str(canonicalize_name(scan_adapter.component_of(f))): f for f in ev.scan.main_findings
               if f.code.startswith(scan_adapter.DEPENDENCY_PREFIXES)}
    rows = []
    for step in mac.installs():
        name = _package(step.name)
        if name is None or name in ("torch",) or step.skipped:
            continue
        f = blocked.get(name)
        pred = f"does not install or work on macOS ({f.code})" if f else "installs (no dependency finding)"
        if not mac.on_mac:
            rows.append(Row("install", name, pred, None, UNSEEN, ev.scan.source or "scan"))
            continue
        obs = "installed" if step.ok else f"install failed ({step.state()})"
        rows.append(Row("install", name, pred, obs, _state(bool(step.ok) != bool(f)), ev.scan.source or "scan"))
    return rows


_FAILED = ("failed", "error")


def _tests(ev: Evidence, mac: MacEvidence) -> list[Row]:
    """Rows for the emulated test suite's definite verdicts beside the tests the Mac ran (module docstring)."""
    if ev.tests is None:
        return []
    src = f"emulated tests ({ev.tests.source})"
    seen = {t.nodeid: t for t in mac.tests} if mac.on_mac else {}
    rows: list[Row] = []
    passed_agree = passed_unseen = 0
    for t in ev.tests.raw.get("tests") or []:
        if not isinstance(t, dict) or not isinstance(t.get("nodeid"), str):
            continue
        verdict, nodeid = t.get("mac"), t["nodeid"]
        got = seen.get(nodeid)
        marks = sorted(set(t.get("markers") or []) | set(got.markers if got else ()))
        subject = nodeid + (f" [{', '.join(marks)}]" if marks else "")
        outcome = None if got is None or got.outcome == "skipped" else got.outcome
        observed = outcome
        if outcome in _FAILED and got is not None and got.exception:
            observed = f"{outcome} ({got.exception}: {(got.message or '')[:120]})"
        if verdict == "mac_failure":
            first = next((f for f in t.get("failures") or [] if isinstance(f, dict)), {})
            pred = "fails on the Mac" + (f" ({first.get('op') or first.get('kind')})" if first else "")
            rows.append(Row("test", subject, pred, observed, _state(None if outcome is None else outcome in _FAILED),
                            src))
        elif verdict in ("clean", "fallback"):
            if outcome is None:
                passed_unseen += 1
            elif outcome in _FAILED:
                rows.append(Row("test", subject, "passes on MPS", observed, DISAGREE, src))
            else:
                passed_agree += 1
    if passed_agree:
        rows.append(Row("test", f"{passed_agree} test(s) predicted to pass on MPS", "pass on MPS",
                        "passed on the Mac", AGREE, src))
    if passed_unseen:
        rows.append(Row("test", f"{passed_unseen} test(s) predicted to pass on MPS", "pass on MPS", None, UNSEEN, src))
    return rows
