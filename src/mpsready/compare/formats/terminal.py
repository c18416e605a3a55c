"""Terminal output with rich: the tensors of the step that matters, losses, findings."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.table import Table

from mpsready.compare.diagnose import fmt
from mpsready.compare.formats.common import (cosine, devices_line, headline, histogram_line, listed_note, rows_to_show,
                                             share,
                                             shape_dtype_note, stat, status_word, three_way_short,
                                             uniform_tolerance, worst_at)
from mpsready.escape import visible


def escape(text: str) -> str:
    """Record text (module names, messages) for the terminal: control characters as ``\\xNN`` (a crafted name
    cannot drive the terminal), then rich markup escaped."""
    return _markup_escape(visible(str(text)))


STYLE = {"ok": "green", "identical": "green", "FAIL": "bold red", "SHAPE": "bold red", "WORSE": "bold red"}


def styled(text: str, key: str | None = None) -> str:
    style = STYLE.get(key if key is not None else text)
    return f"[{style}]{escape(text)}[/]" if style else escape(text)


def render(comp: Any, console: Console, show_all: bool = False) -> None:
    console.print(f"[bold]mpsready compare[/bold] ({comp.basis}): {escape(devices_line(comp))}", highlight=False)
    rows, step_summary = rows_to_show(comp, show_all)
    for line in step_summary:
        console.print(escape(line), highlight=False)
    tol = uniform_tolerance(rows)
    if tol:
        console.print(f"tolerance: {tol}", highlight=False)
    title = None if show_all else escape(listed_note(comp, rows)) + " (--all lists every tensor)"
    table = Table(header_style="bold", pad_edge=False, title=title)
    narrow = console.width < 110  # an 80-column terminal: keep the columns that decide
    cols = (["step", "tensor", "max abs"] + ([] if narrow else ["mean abs", "p99 abs", "max rel", "rel L2", "cosine",
                                                                "worst at (A vs B)"]) + ["outside", "status"])
    if not tol:
        cols.insert(-1, "rtol/atol")
    if comp.reference:
        cols.append("vs ref: max abs B/A")
    for col in cols:
        if col == "tensor":
            table.add_column(col, overflow="fold", min_width=18 if narrow else 24, ratio=1)
        elif col.startswith("vs ref") or col.startswith("worst"):
            table.add_column(col, overflow="fold", min_width=12)
        else:
            table.add_column(col, no_wrap=True)
    firsts = {id(x) for x in (comp.first_forward, comp.first_backward, comp.first_param) if x is not None}
    for t in rows:
        m = t.metrics
        word = status_word(t)
        name = escape(t.key)
        note = shape_dtype_note(t)
        if m is not None and m.method == "stats":
            note = (note + "; " if note else "") + "stats only"
        if note:
            name += f" [dim]({escape(note)})[/dim]"
        if id(t) in firsts:
            name += " [bold]<- first divergence[/bold]"
        row = [str(t.step), name, fmt(m.max_abs if m else None)]
        if not narrow:
            row += [stat(t, "mean_abs"), stat(t, "p99_abs"), fmt(m.max_rel if m else None), stat(t, "rel_l2"),
                    cosine(t), escape(worst_at(t))]
        row += [share(t), styled(word)]
        if not tol:
            row.insert(-1, f"{fmt(t.tolerance.rtol)}/{fmt(t.tolerance.atol)}")
        if comp.reference:
            tw = three_way_short(t)
            row.append(styled(tw, tw.split(" ")[0]) if tw else "")
        table.add_row(*row)
    if rows:
        console.print(table)
    elif title:
        console.print(title, highlight=False)
    for t in rows:
        h = histogram_line(t)
        if h:
            console.print(f"  {escape(t.key)} (step {t.step}): {escape(h)}", highlight=False)
    if comp.steps:
        lt = Table(title="loss per step", header_style="bold", pad_edge=False)
        for col in ("step", f"A ({comp.a.label})", f"B ({comp.b.label})", "abs diff", "rel diff", "status"):
            lt.add_column(escape(col), no_wrap=True)
        if comp.reference:
            lt.add_column(escape(f"ref ({comp.reference.label})"), no_wrap=True)
        for s in comp.steps:
            word = "-" if s.passed is None else ("ok" if s.passed else "FAIL")
            row = [str(s.index), _loss(s.loss_a), _loss(s.loss_b), fmt(s.abs_diff), fmt(s.rel_diff),
                   styled(word)]
            if comp.reference:
                row.append(_loss(s.loss_ref))
            lt.add_row(*row)
        console.print(lt)
    for issue in comp.structure:
        console.print(f"[yellow]not matched[/yellow]: {escape(issue.message)}", highlight=False)
    for f in comp.findings:
        color = {"blocker": "bold red", "degrades": "yellow", "info": "cyan"}[f.severity.value]
        console.print(f"[{color}]{f.code}[/] {f.severity.value} ({f.basis.value}): {escape(f.message)}", highlight=False)
    console.print(("[green]OK[/green]: " if comp.ok else "[bold red]DIFFERS[/bold red]: ") + headline(comp),
                  highlight=False)


def _loss(x: Any) -> str:
    return "-" if x is None else f"{x:.8g}"
