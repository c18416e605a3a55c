"""Checklist item 4: the representative step on the target backend, from an MPS record (observed) or from the
trace, the emulated run, the emulated tests and the other devices' records (predicted), with the way around
each predicted failure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mpsready.findings import Basis, Finding, Severity, sort_findings
from mpsready.report.evidence import Evidence, RecordEvidence
from mpsready.report.checkitem import CheckItem, EvidenceLine, Status, finding_line, name_list


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
    """Item 4: observed on an MPS record when there is one, else predicted from every other source."""
    mps = ev.record_on("mps")
    if mps is not None:
        return _observed_step(ev, mps)
    g = _Gathered()
    _from_trace(ev, g)
    _from_run(ev, g)
    _from_tests(ev, g)
    _from_other_devices(ev, g)
    g.errors = list(dict.fromkeys(g.errors))
    if g.errors and g.device_calls and g.workaround is None and not (ev.trace and ev.trace.by_status("error")):
        # .cuda(), device="cuda", torch.cuda.* in the step: fixable by device-agnostic code (the scan's API
        # findings name the lines).
        g.workaround = "replace the CUDA-only calls by device-agnostic ones (.to(device), torch.accelerator.*)"
    if g.errors:
        return CheckItem(4, Status.FAILED, Basis.PREDICTED,
                         f"predicted to fail on MPS: {name_list(g.errors)} (no MPS run observed)", g.lines,
                         prediction="fail", workaround=g.workaround,
                         next_step="apply the fixes, then mpsready record ENTRY --device mps on a Mac")
    if g.broken:
        return _broken_step(ev, g)
    if ev.trace is None and not ev.records and ev.run is None and ev.tests is None:
        why = ev.skipped.get("trace") or ev.skipped.get("record") or "no trace and no run record"
        return CheckItem(4, Status.NOT_CHECKED, None, f"not checked: {why}",
                         next_step="mpsready trace ENTRY (predicts, any machine), "
                                   "mpsready record ENTRY --device mps (observes, on a Mac)")
    return _clean_step(ev, g.lines)


@dataclass
class _Gathered:
    """What the predicted sources say about the step: evidence lines, the failures that involve MPS or CUDA
    (``errors``), those that do not (``broken``: the step fails here for its own reasons), the way around."""

    lines: list[EvidenceLine] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    workaround: str | None = None
    device_calls: bool = False  # a failure from a CUDA-only call ("Torch not compiled with CUDA enabled")


def _observed_step(ev: Evidence, mps: RecordEvidence) -> CheckItem:
    lines = _stage_lines(mps)
    if mps.failed_stages:
        return CheckItem(4, Status.FAILED, Basis.OBSERVED,
                         f"the step failed on {mps.device} in {name_list(mps.failed_stages)}", lines,
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


def _from_trace(ev: Evidence, g: _Gathered) -> None:
    """Predictions: the trace's operator classification and its dtype findings."""
    if ev.trace is None:
        return
    err_ops = ev.trace.by_status("error")
    for o in err_ops:
        g.lines.append(EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source))
    dty = [f for f in ev.trace.findings if f.severity is Severity.BLOCKER and not any(
        o.op == f.location.operator for o in err_ops)]
    g.lines += [finding_line(f) for f in sort_findings(dty)]
    kinds = Counter(f"{f.code} ({f.evidence.get('dtype')})" if isinstance(f.evidence, dict)
                    and f.evidence.get("dtype") else f.code for f in dty)
    g.errors += [o.op for o in err_ops] + [k + (f" x{n}" if n > 1 else "") for k, n in kinds.items()]
    for o in ev.trace.by_status("fallback"):
        g.lines.append(EvidenceLine("trace", o.line(), Basis.PREDICTED, source=ev.trace.source))
    g.workaround = _trace_workaround(ev)


NO_MPS_RUN = ("emulated Mac run: no tensor reached the emulated MPS device: on a Mac this program runs on the CPU "
              "(a device selection that checks only CUDA, or no --device mps given); not a pass, nothing was judged")


