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

from mpsready.findings import Basis, Severity, sort_findings
from mpsready.report.evidence import Evidence
from mpsready.report.evidence import scan as scan_adapter
from mpsready.report.checkitem import (SHORT, TITLES, CheckItem, EvidenceLine, Status, finding_line,  # noqa: F401
                                       name_list)
from mpsready.report.checklist_data import data_facts, install_lines, kit_lines
from mpsready.report.checklist_step import FALLBACK_COST, item_step, run_failure_way  # noqa: F401  # re-exported


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def item_dependencies(ev: Evidence) -> CheckItem:
    failed, installs = install_lines(ev)
    if failed:
        return CheckItem(1, Status.FAILED, Basis.OBSERVED,
                         f"{len(failed)} declared requirement(s) failed to install on the Mac: {name_list(failed)}",
                         installs + _dep_lines(ev), next_step="replace the named packages or make them optional, "
                                                               "then run the kit again")
    item = _item_dependencies(ev)
    if installs and item.status is not Status.FAILED:
        item.evidence = installs + item.evidence
    return item


def _item_dependencies(ev: Evidence) -> CheckItem:
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
                     f"(or not to work) on macOS: {name_list(names)}",
                     [finding_line(f) for f in sort_findings(deps)], prediction="fail", workaround=workaround,
                     next_step="replace the named packages, then install on the Mac")


def _dep_lines(ev: Evidence) -> list[EvidenceLine]:
    if ev.scan is None:
        return []
    return [finding_line(f) for f in sort_findings(ev.scan.main_findings)
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
        line = finding_line(f)
        lines.append(EvidenceLine(line.kind, line.text + (f" -> alternative: {alt}" if alt else
                                                          " -> no alternative known"),
                                  line.basis, line.code, line.source))
        if alt is None and f.severity is Severity.BLOCKER:
            without.append(scan_adapter.component_of(f))
    files = f" in the {ev.scan.files} files scanned" if ev.scan.files else ""
    if without:
        names = sorted(set(without))
        return CheckItem(2, Status.FAILED, Basis.PREDICTED,
                         f"{len(names)} CUDA-only component(s) without a known alternative: {name_list(names)}",
                         lines, prediction="fail",
                         next_step="find or write a portable implementation, or keep that part on CUDA")
    if not comps:
        return CheckItem(2, Status.PASSED, Basis.PREDICTED, f"the scan found no CUDA-only component{files}",
                         lines)
    names = sorted({scan_adapter.component_of(f) for f in comps})
    return CheckItem(2, Status.PASSED, Basis.PREDICTED,
                     f"{len(names)} CUDA-only component(s) identified{files}, each with an alternative or "
                     f"fallback: {name_list(names)}", lines)


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
                         f"MPS is built but not available on {mac.describe()} (macOS too old, an Intel Mac "
                         "without an AMD GPU, or an x86_64 Python under Rosetta)", lines,
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
                              "PyTorch build (PyTorch docs, notes/mps.rst, 2.13); on an Intel Mac only with an AMD "
                              "GPU and PyTorch 2.2.2 at most (the last macOS x86_64 wheel)", Basis.PREDICTED))
    return CheckItem(3, Status.NOT_CHECKED, None, f"{why}; availability must be checked on the Mac itself",
                     lines, prediction="pass", next_step="mpsready env on the Mac")


