"""The verdict: one of the three of the spec, from the checklist and the outlook only.

Rules (documented in ``docs/report.md``):

1. **Situation** (``prototype``, ``extensions``, ``long_training``, ``deployment``), given by the
   user or inferred from the evidence and stated: CUDA-extension findings in the scan mean
   ``extensions``; a comparison or a long job (``--steps`` >= 10000) means ``long_training``;
   otherwise ``prototype``. ``deployment`` is never inferred (it is the user's purpose).
2. The situation fixes the **critical items** (:data:`CRITICAL`).
3. Every item caps the verdict (the worst cap wins; none means ``runs_on_mac``):

   * a failed critical item with no known way around it -> ``stay_on_cuda``;
   * a failed critical item with a way around it (an alternative, a fallback, an upgrade) ->
     ``mac_for_dev``;
   * a failed non-critical item -> ``mac_for_dev`` (except item 8, reported only, and item 6
     when the CPU-fallback share is known and below 10 %);
   * a critical item not checked -> ``mac_for_dev``: ``runs_on_mac`` needs every critical item
     **observed** passed. A prediction never stands in for an observation.
   * no scan, no trace and no run at all -> ``stay_on_cuda``: nothing supports a move;
   * outlook blockers (PRF201 memory over the Mac's, PRF203 time over budget) -> ``stay_on_cuda``
     when time/memory is critical (``long_training``), else ``mac_for_dev``.

4. The **predicted verdict** applies the same rules treating "not checked (predicted to pass)"
   as passed: what the verdict becomes if every prediction holds on the Mac.

A failed critical check therefore never yields a better verdict than ``mac_for_dev``, and
one without a way around it always yields ``stay_on_cuda``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from mpsready.findings import Basis, Severity, Verdict, sort_findings
from mpsready.report.checklist import CheckItem, Status
from mpsready.report.evidence import Evidence
from mpsready.report.evidence import scan as scan_adapter
from mpsready.report.outlook import FALLBACK_SHARE_LIMIT, Outlook
from mpsready.situation import Situation  # a leaf module, so that the argument definitions list its values


# Critical checklist items per situation (SPEC "Four typical situations").
CRITICAL: dict[Situation, tuple[int, ...]] = {
    Situation.PROTOTYPE: (1, 3, 4),  # install, MPS availability, critical operators
    Situation.EXTENSIONS: (1, 2, 4),  # extension builds / alternative, imports, actual operator calls
    Situation.LONG_TRAINING: (1, 4, 5),  # the step, result differences (+ time and memory from the outlook)
    Situation.DEPLOYMENT: (1, 3, 8),  # install and launch on macOS, data rules
}
LONG_JOB_STEPS = 10_000
_REPORT_ONLY = (8,)  # a failure caps the verdict only when critical


@dataclass(frozen=True)
class SituationChoice:
    situation: Situation
    inferred: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.situation.value, "title": self.situation.title, "inferred": self.inferred,
                "why": self.why, "critical_items": list(CRITICAL[self.situation])}


def choose_situation(ev: Evidence, given: str | None = None, job_steps: int | None = None) -> SituationChoice:
    if given:
        return SituationChoice(Situation(given), False, "given with --situation")
    if ev.scan is not None:
        ext = [f for f in ev.scan.main_findings if f.code.startswith(scan_adapter.EXTENSION_PREFIXES)]
        if ext:
            return SituationChoice(Situation.EXTENSIONS, True,
                                   f"the scan found {len(ext)} CUDA extension finding(s) ({ext[0].code} "
                                   f"{ext[0].location})")
    if ev.compare is not None:
        return SituationChoice(Situation.LONG_TRAINING, True,
                               "a comparison with a baseline run was given")
    if job_steps and job_steps >= LONG_JOB_STEPS:
        return SituationChoice(Situation.LONG_TRAINING, True, f"the real job has {job_steps} steps")
    return SituationChoice(Situation.PROTOTYPE, True, "no extension, no baseline comparison, no long job: "
                           "the default")


@dataclass(frozen=True)
class Reason:
    """One line of the verdict's reasoning; ``cap`` is the best verdict this reason still allows."""

    cap: Verdict
    text: str
    item: int | None = None
    basis: Basis | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"cap": self.cap.value, "text": self.text, "item": self.item,
                "basis": self.basis.value if self.basis else None}


