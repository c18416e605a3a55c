"""NUM301-NUM304 and PRF301: findings of numerics triage (:mod:`mpsready.numerics`).

* NUM301: the first op that produced NaN/Inf (``record``: observed on the record's device; ``run``/``trace``:
  on the emulated device, where the program's own numerics are this CPU's, so a NaN there is real but
  MPS kernels' rounding is not reproduced);
* NUM305: a std/var over one element (NaN by definition), info;
* NUM302: in a comparison, one run went non-finite first (``compare``, from both records' ``first_nonfinite``);
* NUM303 / NUM304: ``mpsready replay``: the layer alone reproduces the divergence (an op difference) / does
  not (the error arrived with its inputs);
* PRF301: input shapes that change in most steps at one line (``run``, ``trace``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

from mpsready.findings import Basis, Finding, Location, Severity
from mpsready.rules import Rule, register

_WATCH = "mpsready numerics watch (mpsready/numerics/watch.py): one reduction per floating result"
_GRAPH = ("aten/src/ATen/native/mps/OperationUtils.mm (getTensorsStringKey: the shapes are part of each op's "
          "MPSGraphCache key; PyTorch 2.0-2.13); https://github.com/pytorch/pytorch/pull/182648 (\"MPSGraph compiles "
          "a new graph per unique shape combination\"; issues #77753, #164299)")

NUM301 = register(Rule(
    "NUM301", "first-nonfinite-op", Severity.DEGRADES,
    "The first op whose floating result held NaN or Inf while its inputs were finite, with its line.",
    "A NaN loss is where non-finite values are noticed, not where they are made; the op and line that made the "
    "first one (log of a negative value, a float16 division that underflowed to 0) is what to fix, and on MPS "
    "the same op in float16/bfloat16 or with MPS's rounding can make it where CUDA did not.",
    "aten::log (float32) at train.py:14 in step, stage forward, step 0: 1 NaN from finite inputs "
    "(input min -1.0, max 2.0)",
    "Guard the op's input at that line (clamp before log/sqrt/division, an eps in the denominator), or run it "
    "in float32 outside autocast (`with torch.autocast(device, enabled=False)`).",
    _WATCH))
NUM302 = register(Rule(
    "NUM302", "nonfinite-first-one-side", Severity.DEGRADES,
    "Of two compared runs, one produced a NaN/Inf (at a named op and line) and the other did not, or did later.",
    "Where the non-finite value appeared first separates a device's numerics (the op on MPS) from a problem "
    "both runs share.",
    "B (mps) went non-finite first: aten::div.Tensor (float16) at model.py:40, step 2; A (cuda) stayed finite",
    "Look at that op's dtype and inputs on the run that went non-finite; record both with the NaN check on.",
    _WATCH))
NUM303 = register(Rule(
    "NUM303", "replay-op-difference", Severity.DEGRADES,
    "Re-run alone from the same recorded inputs, the diverging layer reproduces the divergence: an op computes "
    "differently (named: the op inside the layer with the largest error against float64).",
    "The difference is the layer's own arithmetic on that device (a kernel's precision, a fused path), not "
    "error carried in from earlier layers.",
    "layer encoder.0 (Linear): alone it reproduces 0.94 of the recorded divergence; largest op error "
    "aten::addmm 3.1e-03",
    "Run that op in float32 (or on the CPU) on MPS, or upgrade to a release that fixes its kernel; report it "
    "upstream with the replay's inputs.",
    "mpsready replay (mpsready/replay/engine.py)"))
NUM304 = register(Rule(
    "NUM304", "replay-accumulated", Severity.INFO,
    "Re-run alone from the same recorded inputs, the diverging layer does not reproduce the divergence: the "
    "error accumulated upstream and arrived with its inputs.",
    "The first layer out of tolerance is where accumulated rounding crossed the threshold, not a faulty op.",
    "layer head (Linear): alone 0.01 of the recorded divergence; its inputs differ by 2.0e-02 between A and B",
    "Replay an earlier layer (`--layer`), or loosen tolerances for a deep stack of float32 layers.",
    "mpsready replay (mpsready/replay/engine.py)"))
NUM305 = register(Rule(
    "NUM305", "degenerate-reduction", Severity.INFO,
    "A std/var over no more elements than its correction (std of one value): NaN by definition, not an op "
    "going wrong; reported once per op and line, and what its NaN reaches is not reported as NUM301.",
    "Bessel's correction divides by N - 1: over one element the result is NaN on every device (PyTorch warns "
    "\"degrees of freedom is <= 0\"); it is usually a statistic of a batch or a list that happened to hold one "
    "value, not a numerics problem of the Mac.",
    "aten::std.correction at report.py:12, stage forward, step 0: 1 element(s) per result with correction 1: 0 "
    "degrees of freedom, NaN by definition",
    "Pass `correction=0` (or `unbiased=False`) where one value is possible, or skip the statistic for a single "
    "value.",
    "aten/src/ATen/native/ReduceOps.cpp (std_var: \"degrees of freedom is <= 0\", PyTorch 2.0-2.13)"))
PRF301 = register(Rule(
    "PRF301", "dynamic-input-shapes", Severity.DEGRADES,
    "An op at one line of the program got new input shapes in more than half of the observed steps.",
    "MPS builds and caches a graph per op and input shapes: every new shape costs a graph build, so variable "
    "sequence lengths, ragged last batches or dynamic crops make each step slow on a Mac.",
    "aten::bmm at model.py:52: 6 distinct input shapes in 6 steps",
    "Pad or bucket to a few fixed lengths (pad sequences to a multiple of 64, bucket by length), and use "
    "`drop_last=True` in the DataLoader so the last batch does not bring a new shape.",
    _GRAPH))


def _where(loc: Any) -> str:
    if not loc:
        return "no line of the program (inside PyTorch or the step runner)"
    return f"{loc.get('path')}:{loc.get('line')}" + (f" in {loc['function']}" if loc.get("function") else "")


def describe_first(first: Mapping[str, Any]) -> str:
    """``aten::log (float32) at train.py:14 in step, stage forward, step 0: 2 NaN, 0 Inf from finite inputs
    (input 0: min -1, max 3, mean 0.5)``."""
    s = (f"{first['op']} ({first.get('dtype')}) at {_where(first.get('location'))}, stage {first.get('stage')}, "
         f"step {first.get('step')}: {first.get('nan')} NaN, {first.get('inf')} Inf")
    fin = first.get("from_finite_inputs")
    s += (" from finite inputs" if fin else " from an input already non-finite (made outside the watched calls)"
          if fin is False else " (inputs not kept: freed or overwritten before the deferred check)")
    ins = first.get("inputs") or []
    if ins:
        parts = [f"input {i}: min {_g(x['min'])}, max {_g(x['max'])}, mean {_g(x['mean'])}"
                 + (f", {x['nan']} NaN/{x['inf']} Inf" if x.get("nan") or x.get("inf") else "")
                 for i, x in enumerate(ins[:4])]
        s += " (" + "; ".join(parts) + ")"
    return s


def _g(x: Any) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def first_nonfinite_finding(first: Mapping[str, Any] | None, basis: Basis, on: str) -> Finding | None:
    """NUM301 for a ``first_nonfinite`` dict (:meth:`mpsready.numerics.watch.OpWatch.to_dict`); ``on``: the
    device in words."""
    if not first:
        return None
    loc = first.get("location") or {}
    return Finding(code=NUM301.code, severity=NUM301.severity, message=f"first NaN/Inf on {on}: {describe_first(first)}",
                   location=Location(path=loc.get("path"), line=loc.get("line"), operator=first.get("op"),
                                     stage=first.get("stage")),
                   basis=basis, fix=NUM301.fix, source=NUM301.source, evidence=dict(first))


def degenerate_findings(notes: Sequence[Mapping[str, Any]] | None, basis: Basis) -> list[Finding]:
    """NUM305 (info) per degenerate reduction of :attr:`mpsready.numerics.watch.OpWatch.notes`."""
    out = []
    for n in notes or []:
        loc = n.get("location") or {}
        out.append(Finding(code=NUM305.code, severity=NUM305.severity,
                           message=(f"{n['op']} at {_where(loc)}, stage {n.get('stage')}, step {n.get('step')}: "
                                    f"{n['reason']}"),
                           location=Location(path=loc.get("path"), line=loc.get("line"), operator=n["op"],
                                             stage=n.get("stage")),
                           basis=basis, fix=NUM305.fix, source=NUM305.source, evidence=dict(n)))
    return out


def dynamic_shape_findings(items: Sequence[Mapping[str, Any]] | None, basis: Basis, limit: int = 10) -> list[Finding]:
    """PRF301 per item of :meth:`mpsready.numerics.watch.OpWatch.dynamic_shapes`."""
    out = []
    for d in (items or [])[:limit]:
        loc = d.get("location") or {}
        shown = ", ".join("x".join(str(n) for n in s[0]) if s else "()" for s in d["shapes"][:6])
        out.append(Finding(
            code=PRF301.code, severity=PRF301.severity,
            message=(f"{d['op']} at {_where(loc)}: {d['distinct']} distinct input shapes in {d['steps']} steps "
                     f"(new in steps {', '.join(str(s) for s in d['new_in_steps'][:10])}; first inputs {shown}): "
                     "a new MPS graph per shape"),
            location=Location(path=loc.get("path"), line=loc.get("line"), operator=d["op"]),
            basis=basis, fix=PRF301.fix, source=PRF301.source, evidence=dict(d)))
    return out


def compare_nonfinite_finding(ma: Mapping[str, Any], mb: Mapping[str, Any], basis: Basis) -> Finding | None:
    """NUM302 from two record manifests (A, B): the side whose ``first_nonfinite`` came first (earlier step;
    the only one), or ``None`` when neither or both at the same step, or a side did not check."""
    fa, fb = ma.get("first_nonfinite"), mb.get("first_nonfinite")
    if not (ma.get("nan_check") and mb.get("nan_check")) or (not fa and not fb):
        return None
    if fa and fb and fa.get("step") == fb.get("step") and \
            (fa.get("op"), fa.get("location")) == (fb.get("op"), fb.get("location")):
        return None  # both at the same op, line and step
    if fa and (not fb or fa["step"] < fb["step"]):
        side, other, first, later = "A", "B", fa, fb
        dev, odev = ma.get("device"), mb.get("device")
    elif fb and (not fa or fb["step"] < fa["step"]):
        side, other, first, later = "B", "A", fb, fa
        dev, odev = mb.get("device"), ma.get("device")
    else:  # same step, different op or line: report both, B first
        side, other, first, later = "B", "A", fb, fa
        dev, odev = mb.get("device"), ma.get("device")
    rest = (f"{other} ({odev}) stayed finite" if not later else
            f"{other} ({odev}) went non-finite at step {later['step']}: {later['op']} at {_where(later.get('location'))}")
    loc = first.get("location") or {}
    return Finding(code=NUM302.code, severity=NUM302.severity,
                   message=f"{side} ({dev}) went non-finite first: {describe_first(first)}; {rest}",
                   location=Location(path=loc.get("path"), line=loc.get("line"), operator=first.get("op"),
                                     stage=first.get("stage")),
                   basis=basis, fix=NUM302.fix, source=NUM302.source,
                   evidence={"side": side, "first": dict(first), "other": dict(later) if later else None})