def _tri(v: bool | None) -> str:
    return "unknown" if v is None else str(v)


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
    lines += [finding_line(f) for f in sort_findings(c.findings)[:6]]
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
                         f"{name_list(sorted(mps.fallback_ops))}", lines, workaround=_fallback_fix(ev))
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
                             f"{name_list(sorted(f.op for f in run.fallbacks))}"
                             + (f", about {share:.0%} of the run's time here" if share is not None else ""), lines,
                             prediction="fail",
                             workaround="runs with those operators on the CPU"
                                        + (f"; fixed in {', '.join(fixes)}" if fixes else ""),
                             next_step="record on MPS with PYTORCH_ENABLE_MPS_FALLBACK=1 to count actual fallbacks")
        if run.judged_ops and run.outcome in ("completed", "stopped"):
            return CheckItem(6, Status.NOT_CHECKED, None,
                             f"emulated Mac run ({run.outcome}): no operator fell back to the CPU; not observed on MPS",
                             lines, prediction="pass", next_step="mpsready record ENTRY --device mps on a Mac")
        if run.judged_ops and run.outcome == "unverified":  # ran to its end, part of it judged on no data
            return CheckItem(6, Status.NOT_CHECKED, None,
                             f"emulated Mac run (unverified): no operator fell back to the CPU, but "
                             f"{len(run.raw.get('unverified') or [])} call(s) were judged on no data", lines,
                             next_step="mpsready record ENTRY --device mps on a Mac")
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
    """Whether the lab's data rules allow the environment: no tool can observe that (SPEC, item 8). It passes,
    "passed (attested)", only on a person's sign-off (``mpsready kit --approve``) of the kit's manifest whose
    hash is the one the results say ran, with every file of that kit as listed. Otherwise it is not checked, with
    what would leave the lab; that mpsready's own outputs hold no raw data is shown as a fact, never as a pass
    (it used to pass the item on that proxy). Never "observed"."""
    facts = data_facts(ev)
    mac = ev.mac
    check = (mac.kit_check if mac is not None else None) or {}
    if mac is None or not check:
        return CheckItem(8, Status.NOT_CHECKED, None, NOT_CONFIRMED + ": no kit with a manifest of what leaves "
                         "the lab was given", facts,
                         next_step="mpsready kit PATH --entry ENTRY -o DIR (a manifest of what would leave), then "
                                   "mpsready kit --approve DIR --by NAME --rule TEXT, and report --mac-results")
    lines = kit_lines(mac) + facts
    approval = check.get("approval") if isinstance(check.get("approval"), dict) else None
    ran = check.get("manifest_sha256")
    if not mac.ran:
        signed = f"signed off by {approval.get('by')}" if approval and check.get("signed") else \
            "not signed off" if approval is None else "its sign-off no longer matches its files"
        return CheckItem(8, Status.NOT_CHECKED, None, f"{NOT_CONFIRMED}; the kit (manifest sha256 {str(ran)[:12]}, "
                         f"{signed}) has not run yet", lines,
                         next_step="mpsready kit --approve DIR --by NAME --rule TEXT (if not yet), sh run-on-mac.sh "
                                   "on the target, then report --mac-results")
    if approval is None:
        return CheckItem(8, Status.NOT_CHECKED, None, NOT_CONFIRMED + f"; the kit that ran (manifest sha256 "
                         f"{str(ran)[:12]}) carried no sign-off", lines,
                         next_step="a person reads MANIFEST.md and runs mpsready kit --approve DIR --by NAME "
                                   "--rule TEXT, then the kit runs again")
    changed = [*(check.get("changed") or []), *(check.get("missing") or []), *(check.get("added") or [])]
    if approval.get("manifest_sha256") != ran or changed or check.get("intact") is not True:
        what = f"files changed after it: {name_list([str(c) for c in changed])}" if changed else \
            f"it signed manifest {str(approval.get('manifest_sha256'))[:12]}, the kit that ran has {str(ran)[:12]}"
        return CheckItem(8, Status.NOT_CHECKED, None, f"{NOT_CONFIRMED}: the sign-off by {approval.get('by')} no "
                         f"longer covers what ran ({what})", lines,
                         next_step="build the kit again, have it signed off, and run it unchanged")
    if mac.dry_run:
        return CheckItem(8, Status.NOT_CHECKED, None, f"{NOT_CONFIRMED}: signed off by {approval.get('by')}, but these "
                         f"results come from a dry run on {mac.device}, not from the environment the kit is for", lines,
                         next_step="run the signed kit unchanged on the target (sh run-on-mac.sh), then report "
                                   "--mac-results")
    return CheckItem(8, Status.PASSED, None, f"signed off by {approval.get('by')} on {approval.get('when')} under "
                     f"the rule: {approval.get('rule')}; the kit that ran matches the signed manifest (sha256 "
                     f"{str(ran)[:12]})", lines, attested=True)


NOT_CONFIRMED = "a person must confirm that the data rules allow this environment"


ITEMS = (item_dependencies, item_components, item_availability, item_step, item_comparison, item_fallback,
         item_recorded, item_data)


def build_checklist(ev: Evidence) -> list[CheckItem]:
    """The eight items, in spec order."""
    return [fn(ev) for fn in ITEMS]