@dataclass
class VerdictResult:
    verdict: Verdict
    basis: Basis  # observed when the reasons that set the verdict are all observations
    predicted: Verdict  # the verdict if every prediction holds
    situation: SituationChoice
    reasons: list[Reason]
    would_change: list[str] = field(default_factory=list)

    @property
    def headline(self) -> str:
        return self.verdict.title

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.verdict.value, "title": self.verdict.title, "basis": self.basis.value,
                "if_predictions_hold": self.predicted.value, "situation": self.situation.to_dict(),
                "reasons": [r.to_dict() for r in self.reasons], "would_change": self.would_change}


def _item_caps(item: CheckItem, critical: bool, outlook: Outlook | None, trust_predictions: bool) -> list[Reason]:
    n = item.number
    kind = "critical" if critical else "non-critical"
    if item.status is Status.FAILED:
        if n in _REPORT_ONLY and not critical:
            return []
        if n == 6 and not critical and outlook is not None and outlook.fallback_share is not None \
                and outlook.fallback_share < FALLBACK_SHARE_LIMIT:
            return []
        if critical and not item.workaround:
            return [Reason(Verdict.STAY_ON_CUDA, f"item {n} ({item.short}) {item.label}, {kind}, no known way "
                           f"around it: {item.summary}", n, item.basis)]
        way = f"; way around: {item.workaround}" if item.workaround else ""
        return [Reason(Verdict.MAC_FOR_DEV, f"item {n} ({item.short}) {item.label}, {kind}: {item.summary}{way}",
                       n, item.basis)]
    if item.status is Status.NOT_CHECKED and critical:
        if trust_predictions and item.prediction == "pass":
            return []
        how = "a person's sign-off" if n == 8 else "it observed"  # item 8 is attested, never observed
        return [Reason(Verdict.MAC_FOR_DEV, f"item {n} ({item.short}) {item.label}, critical: runs_on_mac needs "
                       f"{how} ({item.summary})", n, None)]
    return []


def _outlook_caps(outlook: Outlook | None, situation: Situation) -> list[Reason]:
    if outlook is None:
        return []
    out = []
    for f in outlook.findings:
        if f.severity is Severity.BLOCKER:
            cap = Verdict.STAY_ON_CUDA if situation is Situation.LONG_TRAINING else Verdict.MAC_FOR_DEV
            out.append(Reason(cap, f"{f.code} {f.message}", None, f.basis))
    return out


def ev_has_step_or_project_evidence(items: list[CheckItem]) -> bool:
    """True when item 2 (the scan) or item 4 (trace or run) holds any evidence or status."""
    by_n = {it.number: it for it in items}
    return any(by_n[n].status is not Status.NOT_CHECKED or by_n[n].prediction or by_n[n].evidence
               for n in (2, 4) if n in by_n)


def _decide(items: list[CheckItem], critical: tuple[int, ...], outlook: Outlook | None, situation: Situation,
            trust_predictions: bool) -> tuple[Verdict, list[Reason]]:
    reasons: list[Reason] = []
    for it in items:
        reasons += _item_caps(it, it.number in critical, outlook, trust_predictions)
    reasons += _outlook_caps(outlook, situation)
    if not ev_has_step_or_project_evidence(items):
        reasons.append(Reason(Verdict.STAY_ON_CUDA, "no scan, no trace and no run: nothing supports moving any "
                              "part of the project to the Mac", None, None))
    verdict = Verdict.worst(r.cap for r in reasons)
    reasons.sort(key=lambda r: (-r.cap.rank, r.item or 99))
    return verdict, reasons


