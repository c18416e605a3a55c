"""The acceptance checklist of the spec (items 1 to 8), filled from evidence.

Each item is ``passed``, ``failed`` or ``not_checked``, with the evidence lines behind it
and the basis of its status:

* ``passed`` needs an **observation** (a run record, an env record, a comparison). The one
  exception is item 2, a review of the project's files, which the static scan does in full
  (its status reads "passed (static review)").
* ``failed`` may rest on an observation or on a **prediction** (a scan or trace finding):
  a predicted failure is shown as "failed (predicted)". A prediction can fail a check,
  never pass it.
* ``not_checked``: nothing observed. When a prediction says it would pass, ``prediction``
  is ``"pass"`` and the item reads "not checked (predicted to pass)", never "passed".

No rendering here: renderers read :class:`CheckItem` and its :attr:`CheckItem.label`.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Basis, Finding, Severity, sort_findings
from mpsready.report.evidence import Evidence, RecordEvidence
from mpsready.report.evidence import scan as scan_adapter

TITLES = {
    1: "Dependencies install on the target macOS environment (or each one that cannot is named)",
    2: "Every CUDA-only component is identified, with an acceptable alternative for those the project needs",
    3: "MPS availability was checked in the environment actually used (built and available apart)",
    4: "A representative step runs on the target backend (data, operators, loss, backward, optimizer "
       "step, checkpoint save/reload, inference)",
    5: "Important outputs were compared with the CUDA reference under the study's tolerances",
    6: "CPU fallback: whether it was enabled, and which operators actually used it",
    7: "Versions, settings and observations were recorded",
    8: "The data-handling rules allow the chosen environment (whether raw data left the machine)",
}
SHORT = {1: "dependencies install", 2: "CUDA-only components have alternatives", 3: "MPS availability",
         4: "representative step on MPS", 5: "outputs match the CUDA reference", 6: "CPU fallback",
         7: "versions and settings recorded", 8: "data handling"}


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_CHECKED = "not_checked"


@dataclass(frozen=True)
class EvidenceLine:
    """One piece of evidence behind an item.

    ``kind``: ``finding`` (a rule code), ``trace`` (a traced operator), ``comparison`` (a compared
    tensor or summary), ``timing``, ``stage`` (a recorded stage), ``env``, ``record``, ``note``.
    """

    kind: str
    text: str
    basis: Basis | None
    code: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "text": self.text, "basis": self.basis.value if self.basis else None}
        if self.code:
            d["code"] = self.code
        if self.source:
            d["source"] = self.source
        return d


@dataclass
class CheckItem:
    number: int
    status: Status
    basis: Basis | None
    summary: str
    evidence: list[EvidenceLine] = field(default_factory=list)
    prediction: str | None = None  # "pass" or "fail": what the predictions say, when any
    workaround: str | None = None  # for a failure: the known way around it (alternative, fallback, upgrade)
    next_step: str | None = None  # what would check it (or check it by observation)

    @property
    def title(self) -> str:
        return TITLES[self.number]

    @property
    def short(self) -> str:
        return SHORT[self.number]

    @property
    def label(self) -> str:
        """Human status, keeping predictions and observations apart."""
        if self.status is Status.PASSED:
            return "passed" if self.basis is Basis.OBSERVED else "passed (static review)"
        if self.status is Status.FAILED:
            return "failed" if self.basis is Basis.OBSERVED else "failed (predicted)"
        return "not checked (predicted to pass)" if self.prediction == "pass" else "not checked"

    @property
    def observed_pass(self) -> bool:
        return self.status is Status.PASSED and self.basis is Basis.OBSERVED

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number, "title": self.title, "status": self.status.value,
            "basis": self.basis.value if self.basis else None, "label": self.label,
            "prediction": self.prediction, "summary": self.summary,
            "evidence": [e.to_dict() for e in self.evidence],
            "workaround": self.workaround, "next_step": self.next_step,
        }


def _finding_line(f: Finding) -> EvidenceLine:
    text = f"{f.code} {f.message}"
    if str(f.location) != "-":
        text += f" ({f.location})"
    return EvidenceLine("finding", text, f.basis, code=f.code, source=f.source)


def _names(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# ---------------------------------------------------------------------------------------------
# Item 1: dependencies install on macOS
# ---------------------------------------------------------------------------------------------

_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def item_dependencies(ev: Evidence) -> CheckItem:
    mps = ev.record_on("mps")
    if mps is not None:
        build = mps.stages.get("build") or mps.stages.get("step") or {}
        if build.get("status") in ("failed", "crashed") and build.get("error_type") in _IMPORT_ERRORS:
            return CheckItem(1, Status.FAILED, Basis.OBSERVED,
                             f"importing the project failed on the Mac: {build.get('error')}",
                             [EvidenceLine("stage", f"build on {mps.device}: {build.get('error_type')}: "
                                           f"{build.get('error')}", Basis.OBSERVED, source=mps.source)],
                             next_step="install the missing package on the Mac, or replace it")
        if build.get("status") == "passed":
            return CheckItem(1, Status.PASSED, Basis.OBSERVED,
                             f"the project's modules imported on {mps.device} (the step was built there)",
                             [EvidenceLine("stage", f"build on {mps.device}: passed", Basis.OBSERVED,
                                           source=mps.source)] + _dep_lines(ev))
    if ev.scan is None:
        return CheckItem(1, Status.NOT_CHECKED, None, "no scan and no run on a Mac",
                         next_step="mpsready scan PATH (predicts), then a run on the Mac (observes)")
    deps = [f for f in ev.scan.main_findings if f.code.startswith(scan_adapter.DEPENDENCY_PREFIXES)
            and f.severity is Severity.BLOCKER]
    if not deps and ev.scan.declares_no_dependencies:
        # nothing declared means nothing was checked: not a prediction that the install passes
        return CheckItem(1, Status.NOT_CHECKED, None, "the project declares no dependencies", _dep_lines(ev),
                         next_step="declare the dependencies (requirements.txt or pyproject.toml), then scan again")
    if not deps:
        return CheckItem(1, Status.NOT_CHECKED, None,
                         "the scan names no dependency that cannot install on macOS; not yet installed on a Mac",
                         _dep_lines(ev), prediction="pass",
                         next_step="install the requirements on the Mac (mpsready record ... --device mps)")
    names = sorted({scan_adapter.component_of(f) for f in deps})
    missing_alt = [f for f in deps if scan_adapter.alternative_of(f) is None]
    workaround = None
    if not missing_alt:
        workaround = "; ".join(sorted({f"{scan_adapter.component_of(f)} -> {scan_adapter.alternative_of(f)}"
                                       for f in deps}))
    return CheckItem(1, Status.FAILED, Basis.PREDICTED,
                     f"{len(names)} dependenc{'y' if len(names) == 1 else 'ies'} predicted not to install "
                     f"(or not to work) on macOS: {_names(names)}",
                     [_finding_line(f) for f in sort_findings(deps)], prediction="fail", workaround=workaround,
                     next_step="replace the named packages, then install on the Mac")


def _dep_lines(ev: Evidence) -> list[EvidenceLine]:
    if ev.scan is None:
        return []
    return [_finding_line(f) for f in sort_findings(ev.scan.main_findings)
            if f.code.startswith(scan_adapter.DEPENDENCY_PREFIXES)][:8]


# ---------------------------------------------------------------------------------------------
# Item 2: CUDA-only components identified, with alternatives
# ---------------------------------------------------------------------------------------------

def item_components(ev: Evidence) -> CheckItem:
    if ev.scan is None:
        return CheckItem(2, Status.NOT_CHECKED, None, "the project was not scanned",
                         next_step="mpsready scan PATH")
    comps = ev.scan.components()
    lines = []
    without = []
    for f in sort_findings(comps):
        alt = scan_adapter.alternative_of(f)
        line = _finding_line(f)
        lines.append(EvidenceLine(line.kind, line.text + (f" -> alternative: {alt}" if alt else
                                                          " -> no alternative known"),
                                  line.basis, line.code, line.source))
        if alt is None and f.severity is Severity.BLOCKER:
            without.append(scan_adapter.component_of(f))
    files = f" in the {ev.scan.files} files scanned" if ev.scan.files else ""
    if without:
        names = sorted(set(without))
        return CheckItem(2, Status.FAILED, Basis.PREDICTED,
                         f"{len(names)} CUDA-only component(s) without a known alternative: {_names(names)}",
                         lines, prediction="fail",
                         next_step="find or write a portable implementation, or keep that part on CUDA")
    if not comps:
        return CheckItem(2, Status.PASSED, Basis.PREDICTED, f"the scan found no CUDA-only component{files}",
                         lines)
    names = sorted({scan_adapter.component_of(f) for f in comps})
    return CheckItem(2, Status.PASSED, Basis.PREDICTED,
                     f"{len(names)} CUDA-only component(s) identified{files}, each with an alternative or "
                     f"fallback: {_names(names)}", lines)


# ---------------------------------------------------------------------------------------------
# Item 3: MPS availability, built and available apart
# ---------------------------------------------------------------------------------------------

def item_availability(ev: Evidence) -> CheckItem:
    lines: list[EvidenceLine] = []
    for e in ev.envs():
        if any(e.describe() in line.text for line in lines):  # the same machine, recorded twice
            continue
        lines.append(EvidenceLine("env", f"{e.describe()}: mps is_built={_tri(e.mps_built)}, "
                                  f"is_available={_tri(e.mps_available)}", Basis.OBSERVED, source=e.source))
    mac = ev.mac_env()
    mps = ev.record_on("mps")
    if mac is not None and mac.mps_available is True:
        return CheckItem(3, Status.PASSED, Basis.OBSERVED,
                         f"MPS is built and available on {mac.describe()}", lines)
    if mac is not None and mac.mps_built is False:
        return CheckItem(3, Status.FAILED, Basis.OBSERVED,
                         f"this PyTorch was built without MPS ({mac.describe()})", lines,
                         workaround="install an arm64 macOS build of PyTorch",
                         next_step="check `python -c 'import platform; print(platform.machine())'` says arm64")
    if mac is not None and mac.mps_available is False:
        return CheckItem(3, Status.FAILED, Basis.OBSERVED,
                         f"MPS is built but not available on {mac.describe()} (macOS too old, not Apple "
                         "silicon, or an x86_64 Python under Rosetta)", lines,
                         workaround="use an arm64 Python on macOS 12.3 or later",
                         next_step="run mpsready env on the Mac again after fixing the interpreter")
    if mps is not None and mps.status("build") == "passed":
        lines.append(EvidenceLine("record", f"a step was recorded on {mps.device}", Basis.OBSERVED,
                                  source=mps.source))
        return CheckItem(3, Status.PASSED, Basis.OBSERVED,
                         f"a step ran on {mps.device}, so MPS was available there", lines)
    why = "no environment was recorded" if not lines else "no environment recorded on a Mac"
    if not ev.stages_present():
        return CheckItem(3, Status.NOT_CHECKED, None, why, next_step="mpsready env on the Mac")
    # Documented, not measured: MPS needs Apple silicon (or an AMD GPU), macOS 12.3+ and an arm64 build
    # (PyTorch docs, "MPS backend", notes/mps.rst, torch 2.13).
    lines.append(EvidenceLine("note", "MPS is available on Apple silicon with macOS 12.3 or later and an arm64 "
                              "PyTorch build (PyTorch docs, notes/mps.rst, 2.13)", Basis.PREDICTED))
    return CheckItem(3, Status.NOT_CHECKED, None, f"{why}; availability must be checked on the Mac itself",
                     lines, prediction="pass", next_step="mpsready env on the Mac")


def _tri(v: bool | None) -> str:
    return "unknown" if v is None else str(v)


# ---------------------------------------------------------------------------------------------
# Item 4: the representative step on the target backend
# ---------------------------------------------------------------------------------------------

def _stage_lines(rec: RecordEvidence) -> list[EvidenceLine]:
    """One line for a record whose stages all passed; one line per stage otherwise."""
    if rec.all_passed:
        step = rec.typical_step_seconds()
        timing = f", step {step * 1000:.1f} ms" if step is not None else ""
        return [EvidenceLine("stage", f"{rec.device}: all {len(rec.stages)} stages passed ({', '.join(rec.stages)})"
                             f"{timing}", Basis.OBSERVED, source=rec.source)]
    out = []
    for name, s in rec.stages.items():
        text = f"{rec.device} {name}: {s.get('status')}"
        if s.get("seconds"):
            text += f" ({float(s['seconds']) * 1000:.1f} ms)"
        if s.get("error"):
            text += f": {s.get('error_type') or 'error'}: {str(s['error'])[:200]}"
        out.append(EvidenceLine("stage", text, Basis.OBSERVED, source=rec.source))
    return out


def item_step(ev: Evidence) -> CheckItem:
    mps = ev.record_on("mps")
    if mps is not None:
        lines = _stage_lines(mps)
        if mps.failed_stages:
            return CheckItem(4, Status.FAILED, Basis.OBSERVED,
                             f"the step failed on {mps.device} in {_names(mps.failed_stages)}", lines,
                             workaround=_observed_workaround(mps) or _trace_workaround(ev),
                             next_step="fix the failing stage; the trace names the operator and line")
        if mps.all_passed and "step" in mps.stages and "forward" not in mps.stages:
            # A whole-step entry: its stages cannot be told apart, so checkpoint save/reload and inference,
            # which the item names, were not exercised. Not run is not passed.
            return CheckItem(4, Status.NOT_CHECKED, None,
                             f"the whole step ran on {mps.device}, but as one callable: checkpoint save/reload and "
                             "inference were not exercised", lines, prediction="pass",
                             next_step="return the step's pieces (mpsready.step.Step: model, batch, loss_fn, "
                                       "optimizer) so every stage runs, then record on the Mac again")
        if mps.all_passed:
            return CheckItem(4, Status.PASSED, Basis.OBSERVED,
                             f"all {len(mps.stages)} stages passed on {mps.device}", lines)
        return CheckItem(4, Status.NOT_CHECKED, None, f"the {mps.device} record holds no completed stage",
                         lines, next_step="mpsready record ENTRY --device mps on a Mac")
    lines = []
    errors: list[str] = []
    workaround = None
    # Predictions: the trace's operator classification and its dtype findings.
    if ev.trace is not None:
        err_ops = ev.trace.by_status("error")
        for o in err_ops:
            lines.append(EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source))
        dty = [f for f in ev.trace.findings if f.severity is Severity.BLOCKER and not any(
            o.op == f.location.operator for o in err_ops)]
        lines += [_finding_line(f) for f in sort_findings(dty)]
        kinds = Counter(f"{f.code} ({f.evidence.get('dtype')})" if isinstance(f.evidence, dict)
                        and f.evidence.get("dtype") else f.code for f in dty)
        errors += [o.op for o in err_ops] + [k + (f" x{n}" if n > 1 else "") for k, n in kinds.items()]
        for o in ev.trace.by_status("fallback"):
            lines.append(EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source))
        workaround = _trace_workaround(ev)
    # Predictions from an emulated Mac run (mpsready run): the failures the emulated device raised, as a Mac
    # would. The exception that ended an inconclusive run is not one of them (a missing module, a missing file).
    broken: list[str] = []
    if ev.run is not None:
        for f in ev.run.failures:
            lines.append(EvidenceLine("run", f.line(), Basis.PREDICTED, source=ev.run.source))
            errors.append(f"{f.op or f.kind} at {f.where}" if f.where else (f.op or f.kind))
        for fb in ev.run.fallbacks:
            lines.append(EvidenceLine("run", fb.line(), Basis.PREDICTED, source=ev.run.source))
        pe = ev.run.program_error
        if pe is not None:
            lines.append(EvidenceLine("run", pe.line(), None, source=ev.run.source))
            broken.append(f"the emulated run stopped at {pe.where or 'an unknown line'} on {pe.exception}"
                          + (f", {pe.missing} missing" if pe.kind == "environment" and pe.missing else ""))
        if ev.run.failures:
            workaround = _combine_ways(workaround if _trace_has_problems(ev) else "", _run_workaround(ev.run))
    # Predictions from the project's own tests on the emulated Mac (pytest --mps-emulate, the device model of
    # mpsready run): each distinct failure (kind, op, dtype, line) is one error, with the tests that hit it.
    if ev.tests is not None:
        before = bool(errors)
        for tf in ev.tests.test_failures[:12]:
            lines.append(EvidenceLine("tests", tf.line(), Basis.PREDICTED, source=ev.tests.source))
        for f, hit in ev.tests.causes:
            errors.append(f"{f.op or f.kind}" + (f" ({f.dtype})" if f.dtype else "") + f" in {hit} test"
                          + ("s" if hit > 1 else "") + (f" (first at {f.where})" if f.where else ""))
        for op, n in ev.tests.fallback_ops.items():
            lines.append(EvidenceLine("tests", f"emulated Mac tests: {op} ran on the CPU in {n} test(s)",
                                      Basis.PREDICTED, source=ev.tests.source))
        if ev.tests.failures:
            workaround = _combine_ways(workaround if before else "", _run_workaround(ev.tests))
    # Other devices. A failure that names CUDA (a .cuda() call, a CUDA-only kernel) will happen on MPS too;
    # any other failure means the step itself is broken here, which says nothing about MPS either way.
    device_calls = False  # a failure from a CUDA-only call ("Torch not compiled with CUDA enabled")
    for rec in ev.records:
        if rec.backend == "mps":
            continue
        lines += _stage_lines(rec)
        for st in rec.failed_stages:
            (errors if _cuda_bound(rec.stages[st]) else broken).append(f"stage {st} on {rec.device}")
            device_calls |= _NOT_COMPILED_TEXT in str(rec.stages[st].get("error") or "")
    if ev.trace is not None:
        for st in ev.trace.failed_stages:
            info = ev.trace.stage_info.get(st, {})
            where = f"stage {st} on {ev.trace.traced_on or '?'}"
            lines.append(EvidenceLine("stage", f"traced on {ev.trace.traced_on or '?'}: stage {st} failed: "
                                      f"{info.get('error_type') or 'error'}: {str(info.get('error') or '')[:200]}",
                                      Basis.OBSERVED, source=ev.trace.source))
            target = errors if _cuda_bound(info) else broken
            if where not in target:
                target.append(where)
            device_calls |= _NOT_COMPILED_TEXT in str(info.get("error") or "")
    errors = list(dict.fromkeys(errors))
    if errors and device_calls and workaround is None and not (ev.trace and ev.trace.by_status("error")):
        # .cuda(), device="cuda", torch.cuda.* in the step: fixable by device-agnostic code (the scan's API
        # findings name the lines).
        workaround = "replace the CUDA-only calls by device-agnostic ones (.to(device), torch.accelerator.*)"
    if errors:
        return CheckItem(4, Status.FAILED, Basis.PREDICTED,
                         f"predicted to fail on MPS: {_names(errors)} (no MPS run observed)", lines,
                         prediction="fail", workaround=workaround,
                         next_step="apply the fixes, then mpsready record ENTRY --device mps on a Mac")
    if broken:
        next_step = "fix the entry or the step so it runs on the CPU, then check again"
        pe = ev.run.program_error if ev.run is not None else None
        if pe is not None and pe.kind == "environment" and pe.missing:
            next_step = (f"provide {pe.missing} in the environment that runs mpsready (the project's own "
                         f"requirements or data), then mpsready run again")
        elif pe is not None:
            next_step = "fix the program or its arguments so it runs here, then mpsready run again"
        return CheckItem(4, Status.NOT_CHECKED, None,
                         f"the step itself failed here ({_names(list(dict.fromkeys(broken)))}), for a reason that "
                         "does not involve CUDA: nothing about MPS can be concluded until it runs", lines,
                         next_step=next_step)
    if ev.trace is None and not ev.records and ev.run is None and ev.tests is None:
        why = ev.skipped.get("trace") or ev.skipped.get("record") or "no trace and no run record"
        return CheckItem(4, Status.NOT_CHECKED, None, f"not checked: {why}",
                         next_step="mpsready trace ENTRY (predicts, any machine), "
                                   "mpsready record ENTRY --device mps (observes, on a Mac)")
    basis_txt = []
    if ev.trace is not None:
        n_fb = len(ev.trace.by_status("fallback"))
        unknown = ev.trace.by_status("unknown")
        basis_txt.append(f"trace on {ev.trace.traced_on or '?'}: {len(ev.trace.ops)} operators, none predicted "
                         f"to fail" + (f", {n_fb} predicted to fall back to the CPU" if n_fb else "")
                         + (f", {len(unknown)} of unknown support" if unknown else ""))
        for o in unknown:
            lines.append(EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source))
    ran = [r.device for r in ev.records if r.all_passed]
    if ran:
        basis_txt.append(f"the step ran on {', '.join(ran)}")
    run_clean = ev.run is not None and ev.run.outcome in ("completed", "stopped") and ev.run.judged_ops > 0
    if ev.run is not None:
        basis_txt.append(f"emulated Mac run (torch {ev.run.torch_target}, macOS {ev.run.macos_target}): "
                         f"{ev.run.outcome}, {ev.run.judged_ops} MPS operators judged, none predicted to fail")
    tests_clean = False
    if ev.tests is not None:
        t = ev.tests
        reached = t.count("clean") + t.count("fallback")
        tests_clean = reached > 0
        basis_txt.append(f"emulated Mac tests (torch {t.torch_target}, macOS {t.macos_target}): {t.count('tests')} "
                         f"tests, {t.count('clean')} clean on MPS, none predicted to fail"
                         + (f", {t.count('fallback')} with CPU fallbacks" if t.count("fallback") else "")
                         + f", {t.count('no_mps')} never reached MPS"
                         + (f", {t.count('inconclusive')} failed here for reasons of their own"
                            if t.count("inconclusive") else ""))
    # An empty trace (no operator recorded) predicts nothing.
    prediction = "pass" if (ev.trace is not None and ev.trace.ops and not ev.trace.by_status("unknown")) \
        or run_clean or tests_clean else None
    return CheckItem(4, Status.NOT_CHECKED, None,
                     "no MPS run observed; " + "; ".join(basis_txt), lines, prediction=prediction,
                     next_step="mpsready record ENTRY --device mps on a Mac")


def _trace_has_problems(ev: Evidence) -> bool:
    """True when the trace predicts an error or holds a blocker finding (``_trace_workaround`` then speaks)."""
    return ev.trace is not None and (bool(ev.trace.by_status("error")) or any(
        f.severity is Severity.BLOCKER for f in ev.trace.findings))


def _combine_ways(*ways: str | None) -> str | None:
    """Ways around from several sources: ``None`` when one has none; ``""`` stands for "nothing to get around"."""
    if any(w is None for w in ways):
        return None
    return "; ".join(w for w in ways if w) or None


def _minor(version: str) -> str:
    """``2.8.0`` -> ``2.8`` (what ``mpsready run --torch`` takes)."""
    return ".".join(version.split(".")[:2])


# The cost of PyTorch's MPS fallback: the call runs on the CPU and its tensors are copied off the device and
# back (aten/src/ATen/mps/MPSFallback.mm, 2.3-2.14).
FALLBACK_COST = "each call runs on the CPU, its tensors copied off the device and back"


def run_failure_way(f) -> str | None:
    """The way around one predicted failure of an emulated run, or ``None`` when none is known.

    A release that adds the kernel or lifts the refusal (``fixed_in``) is an upgrade; a missing kernel
    (kind ``missing``) runs on the CPU with ``PYTORCH_ENABLE_MPS_FALLBACK=1`` (PyTorch's MPS fallback,
    MPSFallback.mm); a float64 refusal (kind ``dtype``) goes away with a float32 cast before the device
    (MPS has no float64, PyTorch docs notes/mps.rst); a CUDA-only call (``cuda_api``) with device-agnostic
    code; ``.numpy()`` of an MPS tensor (``mps_api``) with ``.cpu()`` first; an op that needs a newer macOS
    (``macos``) or a macOS below the release's minimum (``mps_unavailable``) with a macOS upgrade.
    """
    name = f.op or f.kind
    ways = []
    if f.fixed_in:
        ways.append(f"upgrade PyTorch to >= {f.fixed_in} (mpsready run --torch {_minor(f.fixed_in)} checks it)")
    if f.kind == "missing":
        ways.append(f"PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU (cost: {FALLBACK_COST}; "
                    "mpsready run --fallback predicts its share of time)")
    elif f.kind == "dtype":
        ways.append("cast the float64 tensors to float32 before they reach the device")
    elif f.kind == "cuda_api":
        ways.append("replace the CUDA-only calls by device-agnostic ones (.to(device), torch.accelerator.*)")
    elif f.kind == "mps_api":
        ways.append("copy the tensor to the CPU first (.cpu())")
    elif f.kind == "macos":
        ways.append("a newer macOS, where MPS has the kernel (the support table's macOS condition)")
    elif f.kind == "mps_unavailable":
        ways.append("a macOS that this PyTorch release supports for MPS")
    if not ways:
        return None
    return f"{name}" + (f" at {f.where}" if f.where else "") + ": " + " or ".join(ways)


def _run_workaround(run) -> str | None:
    """The way around every predicted failure of an emulated run, or ``None`` when one of them has none."""
    parts = [run_failure_way(f) for f in run.failures]
    ways = [p for p in parts if p is not None]
    if not parts or len(ways) < len(parts):
        return None
    return "; ".join(dict.fromkeys(ways))


def _finding_for(ev: Evidence, op: str) -> Finding | None:
    for f in ev.trace.findings if ev.trace else []:
        if f.fix and (f.location.operator == op or (isinstance(f.evidence, dict) and f.evidence.get("op") == op)):
            return f
    return None


# The stable parts of PyTorch's own MPS error texts (MPSFallback.mm for a missing operator, the MPS tensor
# conversion for float64; 2.3 to 2.14, as quoted in mpsready.record.mps), and the way around each.
_MISSING_OP_TEXT = "is not currently implemented for the MPS device"
_FLOAT64_TEXT = "MPS framework doesn't support float64"


def _observed_workaround(rec: RecordEvidence) -> str | None:
    """A way around every failed MPS stage, read from PyTorch's error text, or ``None``."""
    ways = []
    for st in rec.failed_stages:
        err = str(rec.stages[st].get("error") or "")
        if _MISSING_OP_TEXT in err:
            op = err.split("'")[1] if err.count("'") >= 2 else "the operator"
            ways.append(f"{op}: PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU")
        elif _FLOAT64_TEXT in err:
            ways.append(f"{st}: cast the float64 tensors to float32 before they reach the device")
        else:
            return None
    return "; ".join(dict.fromkeys(ways)) or None


