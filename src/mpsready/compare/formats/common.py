"""Text shared by the terminal and Markdown renderers."""

from __future__ import annotations

from typing import Any

from mpsready.compare.diagnose import fmt


def status_word(t: Any) -> str:
    if t.metrics is not None and t.metrics.identical:
        return "identical"
    return {"pass": "ok", "fail": "FAIL", "incomparable": "SHAPE"}[t.status]


def method_word(t: Any) -> str:
    return t.metrics.method if t.metrics else "-"


def share(t: Any) -> str:
    m = t.metrics
    if m is None or m.mismatch_share is None:
        return "-"
    return f"{100 * m.mismatch_share:.3g}%"


def cosine(t: Any) -> str:
    m = t.metrics
    return "-" if m is None or m.cosine is None else f"{m.cosine:.6f}"


def headline(comp: Any) -> str:
    s = comp.summary()
    if comp.ok:
        head = f"All {s['compared']} matched tensors and {len(comp.steps)} step loss(es) agree within tolerance"
    else:
        head = (f"{s['failed']} of {s['compared']} tensors out of tolerance, {s['incomparable']} incomparable, "
                f"{s['structure_issues']} structure difference(s), {s['loss_steps_failed']} step loss(es) differ")
    return head


def devices_line(comp: Any) -> str:
    parts = [f"A = {comp.a.label} {comp.a.path}", f"B = {comp.b.label} {comp.b.path}"]
    if comp.reference:
        parts.append(f"reference = {comp.reference.label} {comp.reference.path}")
    return "; ".join(parts)


def focus_step(comp: Any) -> int | None:
    """The step shown in full: the first step with a failure, else the first step."""
    failing = sorted({t.step for t in comp.tensors if t.failed})
    if failing:
        return failing[0]
    steps = sorted({t.step for t in comp.tensors})
    return steps[0] if steps else None


def rows_to_show(comp: Any, show_all: bool) -> tuple[list[Any], list[str]]:
    """Every tensor of :func:`focus_step` (or of all steps with ``show_all``), and one
    summary line for each other step."""
    if show_all:
        return list(comp.tensors), []
    step = focus_step(comp)
    rows = [t for t in comp.tensors if t.step == step]
    lines = []
    for s in sorted({t.step for t in comp.tensors} - {step}):
        ts = [t for t in comp.tensors if t.step == s]
        bad = [t for t in ts if t.failed]
        lines.append(f"step {s}: {len(bad)} of {len(ts)} tensors out of tolerance"
                     + (f", first {bad[0].key}" if bad else ""))
    return rows, lines


def uniform_tolerance(rows: list[Any]) -> str | None:
    """``"rtol=.. atol=.. (source)"`` when every row has the same tolerance, else None."""
    tols = {(t.tolerance.rtol, t.tolerance.atol, t.tolerance.source) for t in rows}
    if len(tols) != 1:
        return None
    r, a, src = tols.pop()
    return f"rtol={fmt(r)} atol={fmt(a)} ({src})"


def shape_dtype_note(t: Any) -> str:
    """Shape and dtype only where the two sides differ."""
    notes = []
    if t.shape_a != t.shape_b:
        notes.append(f"shape {list(t.shape_a)} vs {list(t.shape_b)}")
    if t.dtype_a != t.dtype_b:
        notes.append(f"{t.dtype_a} vs {t.dtype_b}")
    return "; ".join(notes)


def three_way_short(t: Any) -> str:
    tw = t.three_way
    if tw is None:
        return ""
    ea = tw.a_vs_ref.error if tw.a_vs_ref else None
    eb = tw.b_vs_ref.error if tw.b_vs_ref else None
    word = {"b_worse": "WORSE", "b_not_worse": "not worse", "unknown": "?"}[tw.judgement]
    return f"{word} {fmt(eb)}/{fmt(ea)}"