def decide(ev: Evidence, items: list[CheckItem], outlook: Outlook | None = None, situation: str | None = None,
           job_steps: int | None = None) -> VerdictResult:
    """Judge the checklist; see the module docstring for the rules."""
    choice = choose_situation(ev, situation, job_steps)
    critical = CRITICAL[choice.situation]
    verdict, reasons = _decide(items, critical, outlook, choice.situation, trust_predictions=False)
    predicted, _ = _decide(items, critical, outlook, choice.situation, trust_predictions=True)
    time_note = _time_note(outlook, choice.situation)
    if time_note:
        reasons.append(time_note)
    if verdict is Verdict.RUNS_ON_MAC:
        # Only reachable when every critical item was observed passed.
        observed = all(it.observed_pass for it in items if it.number in critical)
        reasons.append(Reason(Verdict.RUNS_ON_MAC, "every critical item (" + ", ".join(map(str, critical))
                              + ") was observed passed and no check failed", None, Basis.OBSERVED))
    else:
        # Observed when every reason that sets this verdict rests on an observation (an MPS run failing, a
        # comparison out of tolerance); a "not checked" reason or a prediction makes it predicted.
        deciding = [r for r in reasons if r.cap is verdict]
        observed = bool(deciding) and all(r.basis is Basis.OBSERVED for r in deciding)
    result = VerdictResult(verdict, Basis.OBSERVED if observed else Basis.PREDICTED, predicted, choice, reasons)
    result.would_change = would_change(ev, items, result, critical)
    return result


def _time_note(outlook: Outlook | None, situation: Situation) -> Reason | None:
    """For long training: the projected time on the Mac, and whether it was judged (a budget was given)."""
    if outlook is None or situation is not Situation.LONG_TRAINING:
        return None
    mps = outlook.timing("mps")
    if mps is None or mps.projected_seconds is None:
        return None
    cuda = outlook.timing("cuda")
    vs = f" (vs {cuda.projected_seconds / 3600:.2f} h on {cuda.device})" if cuda and cuda.projected_seconds else ""
    judged = (f"within the {outlook.time_budget_hours:g} h budget" if outlook.time_budget_hours
              and mps.projected_seconds <= outlook.time_budget_hours * 3600
              else "not judged: give the study's budget with --time-budget-hours" if not outlook.time_budget_hours
              else "over budget (PRF203)")
    return Reason(Verdict.RUNS_ON_MAC, f"time: {outlook.job_steps} steps projected at "
                  f"{mps.projected_seconds / 3600:.2f} h on {mps.device}{vs}; {judged}", None, Basis.OBSERVED)


# ---------------------------------------------------------------------------------------------
# What would change the verdict
# ---------------------------------------------------------------------------------------------