_CUDA_WORDS = ("cuda", "nvcc", "nvidia", "cudnn", "nccl", "triton")
# What PyTorch raises for .cuda() / torch.cuda.* on a build without CUDA (torch/cuda/__init__.py, 2.13).
_NOT_COMPILED_TEXT = "Torch not compiled with CUDA enabled"


def _cuda_bound(stage: dict) -> bool:
    """True when a stage's error names CUDA (e.g. "Torch not compiled with CUDA enabled")."""
    text = f"{stage.get('error_type') or ''} {stage.get('error') or ''}".lower()
    return any(w in text for w in _CUDA_WORDS)


def _trace_workaround(ev: Evidence) -> str | None:
    """The way around every predicted error, or ``None`` when one of them has none.

    A kernel added in a later release (``fixed_in``) is an upgrade; a missing kernel without one
    still runs with ``PYTORCH_ENABLE_MPS_FALLBACK=1`` (on the CPU, PyTorch's MPS fallback,
    aten/src/ATen/mps/MPSFallback.mm); dtype and other problems need the fix their finding gives.
    """
    if ev.trace is None:
        return None
    parts = []
    for o in ev.trace.by_status("error"):
        f = _finding_for(ev, o.op)
        if o.fixed_in:
            parts.append(f"{o.op}: PyTorch {o.fixed_in}")
        elif set(o.problems) <= {"missing"} and "missing" in o.problems:
            parts.append(f"{o.op}: PYTORCH_ENABLE_MPS_FALLBACK=1 (runs on the CPU)")
        elif f is not None:
            parts.append(f"{o.op}: {f.fix}")
        else:
            return None
    error_ops = {o.op for o in ev.trace.by_status("error")}
    for f in ev.trace.findings:
        if f.severity is Severity.BLOCKER and f.location.operator not in error_ops:
            if not f.fix:
                return None
            parts.append(f"{f.code}: {f.fix}")
    return "; ".join(dict.fromkeys(parts)) or None


