"""Markdown: to commit beside the code."""

from __future__ import annotations

from mpsready.findings import Basis
from mpsready.report.build import Report
from mpsready.escape import md_cell, md_code, md_text
from mpsready.report.formats.common import (MARK, PLOTS_NOTHING, VERDICT_BLURB, basis_word, gib, project_name,
                                            projected, seconds, shown_inputs, spread)


def _esc(text: str) -> str:
    """A table cell: newlines as spaces, other control characters ``\\xNN``, HTML and ``|`` escaped."""
    return md_cell(str(text).replace("\n", " "))


def _txt(text: object) -> str:
    """Prose from the project or the evidence: control characters ``\\xNN``, HTML escaped."""
    return md_text(str(text))


def render(report: Report, plots: dict[str, str] | None = None, plots_note: str | None = None,
           captions: dict[str, str] | None = None) -> str:
    """The whole report. ``plots`` maps a plot name to a PNG path relative to the Markdown file;
    ``plots_note`` says why there are none (matplotlib missing). Paths are never shown absolute."""
    v = report.verdict
    out = ["# mpsready report", ""]
    if report.project:
        out += [f"Project: {md_code(project_name(report.project) or report.project)}", ""]
    out += [f"## Verdict: **{v.verdict.title}** (`{v.verdict.value}`, {basis_word(v.basis)})", "",
            VERDICT_BLURB[v.verdict], ""]
    if v.predicted is not v.verdict:
        out += [f"If every prediction holds when observed on a Mac: **{v.predicted.title}** (`{v.predicted.value}`).",
                ""]
    sit = v.situation
    out += [f"Situation: **{sit.situation.title}** (`{sit.situation.value}`, "
            f"{_txt('inferred: ' + sit.why if sit.inferred else sit.why)}); critical checklist items: "
            f"{', '.join(str(n) for n in sorted(set(_critical(report))))}.", ""]
    if v.reasons:
        out += ["### Why", ""]
        out += [f"- `{r.cap.value}`: {_txt(r.text)}" + (f" *({r.basis.value})*" if r.basis else "") for r in v.reasons]
        out.append("")
    if v.would_change:
        out += ["### What would change it", ""]
        out += [f"- {_txt(w)}" for w in v.would_change]
        out.append("")
    out += ["## Acceptance checklist", "",
            "Passed needs an observation; a prediction can fail an item but never pass it. Item 2, a review "
            "of the project's files that the static scan does in full, reads \"passed (static review)\".", "",
            "| # | item | status | basis | summary |", "|---|---|---|---|---|"]
    crit = _critical(report)
    for it in report.checklist:
        star = " (critical)" if it.number in crit else ""
        basis = "attested" if it.attested else basis_word(it.basis)
        out.append(f"| {it.number} | {_esc(it.short)}{star} | **{MARK[it.label]}** | {basis} | {_esc(it.summary)} |")
    out.append("")
    for it in report.checklist:
        out += [f"### {it.number}. {_txt(it.title)}", "", f"**{it.label}**: {_txt(it.summary)}", ""]
        for e in it.evidence[:12]:
            out.append(f"- *{basis_word(e.basis)}* {_txt(e.kind)}: {_esc(e.text)}")
        if len(it.evidence) > 12:
            out.append(f"- ... and {len(it.evidence) - 12} more (see the JSON report)")
        if it.workaround:
            out.append(f"- way around: {_txt(it.workaround)}")
        if it.next_step and it.status.value != "passed":
            out.append(f"- next: {_txt(it.next_step)}")
        out.append("")
    out += _outlook(report) + _versus(report)
    out += _findings(report)
    if plots:
        out += ["## Plots", ""]
        for name, path in plots.items():
            out += [f"![{name}]({path})", ""] + ([f"*{_txt(captions[name])}*", ""] if captions and captions.get(name) else [])
    else:
        out += ["## Plots", "", plots_note or PLOTS_NOTHING, ""]
    out += ["## Inputs", ""]
    for stage, src in shown_inputs(report.inputs).items():
        if src:
            out.append(f"- {_txt(stage)}: {_txt(', '.join(src) if isinstance(src, list) else src)}")
    for stage, why in report.evidence.skipped.items():
        out.append(f"- {_txt(stage)}: not run ({_txt(why)})")
    out.append("")
    return "\n".join(out)