def _from_run(ev: Evidence, g: _Gathered) -> None:
    """Predictions from an emulated Mac run (mpsready run): the failures the emulated device raised, as a Mac
    would. The exception that ended an inconclusive run is not one of them (a missing module, a missing file)."""
    if ev.run is None:
        return
    for f in ev.run.failures:
        g.lines.append(EvidenceLine("run", f.line(), Basis.PREDICTED, source=ev.run.source))
        g.errors.append(f"{f.op or f.kind} at {f.where}" if f.where else (f.op or f.kind))
    for fb in ev.run.fallbacks:
        g.lines.append(EvidenceLine("run", fb.line(), Basis.PREDICTED, source=ev.run.source))
    if not ev.run.mps_used and not ev.run.failures:
        g.lines.append(EvidenceLine("run", NO_MPS_RUN, None, source=ev.run.source))
    pe = ev.run.program_error
    if pe is not None:
        g.lines.append(EvidenceLine("run", pe.line(), None, source=ev.run.source))
        g.broken.append(f"the emulated run stopped at {pe.where or 'an unknown line'} on {pe.exception}"
                        + (f", {pe.missing} missing" if pe.kind == "environment" and pe.missing else ""))
    if ev.run.failures:
        g.workaround = _combine_ways(g.workaround if _trace_has_problems(ev) else "", _run_workaround(ev.run))


def _from_tests(ev: Evidence, g: _Gathered) -> None:
    """Predictions from the project's own tests on the emulated Mac (pytest --mps-emulate, the device model of
    mpsready run): each distinct failure (kind, op, dtype, line) is one error, with the tests that hit it."""
    if ev.tests is None:
        return
    before = bool(g.errors)
    for tf in ev.tests.test_failures[:12]:
        g.lines.append(EvidenceLine("tests", tf.line(), Basis.PREDICTED, source=ev.tests.source))
    for f, hit in ev.tests.causes:
        g.errors.append(f"{f.op or f.kind}" + (f" ({f.dtype})" if f.dtype else "") + f" in {hit} test"
                        + ("s" if hit > 1 else "") + (f" (first at {f.where})" if f.where else ""))
    for op, n in ev.tests.fallback_ops.items():
        g.lines.append(EvidenceLine("tests", f"emulated Mac tests: {op} ran on the CPU in {n} test(s)",
                                    Basis.PREDICTED, source=ev.tests.source))
    # modules that failed to collect never ran: not a prediction either way, and never a pass
    for text in ev.tests.collection_lines():
        g.lines.append(EvidenceLine("tests", text, None, source=ev.tests.source))
    if ev.tests.collection_errors:
        n = len(ev.tests.collection_errors)
        g.broken.append(f"{n} test module{'s' if n > 1 else ''} not run: collection error")
    if ev.tests.failures:
        g.workaround = _combine_ways(g.workaround if before else "", _run_workaround(ev.tests))


def _from_other_devices(ev: Evidence, g: _Gathered) -> None:
    """Other devices. A failure that names CUDA (a .cuda() call, a CUDA-only kernel) will happen on MPS too;
    any other failure means the step itself is broken here, which says nothing about MPS either way."""
    for rec in ev.records:
        if rec.backend == "mps":
            continue
        g.lines += _stage_lines(rec)
        for st in rec.failed_stages:
            (g.errors if _cuda_bound(rec.stages[st]) else g.broken).append(f"stage {st} on {rec.device}")
            g.device_calls |= _NOT_COMPILED_TEXT in str(rec.stages[st].get("error") or "")
    if ev.trace is not None:
        for st in ev.trace.failed_stages:
            info = ev.trace.stage_info.get(st, {})
            where = f"stage {st} on {ev.trace.traced_on or '?'}"
            g.lines.append(EvidenceLine("stage", f"traced on {ev.trace.traced_on or '?'}: stage {st} failed: "
                                        f"{info.get('error_type') or 'error'}: {str(info.get('error') or '')[:200]}",
                                        Basis.OBSERVED, source=ev.trace.source))
            target = g.errors if _cuda_bound(info) else g.broken
            if where not in target:
                target.append(where)
            g.device_calls |= _NOT_COMPILED_TEXT in str(info.get("error") or "")