# ---------------------------------------------------------------------------------------------
# Item 5: comparison with the CUDA reference
# ---------------------------------------------------------------------------------------------

def item_comparison(ev: Evidence) -> CheckItem:
    item = _item_comparison(ev)
    wrong = ev.run.wrong_results if ev.run is not None else []
    if not wrong or item.status is Status.FAILED and item.basis is Basis.OBSERVED:
        return item
    # a call the emulated Mac matched against a known silent wrong-result advisory: the outputs cannot be taken
    # to match, whatever a comparison on other devices said (mps_wrong_results.yaml, public PyTorch reports)
    lines = [EvidenceLine("note", w.line(), Basis.PREDICTED, source=w.report) for w in wrong[:6]] + item.evidence
    first = wrong[0]
    fix = f"PyTorch {first.fixed_in}" if first.fixed_in else None
    return CheckItem(5, Status.FAILED, Basis.PREDICTED,
                     f"predicted wrong result: {first.op} at {first.where or 'an unknown line'} matches advisory "
                     f"{first.id} ({first.summary[:120]})" + (f"; {len(wrong) - 1} more" if len(wrong) > 1 else ""),
                     lines, prediction="fail",
                     workaround=(f"upgrade to {fix}" if fix else None),
                     next_step="make the input contiguous or change the release as the advisory says, then record "
                               "the step on a Mac and compare it with the CUDA record")


