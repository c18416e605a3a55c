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


def worst_at(t: Any) -> str:
    """Where the largest absolute error sits, as an index into the tensor's shape, with the two values:
    ``"[3, 17]: 0.1234 vs 0.1301"`` (A's value first)."""
    m = t.metrics
    if m is None or m.worst_index is None or not m.max_abs:
        return "-"
    idx, rest = [], m.worst_index
    for dim in reversed(tuple(t.shape_a) or ()):
        idx.append(rest % dim if dim else 0)
        rest = rest // dim if dim else 0
    where = "[" + ", ".join(str(i) for i in reversed(idx)) + "]" if idx else ""
    if m.worst_a is None or m.worst_b is None:
        return where or "-"
    return (f"{where}: " if where else "") + f"{m.worst_a:.6g} vs {m.worst_b:.6g}"


def stat(t: Any, name: str) -> str:
    m = t.metrics
    return fmt(getattr(m, name, None) if m is not None else None)


def histogram_line(t: Any) -> str | None:
    """``"0: 12, 1e-07..1e-06: 3, ..."``: the error histogram of a pair, when it was asked for."""
    m = t.metrics
    if m is None or not m.histogram:
        return None
    parts = [(f"0: {b['count']}" if b["hi"] == 0 else f"[{b['lo']:.0e}, {b['hi']:.0e}): {b['count']}")
             for b in m.histogram]
    sample = f" (every k-th element, {m.quantile_sample} in all)" if m.quantile_sample else ""
    return "|B - A| per decade" + sample + ": " + ", ".join(parts)


def step_lines(comp: Any) -> list[str]:
    """One line per step: how many tensors are out of tolerance, the first of them, and the step's loss."""
    losses = {s.index: s for s in comp.steps}
    out = []
    for s in sorted({t.step for t in comp.tensors} | set(losses)):
        ts = [t for t in comp.tensors if t.step == s]
        bad = [t for t in ts if t.failed]
        worst = max((t.metrics.max_abs for t in ts if t.metrics is not None and t.metrics.max_abs is not None),
                    default=None)
        line = f"step {s}: {len(bad)} of {len(ts)} tensors out of tolerance"
        if bad:
            from mpsready.compare.matching import sort_key

            line += f", first {min(bad, key=sort_key).key}"
        if worst is not None:
            line += f", largest max abs error {fmt(worst)}"
        loss = losses.get(s)
        if loss is not None and loss.passed is not None:
            line += f"; loss {'agrees' if loss.passed else 'differs'} (abs diff {fmt(loss.abs_diff)})"
        out.append(line)
    return out


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
    """The tensors out of tolerance (or incomparable) of :func:`focus_step`, in network order (every tensor of
    every step with ``show_all``), and one summary line per step (:func:`step_lines`). As Polygraphy and
    msprobe do, passing tensors are counted, not listed."""
    if show_all:
        return list(comp.tensors), step_lines(comp)
    step = focus_step(comp)
    from mpsready.compare.matching import sort_key

    rows = sorted((t for t in comp.tensors if t.step == step and t.failed), key=sort_key)
    return rows, step_lines(comp)


def listed_note(comp: Any, rows: list[Any]) -> str:
    """``"50 out of tolerance listed (step 0, the first with a failure, in network order); 33 within tolerance
    there not listed"``: what the default table shows and leaves out."""
    step = focus_step(comp)
    passing = sum(1 for t in comp.tensors if t.step == step and not t.failed)
    if not rows:
        return f"no tensor out of tolerance; {passing} within tolerance at step {step} not listed"
    return (f"{len(rows)} out of tolerance listed (step {step}, the first with a failure, in network order); "
            f"{passing} within tolerance there not listed")


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