def _versus(report: Report) -> list[str]:
    vs = report.versus
    if vs is None:
        return []
    c = vs.counts()
    out = ["## Predicted vs observed", "", f"Observed on {_txt(vs.where)}: {c['disagrees']} disagreement(s), "
           f"{c['agrees']} agreement(s), {c['not observed']} not observed." + (f" {_txt(vs.note)}." if vs.note else ""),
           ""]
    if not vs.rows:
        return out + ["No prediction to check: give the scan, trace, emulated run or tests with --mac-results.", ""]
    out += ["| state | kind | subject | predicted | observed | prediction from |", "|---|---|---|---|---|---|"]
    for r in vs.ordered()[:200]:
        out.append(f"| **{r.state}** | {r.kind} | {_esc(r.subject)} | {_esc(r.predicted)} | {_esc(r.observed or '-')} | "
                   f"{_esc(r.source)} |")
    return out + [""]


def _findings(report: Report) -> list[str]:
    """Findings grouped by what they do to the verdict, then rule, then file (:mod:`.groups`); each rule a
    ``<details>`` block (GitHub and most Markdown viewers fold it), the first few of the headline group open."""
    from mpsready.report.formats.groups import OPEN_RULES, group_findings, lines_of, where

    groups = group_findings(report)
    if not groups:
        return []
    total = sum(g.count for g in groups)
    out = ["## Findings", "", f"{total} finding(s), grouped by what they do to the verdict, then by rule, then by "
           "file.", ""]
    for g in groups:
        out += [f"### {g.title} ({g.count})", ""]
        for i, r in enumerate(g.rules):
            opened = " open" if g.impact == "headline" and i < OPEN_RULES else ""
            files = len(r.files)
            title = f" {_txt(r.title)}" if r.title else ""
            out += [f"<details{opened}><summary><code>{_txt(r.code)}</code> {r.severity}{title} · {r.count} in "
                    f"{files} file{'s' if files != 1 else ''} ({r.basis})</summary>", ""]
            for fg in r.shown_files:
                out.append(f"- {md_code(fg.path)} ({len(fg.findings)})")
                for f in fg.shown:
                    fix = f" Fix: {_txt(f.fix)}" if f.fix else ""
                    out.append(f"  - {_txt(where(f))}: {_txt(f.message)}{fix}")
                if fg.folded:
                    out.append(f"  - {len(fg.folded)} more: {_txt(lines_of(fg.folded))}")
            if r.folded_files:
                n = len(r.folded_files)
                out.append(f"- {n} more file{'s' if n != 1 else ''} ({r.folded_count} findings): "
                           + "; ".join(f"{md_code(fg.path)} {_txt(lines_of(fg.findings, 6))}" for fg in r.folded_files[:20])
                           + (f"; and {n - 20} more files" if n > 20 else ""))
            out += ["", "</details>", ""]
    return out


def _critical(report: Report) -> list[int]:
    return report.verdict.situation.to_dict()["critical_items"]


def _outlook(report: Report) -> list[str]:
    o = report.outlook
    if o.empty:
        return ["## Time and memory", "", "No timings: no run was recorded.", ""]
    out = ["## Time and memory", ""]
    if o.timings:
        job = f"projected for {o.job_steps} steps" if o.job_steps else "projected (give --steps)"
        out += [f"| device | basis | median step | spread (fastest - slowest) | steps measured | peak memory | {job} |",
                "|---|---|---|---|---|---|---|"]
        for t in o.timings:
            mem = gib(t.peak_memory_bytes) + (f" ({t.memory_source})" if t.memory_source and t.peak_memory_bytes else "")
            out.append(f"| {_esc(t.name)} | {t.basis.value} | {seconds(t.step_seconds)} | {spread(t)} | "
                       f"{t.steps_text} | "
                       f"{mem} | {_esc(projected(t, o.job_steps))} |")
        out += ["", "Each projection stands for the device and step it was measured with, and assumes the real "
                "job runs that same step:", ""]
        out += [f"- {_txt(t.name)}: {_txt(t.stands_for)}" for t in o.timings]
    for rec in report.evidence.records:
        if rec.warning_counts:
            from mpsready.record.render import warning_summary

            out.append(f"\nWarnings in the run on {_txt(rec.device)}: {_txt(warning_summary(rec.warning_counts))} "
                       "(counts; the record keeps texts only with --keep-output).")
    if o.fallback_share is not None:
        out.append(f"\nCPU-fallback share of step time: {o.fallback_share:.0%} ({(o.fallback_basis or Basis.PREDICTED).value}).")
    if o.mac_memory_bytes:
        out.append(f"\nMac memory: {gib(o.mac_memory_bytes)} (from {_txt(o.mac_memory_source)}).")
    else:
        out.append("\nMac memory: unknown (give --mac-memory-gb, or an env record from the Mac).")
    if not o.timing("mps"):
        out.append("\nNo step was timed on MPS: the Mac's step time is unknown, not estimated.")
    out.append("")
    return out