def would_change(ev: Evidence, items: list[CheckItem], result: VerdictResult, critical: tuple[int, ...]) -> list[str]:
    """Concrete changes, each tied to the evidence it would remove or add."""
    out: list[str] = []
    if ev.scan is not None:
        blockers = ev.scan.blockers()
        comps = [f for f in blockers if f.code.startswith(scan_adapter.DEPENDENCY_PREFIXES
                                                          + scan_adapter.EXTENSION_PREFIXES)]
        by_comp: dict[str, list] = {}
        for f in comps:
            key = _group_of(f) if scan_adapter.alternative_of(f) is None else scan_adapter.component_of(f)
            by_comp.setdefault(key, []).append(f)
        lines_without = []
        for comp, fs in sorted(by_comp.items()):
            alt = scan_adapter.alternative_of(fs[0])
            left = len(blockers) - len(fs)
            if alt and scan_adapter.named_alternative(fs[0]):
                swap = f"by {alt}" if len(alt) <= 80 and ";" not in alt else f"(alternative: {alt})"
                out.append(f"if {comp} is replaced {swap}, the static blockers drop from {len(blockers)} to {left}")
            elif alt:
                out.append(f"if {comp} is dealt with as the finding says ({alt.rstrip('.')}), the static blockers "
                           f"drop from {len(blockers)} to {left}")
            else:
                lines_without.append(f"a portable replacement for {comp} (none is known) would remove {len(fs)} of "
                                     f"the {len(blockers)} static blocker(s)")
        out += lines_without[:MAX_COMPONENT_LINES]
        if len(lines_without) > MAX_COMPONENT_LINES:
            out.append(f"... and {len(lines_without) - MAX_COMPONENT_LINES} more components without a known "
                       "alternative (see checklist item 2)")
        comp_ids = {id(f) for f in comps}  # identity, not equality: findings compare field by field (slow)
        others = [f for f in sort_findings(blockers) if id(f) not in comp_ids]
        if others:
            out += _code_blocker_lines(others, ev.scan)
    if ev.trace is not None:
        missing = [o for o in ev.trace.ops if o.status in ("error", "fallback")]
        by_version: dict[str, list[str]] = {}
        for o in missing:
            if o.fixed_in:
                by_version.setdefault(o.fixed_in, []).append(o.op)
        for ver in sorted(by_version, key=_version_key):
            ops = sorted(set(by_version[ver]))
            minor = ".".join(ver.split(".")[:2])
            out.append(f"PyTorch {ver} fixes the {_count(len(ops))} operator{'s' if len(ops) > 1 else ''} "
                       f"predicted to fail or fall back ({', '.join(ops)}): upgrade PyTorch to >= {ver} "
                       f"(mpsready trace --torch {minor} checks it)")
        missing_kernel = sorted({o.op for o in missing if not o.fixed_in and "missing" in o.problems})
        other = [o for o in missing if not o.fixed_in and "missing" not in o.problems]
        if missing_kernel:
            out.append(f"no PyTorch release has an MPS kernel for {', '.join(missing_kernel)}: rewriting those "
                       "calls, or accepting the CPU fallback (PYTORCH_ENABLE_MPS_FALLBACK=1), is the way forward")
        for o in sorted(other, key=lambda o: o.op):
            why = f" ({o.reason})" if o.reason else ""
            out.append(f"no PyTorch release fixes {o.op}{why}: changing the call at {o.where or 'its call site'} "
                       "removes it")
        dty = [f for f in ev.trace.findings if f.code.startswith("DTY") and f.severity is Severity.BLOCKER]
        if dty:
            if ev.trace.dtype_origins:
                where = "where they are made (" + ", ".join(ev.trace.dtype_origins[:3]) + ")"
            else:
                where = "before they reach the device (" + ", ".join(sorted({str(f.location) for f in dty})[:3]) + ")"
            out.append(f"casting the float64/complex128 tensors to float32 {where} removes {len(dty)} dtype "
                       "blocker(s)")
    if ev.run is not None:
        out += _run_lines(ev.run)
    changes = len(out)  # lines so far propose changes to the project; the ones below only confirm
    for it in items:
        if it.number in critical and it.status is Status.NOT_CHECKED and it.next_step:
            verb = "confirming" if it.prediction == "pass" else "checking"
            by = "by a person's sign-off" if it.number == 8 else "by observation"
            out.append(f"{verb} item {it.number} ({it.short}) {by}: {it.next_step}")
    if result.verdict is not Verdict.RUNS_ON_MAC and result.predicted is Verdict.RUNS_ON_MAC:
        # The trace runs the ENTRY, not the project's scripts: code blockers the scan found there remain.
        pending = " once the changes above are made" if changes else ""
        out.append(f"if the predictions hold when observed on a Mac{pending}, the verdict becomes runs_on_mac")
    return out


MAX_COMPONENT_LINES = 6