def _item_comparison(ev: Evidence) -> CheckItem:
    c = ev.compare
    if c is None:
        why = ev.skipped.get("compare") or "no comparison was made"
        return CheckItem(5, Status.NOT_CHECKED, None, f"not checked: {why}",
                         next_step="mpsready compare CUDA_RECORD MPS_RECORD")
    lines = [EvidenceLine("comparison", f"{c.devices()}: {c.compared or 0} tensors compared, "
                          f"{c.failed if c.failed is not None else '?'} out of tolerance"
                          + (f", first divergence at {c.first_divergence}" if c.first_divergence else ""),
                          Basis.OBSERVED, source=c.source)]
    for r in [r for r in c.rows if r.ok is False][:6]:
        lines.append(EvidenceLine("comparison", f"{r.name}: max abs {_g(r.max_abs)}, max rel {_g(r.max_rel)}, "
                                  f"cosine {_g(r.cosine)}", Basis.OBSERVED, source=c.source))
    if c.rng_dependent:
        lines.append(EvidenceLine("note", "the step uses random operators: devices draw different streams from "
                                  "the same seed", Basis.OBSERVED, source=c.source))
    lines += [_finding_line(f) for f in sort_findings(c.findings)[:6]]
    on_mps = c.involves("mps")
    with_cuda = c.involves("cuda") or c.device_ref is not None and c.device_ref.startswith("cuda")
    if c.passed is None:
        return CheckItem(5, Status.NOT_CHECKED, None, f"the comparison {c.devices()} has no verdict", lines,
                         next_step="re-run mpsready compare")
    if on_mps and with_cuda:
        if c.passed:
            return CheckItem(5, Status.PASSED, Basis.OBSERVED,
                             f"{c.devices()}: every compared tensor within tolerance", lines)
        return CheckItem(5, Status.FAILED, Basis.OBSERVED,
                         f"{c.devices()}: {c.failed} tensor(s) out of tolerance"
                         + (f", first at {c.first_divergence}" if c.first_divergence else ""), lines,
                         next_step="look at the first diverging layer; re-run with fixed inputs if RNG is involved")
    # A comparison between other devices is a proxy: a failure predicts trouble, a pass proves nothing for MPS,
    # and a pass between two runs on the same backend (a rerun) predicts nothing at all.
    same_backend = (c.device_a or "a").split(":")[0] == (c.device_b or "b").split(":")[0]
    if c.passed and same_backend:
        return CheckItem(5, Status.NOT_CHECKED, None,
                         f"{c.devices()} agree within tolerance: a rerun on the same backend says nothing about MPS",
                         lines, next_step="record the step on a Mac and compare it with the CUDA record")
    if c.passed:
        return CheckItem(5, Status.NOT_CHECKED, None,
                         f"{c.devices()} agree within tolerance, but MPS was not compared with CUDA", lines,
                         prediction="pass", next_step="record the step on a Mac and compare it with the CUDA record")
    return CheckItem(5, Status.FAILED, Basis.PREDICTED,
                     f"{c.devices()}: {c.failed} tensor(s) out of tolerance; a step this sensitive to the device "
                     "is predicted to differ on MPS too", lines, prediction="fail",
                     next_step="find the first diverging layer; fix inputs and RNG, then compare MPS with CUDA")