def _broken_step(ev: Evidence, g: _Gathered) -> CheckItem:
    next_step = "fix the entry or the step so it runs on the CPU, then check again"
    pe = ev.run.program_error if ev.run is not None else None
    if pe is not None and pe.kind == "environment" and pe.missing:
        next_step = (f"provide {pe.missing} in the environment that runs mpsready (the project's own "
                     f"requirements or data), then mpsready run again")
    elif pe is not None:
        next_step = "fix the program or its arguments so it runs here, then mpsready run again"
    elif ev.tests is not None and ev.tests.collection_errors:
        next_step = ("make the test modules import here (pytest --mps-emulate --collect-only shows each error), "
                     "then run the suite again")
    return CheckItem(4, Status.NOT_CHECKED, None,
                     f"the step itself failed here ({name_list(list(dict.fromkeys(g.broken)))}), for a reason that "
                     "does not involve CUDA: nothing about MPS can be concluded until it runs", g.lines,
                     next_step=next_step)


def _clean_step(ev: Evidence, lines: list[EvidenceLine]) -> CheckItem:
    """No source predicts a failure: not checked, and predicted to pass when a source ran something."""
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
    if ev.run is not None and not ev.run.mps_used:
        # its own statement, never a pass: nothing the program did was judged for MPS
        basis_txt.append(f"emulated Mac run (torch {ev.run.torch_target}, macOS {ev.run.macos_target}): "
                         f"{ev.run.outcome}, but no tensor reached the emulated MPS device, so nothing about MPS was "
                         "judged")
    elif ev.run is not None:
        basis_txt.append(f"emulated Mac run (torch {ev.run.torch_target}, macOS {ev.run.macos_target}): "
                         f"{ev.run.outcome}, {ev.run.judged_ops} MPS operators judged, none predicted to fail"
                         + (f", {len(ev.run.raw.get('unverified') or [])} judged on no data (not verified)"
                            if ev.run.outcome == "unverified" else ""))
        for u in (ev.run.raw.get("unverified") or [])[:10] if ev.run.outcome == "unverified" else []:
            loc = u.get("location") or {}
            lines.append(EvidenceLine("run", f"emulated Mac run: {u.get('op')} at {loc.get('path')}:{loc.get('line')} "
                                      f"not verified ({u.get('kind')}): {str(u.get('reason'))[:160]}",
                                      Basis.PREDICTED, source=ev.run.source))
    tests_clean = False
    if ev.tests is not None:
        t = ev.tests
        reached = t.count("clean") + t.count("fallback")
        tests_clean = reached > 0
        if not t.count("tests"):
            basis_txt.append(f"emulated Mac tests (torch {t.torch_target}, macOS {t.macos_target}): no test ran "
                             "(nothing collected), nothing predicted")
        else:
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


def minor_release(version: str) -> str:
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
    code; ``.numpy()`` of an MPS tensor (``mps_api``) with ``.cpu()`` first; a child process spawn could not start (``spawn``) with
    module-level objects and a main guard; an op that needs a newer macOS
    (``macos``) or a macOS below the release's minimum (``mps_unavailable``) with a macOS upgrade.
    """
    name = f.op or f.kind
    ways = []
    if f.fixed_in:
        ways.append(f"upgrade PyTorch to >= {f.fixed_in} (mpsready run --torch {minor_release(f.fixed_in)} checks it)")
    if f.kind == "missing":
        ways.append(f"PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU (cost: {FALLBACK_COST}; "
                    "mpsready run --fallback predicts its share of time)")
    elif f.kind == "dtype":
        ways.append("cast the float64 tensors to float32 before they reach the device")
    elif f.kind == "cuda_api":
        ways.append("replace the CUDA-only calls by device-agnostic ones (.to(device), torch.accelerator.*)")
    elif f.kind == "mps_api":
        ways.append("copy the tensor to the CPU first (.cpu())")
    elif f.kind == "spawn":
        ways.append("define what the child process receives at module level, or guard the start with "
                    "if __name__ == '__main__' (macOS starts child processes by spawn)")
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
