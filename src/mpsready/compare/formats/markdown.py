"""Markdown output, to keep beside the code or paste into a pull request."""

from __future__ import annotations

from typing import Any

from mpsready.compare.diagnose import fmt
from mpsready.compare.formats.common import (cosine, devices_line, headline, histogram_line, listed_note, method_word,
                                             rows_to_show, share, shape_dtype_note, stat, status_word,
                                             three_way_short, uniform_tolerance, worst_at)
from mpsready.escape import md_cell, md_code


def _cell(x: Any) -> str:
    """Text from the records (module names, messages: a record may come from anywhere) for a table cell or prose:
    control characters as ``\\xNN``, HTML-significant characters as entities, ``|`` escaped."""
    return md_cell(str(x))


def _loss(x: Any) -> str:
    return "-" if x is None else f"{x:.8g}"


def render(comp: Any, show_all: bool = False, plots: dict[str, str] | None = None) -> str:
    out = ["# mpsready compare", "", f"**{'OK' if comp.ok else 'DIFFERS'}**: {headline(comp)}.", "",
           f"Basis: **{comp.basis}** ({devices_line(comp)}).", ""]
    if comp.first_forward or comp.first_backward:
        out.append("First divergence:")
        out.append("")
        if comp.first_forward:
            out.append(f"- forward: {md_code(comp.first_forward.key)} (step {comp.first_forward.step})")
        if comp.first_backward:
            out.append(f"- backward: {md_code(comp.first_backward.key)} (step {comp.first_backward.step})")
        if comp.random_ops:
            out.append(f"- random operators used: {', '.join(comp.random_ops)} (differences may be RNG)")
        out.append("")
    if comp.findings:
        out += ["## Findings", ""]
        out += [f"- **{f.code}** {f.severity.value} ({f.basis.value}): {_cell(f.message)}" for f in comp.findings]
        out.append("")
    if comp.steps:
        ref = f" | reference ({_cell(comp.reference.label)})" if comp.reference else ""
        out += ["## Loss per step", "", f"| step | A ({_cell(comp.a.label)}) | B ({_cell(comp.b.label)}) | abs diff | rel diff "
                f"| status{ref} |", "|---|---|---|---|---|---|" + ("---|" if ref else "")]
        for s in comp.steps:
            word = "-" if s.passed is None else ("ok" if s.passed else "FAIL")
            out.append(f"| {s.index} | {_loss(s.loss_a)} | {_loss(s.loss_b)} | {fmt(s.abs_diff)} | {fmt(s.rel_diff)} "
                       f"| {word}" + (f" | {_loss(s.loss_ref)}" if ref else "") + " |")
        out.append("")
    if comp.structure:
        out += ["## Not matched", ""] + [f"- {_cell(i.message)}" for i in comp.structure] + [""]
    rows, step_summary = rows_to_show(comp, show_all)
    tol = uniform_tolerance(rows)
    ref = " | vs reference: err B/A (tolerance units) |" if comp.reference else " |"
    out += ["## Steps", ""] + [f"- {_cell(line)}" for line in step_summary] + [""]
    out += ["## Tensors" if show_all else "## Tensors out of tolerance", ""]
    if not show_all:
        out += [listed_note(comp, rows) + " (`--all` lists every tensor of every step).", ""]
    if tol:
        out += [f"Tolerance: {tol}.", ""]
    if rows:
        out += ["| step | tensor | max abs | mean abs | median abs | p99 abs | max rel | mean rel | median rel | p99 rel "
                f"| rel L2 | cosine | worst element (A vs B) | outside tol | rtol/atol | by | status{ref}",
                "|---" * 17 + "|" + ("---|" if comp.reference else "")]
    hists = []
    for t in rows:
        m = t.metrics
        note = shape_dtype_note(t)
        name = md_code(t.key) + (f" ({_cell(note)})" if note else "")
        out.append(f"| {t.step} | {name} | {fmt(m.max_abs if m else None)} | {stat(t, 'mean_abs')} "
                   f"| {stat(t, 'median_abs')} | {stat(t, 'p99_abs')} | {fmt(m.max_rel if m else None)} "
                   f"| {stat(t, 'mean_rel')} | {stat(t, 'median_rel')} | {stat(t, 'p99_rel')} | {stat(t, 'rel_l2')} "
                   f"| {cosine(t)} | {_cell(worst_at(t))} | {share(t)} | {fmt(t.tolerance.rtol)}/{fmt(t.tolerance.atol)} "
                   f"| {method_word(t)} | {status_word(t)}" + (f" | {three_way_short(t)}" if comp.reference else "") + " |")
        h = histogram_line(t)
        if h:
            hists.append(f"- {md_code(t.key)} (step {t.step}): {_cell(h)}")
    if hists:
        out += ["", "### Error histograms", ""] + hists
    if plots:
        out += ["", "## Plots", ""] + [f"![{name}]({path})" for name, path in plots.items()]
    return "\n".join(out) + "\n"