def _g(v: float | None) -> str:
    return "?" if v is None else f"{v:.3g}"


# ---------------------------------------------------------------------------------------------
# Item 6: CPU fallback
# ---------------------------------------------------------------------------------------------

def item_fallback(ev: Evidence) -> CheckItem:
    mps = ev.record_on("mps")
    counted = mps is not None and (mps.fallback_checked is True or bool(mps.fallback_ops))
    if mps is not None and mps.fallback_enabled is not None and counted:
        enabled = "enabled" if mps.fallback_enabled else "not enabled"
        lines = [EvidenceLine("record", f"PYTORCH_ENABLE_MPS_FALLBACK {enabled} on {mps.device}", Basis.OBSERVED,
                              source=mps.source)]
        lines += [EvidenceLine("trace", f"{op}: {n} call(s) ran on the CPU" if n else
                               f"{op}: ran on the CPU (named in PyTorch's fallback warning, not counted)",
                               Basis.OBSERVED, source=mps.source)
                  for op, n in sorted(mps.fallback_ops.items(), key=lambda kv: -kv[1])]
        if not mps.fallback_ops:
            return CheckItem(6, Status.PASSED, Basis.OBSERVED,
                             f"fallback {enabled}; no operator fell back to the CPU", lines)
        return CheckItem(6, Status.FAILED, Basis.OBSERVED,
                         f"fallback {enabled}; {len(mps.fallback_ops)} operator(s) ran on the CPU: "
                         f"{_names(sorted(mps.fallback_ops))}", lines, workaround=_fallback_fix(ev))
    if ev.run is not None and (ev.run.fallbacks or ev.trace is None):
        run = ev.run
        enabled = "assumed set" if run.fallback_enabled else "not set"
        lines = [EvidenceLine("run", f"emulated Mac run: PYTORCH_ENABLE_MPS_FALLBACK {enabled}", Basis.PREDICTED,
                              source=run.source)]
        lines += [EvidenceLine("run", fb.line(), Basis.PREDICTED, source=run.source) for fb in run.fallbacks]
        if run.fallbacks:
            share = run.fallback_share
            fixes = sorted({f"PyTorch {f.fixed_in}" for f in run.fallbacks if f.fixed_in})
            return CheckItem(6, Status.FAILED, Basis.PREDICTED,
                             f"emulated Mac run: {len(run.fallbacks)} operator(s) fell back to the CPU: "
                             f"{_names(sorted(f.op for f in run.fallbacks))}"
                             + (f", about {share:.0%} of the run's time here" if share is not None else ""), lines,
                             prediction="fail",
                             workaround="runs with those operators on the CPU"
                                        + (f"; fixed in {', '.join(fixes)}" if fixes else ""),
                             next_step="record on MPS with PYTORCH_ENABLE_MPS_FALLBACK=1 to count actual fallbacks")
        if run.judged_ops and run.outcome in ("completed", "stopped"):
            return CheckItem(6, Status.NOT_CHECKED, None,
                             f"emulated Mac run ({run.outcome}): no operator fell back to the CPU; not observed on MPS",
                             lines, prediction="pass", next_step="mpsready record ENTRY --device mps on a Mac")
        if run.judged_ops:  # ended early: what came after its end was never judged
            return CheckItem(6, Status.NOT_CHECKED, None,
                             f"emulated Mac run ({run.outcome}): no operator fell back to the CPU before it ended; the "
                             "rest of the program was not run", lines,
                             next_step="mpsready run again once the program runs to its end")
    if ev.trace is not None:
        fb = ev.trace.by_status("fallback")
        lines = [EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source) for o in fb]
        if fb:
            share = ev.trace.fallback_time_share
            return CheckItem(6, Status.FAILED, Basis.PREDICTED,
                             f"{len(fb)} operator(s) predicted to fall back to the CPU (needs "
                             "PYTORCH_ENABLE_MPS_FALLBACK=1)"
                             + (f", about {share:.0%} of step time" if share is not None else ""), lines,
                             prediction="fail", workaround=_fallback_fix(ev),
                             next_step="record on MPS with PYTORCH_ENABLE_MPS_FALLBACK=1 to count actual fallbacks")
        if not ev.trace.ops:
            return CheckItem(6, Status.NOT_CHECKED, None, "the trace recorded no operator",
                             next_step="mpsready trace ENTRY, then mpsready record ENTRY --device mps on a Mac")
        return CheckItem(6, Status.NOT_CHECKED, None, "no operator is predicted to fall back; not observed on MPS",
                         lines, prediction="pass", next_step="mpsready record ENTRY --device mps on a Mac")
    return CheckItem(6, Status.NOT_CHECKED, None, "no trace and no MPS run",
                     next_step="mpsready trace ENTRY (predicts), mpsready record --device mps (observes)")