def _run_lines(run) -> list[str]:
    """What would clear the predicted failures and fallbacks of an emulated run (``mpsready run``), each naming
    its run entries (op and line) and the run document."""
    from mpsready.report.checklist_step import FALLBACK_COST, minor_release

    src = f" ({run.source})" if run.source else ""
    prog = run.program
    out = []
    by_version: dict[str, list[str]] = {}
    for f in run.failures:
        if f.fixed_in:
            by_version.setdefault(f.fixed_in, []).append(f"{f.op or f.kind}" + (f" at {f.where}" if f.where else ""))
    for ver in sorted(by_version, key=_version_key):
        out.append(f"upgrading PyTorch to >= {ver} clears what the emulated run predicts to fail "
                   f"({', '.join(dict.fromkeys(by_version[ver]))}){src}: `mpsready run --torch {minor_release(ver)} -- "
                   f"{prog}` checks the rest of the program on it")
    missing = [f for f in run.failures if f.kind == "missing"]
    if missing:
        ops = ", ".join(dict.fromkeys(f"{f.op}" + (f" at {f.where}" if f.where else "") for f in missing))
        out.append(f"PYTORCH_ENABLE_MPS_FALLBACK=1 runs {ops}{src} on the CPU instead of failing (cost: "
                   f"{FALLBACK_COST}); `mpsready run --fallback -- {prog}` predicts their share of the run's time")
    fb_fixed: dict[str, list[str]] = {}
    for fb in run.fallbacks:
        if fb.fixed_in:
            fb_fixed.setdefault(fb.fixed_in, []).append(fb.op)
    for ver in sorted(fb_fixed, key=_version_key):
        out.append(f"PyTorch {ver} has MPS kernels for {', '.join(sorted(set(fb_fixed[ver])))}, which the emulated "
                   f"run{src} ran on the CPU: `mpsready run --torch {minor_release(ver)} -- {prog}` checks it")
    pe = run.program_error
    if pe is not None and not run.failures:
        what = f"providing {pe.missing}" if pe.kind == "environment" and pe.missing else "fixing that error"
        out.append(f"the emulated run{src} stopped at {pe.where or 'an unknown line'} on {pe.exception}, which is "
                   f"not a Mac failure: {what} and running `mpsready run -- {prog}` again checks item 4 past it")
    return out


def _effort_sentence(scan: scan_adapter.ScanEvidence, effort: Callable[..., dict]) -> str:
    """The scan's own effort sentence (its JSON ``effort``: the numbers scan printed, one computation); a scan
    document without it (an older version) gets the same computation over its findings."""
    from mpsready.rules import fixability

    e = scan.raw.get("effort") if isinstance(scan.raw, dict) else None
    keys = ("auto_fixable", "manual", "kept", "files_touched")
    if not (isinstance(e, dict) and all(isinstance(e.get(k), int) and not isinstance(e.get(k), bool) for k in keys)):
        e = effort(scan.findings)
    basis = e.get("basis") if e.get("basis") in ("estimate", "plan") else "estimate"
    return fixability().render_effort(e, basis)


def _code_blocker_lines(others: list, scan: scan_adapter.ScanEvidence) -> list[str]:
    """Code blockers split into what ``mpsready migrate`` rewrites and what a person must change, with the effort."""
    from mpsready.rules import fixability

    bucket, effort = fixability().bucket, fixability().effort
    auto = [f for f in others if bucket(f)[0] == "auto"]
    rest = [f for f in others if bucket(f)[0] != "auto"]
    out = []
    if auto:
        out.append(f"`mpsready migrate PATH` rewrites {len(auto)} of the code finding(s) marked blocker "
                   f"({', '.join(sorted({f.code for f in auto}))}) automatically (review its diff, then --apply), which "
                   f"removes them from the static blockers; {_effort_sentence(scan, effort)}")
    if rest:
        out.append(f"fixing the {len(rest)} {'other ' if auto else ''}code finding(s) marked blocker "
                   f"({', '.join(sorted({f.code for f in rest}))}) by hand, as their fix hints say, removes them from "
                   "the static blockers")
    return out


def _group_of(f) -> str:
    """Kernels of one library (Triton, CuPy, Numba) and loose CUDA sources are one component each."""
    ev = f.evidence if isinstance(f.evidence, dict) else {}
    if isinstance(ev.get("library"), str) and ev["library"]:
        return f"the {ev['library']} kernels"
    if f.code == "EXT101" and not any(isinstance(ev.get(k), str) for k in ("package", "name", "extension")):
        return "the CUDA source files"
    return scan_adapter.component_of(f)


def _count(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}.get(n, str(n))


def _version_key(v: str) -> tuple:
    parts = []
    for p in v.split("."):
        parts.append(int(p) if p.isdigit() else 0)
    return tuple(parts)
