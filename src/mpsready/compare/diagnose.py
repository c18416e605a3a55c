"""Findings (NUM1xx, :mod:`mpsready.compare.rules`) drawn from a :class:`Comparison`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mpsready.compare import rules
from mpsready.findings import Basis, Finding, Location
from mpsready.findings import sort_findings

if TYPE_CHECKING:
    from mpsready.compare.engine import Comparison, TensorComparison

STAGE_OF_KIND = {"input": "data", "activation": "forward", "output": "forward", "loss": "loss",
                 "grad": "backward", "param": "optimizer_step"}
MAX_STRUCTURE_FINDINGS = 20


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return str(x)
    if x == 0:
        return "0"
    return f"{x:.3g}"


def describe(t: "TensorComparison") -> str:
    """One line on how a tensor pair differs."""
    m = t.metrics
    if m is None:
        return t.note or "not comparable"
    tol = f"rtol={fmt(t.tolerance.rtol)} atol={fmt(t.tolerance.atol)}"
    if m.method == "stats":
        bad = [s for s, d in m.stats_diff.items() if d["abs"] is not None and d["bound"] is not None
               and d["abs"] > d["bound"]]
        return (f"stats only: {', '.join(bad) or 'NaN/Inf counts'} outside the bound implied by {tol} "
                f"(worst {fmt(m.worst_ratio)}x the bound)")
    parts = [f"{m.mismatched} of {m.numel} elements ({100 * (m.mismatch_share or 0):.3g}%) outside {tol}",
             f"max abs {fmt(m.max_abs)}", f"max rel {fmt(m.max_rel)}", f"cosine {m.cosine:.6f}"]
    if m.one_sided_nonfinite:
        parts.append(f"NaN/Inf on one side only: {m.one_sided_nonfinite}")
    return ", ".join(parts)


def _loc(t: "TensorComparison") -> Location:
    return Location(stage=STAGE_OF_KIND.get(t.kind))


def _rng_note(c: "Comparison") -> str:
    if not c.random_ops:
        return ""
    return (f" Random operators differ between the runs ({', '.join(c.random_ops[:4])}): devices draw different "
            "random streams from the same seed, so this may be RNG, not arithmetic (see NUM105).")


def _optimizer_note(c: "Comparison", first: "TensorComparison") -> str:
    """A parameter that differs after the optimizer step although its gradient agreed."""
    if first.kind != "param":
        return ""
    grad = next((t for t in c.tensors if t.kind == "grad" and t.name == first.name and t.step == first.step), None)
    if grad is None or grad.failed:
        return ""
    return (f" Its gradient grad:{first.name} agreed within tolerance: the optimizer step amplified a small "
            "difference (adaptive optimizers such as Adam divide by sqrt of the second moment, so near-zero "
            "gradients, e.g. ones that are zero in exact arithmetic, become full-size steps of either sign).")


def findings_for(c: "Comparison") -> list[Finding]:
    basis = Basis.OBSERVED if c.basis == "observed" else Basis.PREDICTED
    devices = f"A={c.a.label}, B={c.b.label}"
    out: list[Finding] = []

    def add(rule: Any, message: str, loc: Location | None = None, **evidence: Any) -> None:
        out.append(Finding(code=rule.code, severity=rule.severity, message=message, location=loc or Location(),
                           basis=basis, fix=rule.fix, source=rule.source, evidence=evidence))

    failed = c.failed
    for label, first, kinds in (("forward", c.first_forward, ("input", "activation", "output", "loss")),
                                ("backward", c.first_backward, ("grad",)),
                                ("optimizer step", c.first_param, ("param",))):
        if first is None or first.status == "incomparable":
            continue
        n = sum(1 for t in failed if t.kind in kinds and t.status == "fail")
        add(rules.NUM101, f"First divergence in {label} order: {first.key} (step {first.step}"
            f"{', ' + first.module_type if first.module_type else ''}): {describe(first)}; "
            f"{n} {label} tensor(s) out of tolerance ({devices}).{_optimizer_note(c, first)}{_rng_note(c)}",
            _loc(first), key=first.key, step=first.step, failing=n, max_abs=first.metrics.max_abs if first.metrics else None)
    nonfinite = [t for t in c.tensors if t.metrics and t.metrics.one_sided_nonfinite]
    if nonfinite:
        t = nonfinite[0]
        m = t.metrics
        assert m is not None  # nonfinite keeps tensors with metrics only
        add(rules.NUM102, f"NaN/Inf in one run only, first at {t.key} (step {t.step}): NaN {m.nan_a} in A / "
            f"{m.nan_b} in B, Inf {m.inf_a} in A / {m.inf_b} in B; {len(nonfinite)} tensor(s) affected ({devices}).",
            _loc(t), key=t.key, step=t.step, tensors=len(nonfinite))
    drift = c.loss_drift()
    if c.loss_failed:
        s = c.loss_failed[0]
        add(rules.NUM103, f"Loss differs beyond rtol={fmt(s.tolerance.rtol)} atol={fmt(s.tolerance.atol)} at "
            f"{len(c.loss_failed)} of {len(c.steps)} step(s), first at step {s.index}: {s.loss_a!r} in A, "
            f"{s.loss_b!r} in B (rel {fmt(s.rel_diff)})"
            + (f"; the difference grew at every step ({fmt(drift['growth'])}x from first to last)"
               if drift and drift["grows_every_step"] else "") + f".{_rng_note(c)}",
            Location(stage="loss"), steps=[x.index for x in c.loss_failed], drift=drift)
    for issue in c.structure[:MAX_STRUCTURE_FINDINGS]:
        add(rules.NUM104, issue.message, Location(stage="compare"), type=issue.type, keys_a=issue.keys_a[:10],
            keys_b=issue.keys_b[:10])
    if len(c.structure) > MAX_STRUCTURE_FINDINGS:
        add(rules.NUM104, f"... and {len(c.structure) - MAX_STRUCTURE_FINDINGS} more structure differences "
            "(see the JSON output)", Location(stage="compare"))
    if c.random_ops:
        where = ""
        if c.first_forward is not None:
            where = f"; first divergence at {c.first_forward.key}"
        add(rules.NUM105, f"Random operators in the runs: {', '.join(c.random_ops)}{where}. Differences may "
            "come from different random streams (same seed, different device generators), not from arithmetic; "
            "compare with fixed inputs and randomness off (dropout p=0 or model.eval(), mpsready record "
            "--synthetic-inputs).", Location(stage="forward"), random_ops=c.random_ops, diverged=not c.ok)
    if c.reference is not None:
        worse = c.worse
        if worse:
            t = worse[0]
            tw = t.three_way
            ra = tw.a_vs_ref.error if tw and tw.a_vs_ref else None
            rb = tw.b_vs_ref.error if tw and tw.b_vs_ref else None
            add(rules.NUM106, f"Against the reference ({c.reference.label}), "
                f"B ({c.b.label}) is less accurate than A ({c.a.label}) for {len(worse)} tensor(s), first "
                f"{t.key} (step {t.step}): max abs error against the reference {fmt(rb)} in B vs {fmt(ra)} in A "
                f"(k={fmt(c.k)}).",
                _loc(t), key=t.key, tensors=len(worse), err_a=ra, err_b=rb, k=c.k)
        elif failed:
            add(rules.NUM107, f"{len(failed)} tensor(s) differ between A ({c.a.label}) and B ({c.b.label}), but "
                f"against the reference ({c.reference.label}) B is nowhere further from it than "
                f"{fmt(c.k)}x A's error: B differs from A, it is not worse.", Location(stage="compare"),
                tensors=len(failed), k=c.k)
    stats = c.stats_only
    if stats:
        add(rules.NUM108, f"{len(stats)} of {len(c.tensors)} tensor(s) compared from statistics only "
            "(mean/std/min/max/L2 bounds): a pass there is consistent with agreement, not a proof.",
            Location(stage="compare"), tensors=len(stats))
    dtype_diff = [t for t in c.tensors if t.dtype_a != t.dtype_b]
    if dtype_diff:
        t = dtype_diff[0]
        add(rules.NUM109, f"{len(dtype_diff)} tensor(s) have different dtypes, first {t.key}: {t.dtype_a} in A, "
            f"{t.dtype_b} in B (tolerance: {t.tolerance.source}).", _loc(t), tensors=len(dtype_diff))
    return sort_findings(out)