def _fallback_fix(ev: Evidence) -> str:
    if ev.trace is None:
        return "runs, with those operators on the CPU"
    fixes = sorted({f"PyTorch {o.fixed_in}" for o in ev.trace.by_status("fallback") if o.fixed_in})
    return "runs with those operators on the CPU" + (f"; fixed in {', '.join(fixes)}" if fixes else "")


# ---------------------------------------------------------------------------------------------
# Item 7: versions, settings and observations recorded
# ---------------------------------------------------------------------------------------------

def item_recorded(ev: Evidence) -> CheckItem:
    envs = ev.envs()
    if not envs:
        return CheckItem(7, Status.NOT_CHECKED, None, "no environment record", next_step="mpsready env")
    lines = []
    for e in envs:
        text = e.describe()
        if e.git_commit:
            text += f", commit {e.git_commit[:12]}" + (" (dirty tree)" if e.git_dirty else "")
        lines.append(EvidenceLine("env", text, Basis.OBSERVED, source=e.source))
    for r in ev.records:
        lines.append(EvidenceLine("record", f"run record on {r.device}: {len(r.stages)} stages, "
                                  f"{len(r.losses)} step(s)", Basis.OBSERVED, source=r.source))
    dirty = any(e.git_dirty for e in envs)
    what = f"{len(envs)} environment record(s) and {len(ev.records)} run record(s)"
    return CheckItem(7, Status.PASSED, Basis.OBSERVED,
                     what + (" (the project tree had uncommitted changes)" if dirty else ""), lines)


# ---------------------------------------------------------------------------------------------
# Item 8: data handling
# ---------------------------------------------------------------------------------------------

def item_data(ev: Evidence) -> CheckItem:
    """Passed only on an observation: a run record says whether raw tensors were written. Scan, env and
    trace outputs hold no raw data by construction, which is a property of the tool, not an observation of
    the run that would move to the Mac (``report --scan scan.json`` alone used to pass this item)."""
    if not ev.stages_present():
        return CheckItem(8, Status.NOT_CHECKED, None, "no stage output to inspect")
    if not ev.records:
        return CheckItem(8, Status.NOT_CHECKED, None,
                         "no run record: whether a run keeps its data on the machine is observed only in a run "
                         "record (scan, env and trace outputs hold no raw data)", prediction="pass",
                         next_step="mpsready record ENTRY --device D --out DIR (raw tensors only with "
                                   "--save-tensors)")
    raw = [r for r in ev.records if r.raw_tensors]
    lines = [EvidenceLine("record", f"{r.device}: raw tensors {'saved' if r.raw_tensors else 'not saved'}",
                          Basis.OBSERVED, source=r.source) for r in ev.records]
    if raw:
        return CheckItem(8, Status.FAILED, Basis.OBSERVED,
                         f"{len(raw)} run record(s) hold raw tensors ({', '.join(r.device for r in raw)})",
                         lines, workaround="record without --save-tensors (statistics and checksums only), or "
                         "confirm the lab's rules allow these tensors to leave the machine",
                         next_step="check the lab's data rules before moving the records")
    return CheckItem(8, Status.PASSED, Basis.OBSERVED,
                     "no raw data in any output: records hold statistics and checksums only, "
                     "scan and trace outputs hold none", lines)


ITEMS = (item_dependencies, item_components, item_availability, item_step, item_comparison, item_fallback,
         item_recorded, item_data)


def build_checklist(ev: Evidence) -> list[CheckItem]:
    """The eight items, in spec order."""
    return [fn(ev) for fn in ITEMS]
