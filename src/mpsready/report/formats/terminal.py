"""Terminal: rich tables (verdict, checklist, outlook)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.panel import Panel
from rich.markup import escape
from rich.table import Table

from mpsready.findings import Verdict
from mpsready.report.build import Report
from mpsready.escape import visible
from mpsready.report.formats.common import VERDICT_BLURB, basis_word, css_class, gib, projected, seconds, spread

_STYLE = {"pass": "green", "pass-static": "green", "fail": "bold red", "fail-predicted": "red",
          "predicted": "yellow", "unchecked": "dim"}
_VERDICT_STYLE = {Verdict.RUNS_ON_MAC: "green", Verdict.MAC_FOR_DEV: "yellow", Verdict.STAY_ON_CUDA: "red"}


def _m(text: object) -> str:
    """Project or evidence text for a rich cell or markup string: control characters ``\\xNN``
    (:func:`~mpsready.escape.visible`), rich markup escaped (``[bold]`` in a name stays text)."""
    return escape(visible(str(text)))


def print_report(report: Report, console: Console | None = None) -> None:
    console = console or Console()
    v = report.verdict
    body = f"[bold]{v.verdict.title}[/] ({v.verdict.value}, {v.basis.value})\n{VERDICT_BLURB[v.verdict]}"
    if v.predicted is not v.verdict:
        body += f"\nIf every prediction holds on a Mac: [bold]{v.predicted.value}[/]"
    sit = v.situation
    body += f"\nSituation: {sit.situation.value} ({'inferred: ' if sit.inferred else ''}{_m(sit.why)})"
    console.print(Panel(body, title="verdict", border_style=_VERDICT_STYLE[v.verdict]))
    crit = sit.to_dict()["critical_items"]
    t = Table(title="acceptance checklist", show_lines=False)
    t.add_column("#", no_wrap=True)
    t.add_column("item", max_width=24)
    t.add_column("status", max_width=20)
    t.add_column("basis", no_wrap=True)
    t.add_column("summary", ratio=1, overflow="fold")
    for it in report.checklist:
        t.add_row(str(it.number) + ("*" if it.number in crit else ""), _m(it.short),
                  f"[{_STYLE[css_class(it)]}]{_m(it.label)}[/]", 'attested' if it.attested else basis_word(it.basis), _m(it.summary))
    console.print(t)
    console.print("[dim]* critical for this situation; passed needs an observation[/]")
    if v.reasons:
        console.print("[bold]why[/]")
        for r in v.reasons:
            console.print(f"  {r.cap.value}: {visible(r.text)}", markup=False, highlight=False)
    if v.would_change:
        console.print("[bold]what would change it[/]")
        for w in v.would_change:
            console.print(f"  - {visible(w)}", markup=False, highlight=False)
    _versus(report, console)
    if report.outlook.timings:
        ot = Table(title="time and memory")
        for col in ("device", "basis", "median step", "spread", "steps", "peak memory", "projected"):
            ot.add_column(col)
        for tm in report.outlook.timings:
            ot.add_row(_m(tm.name), tm.basis.value, seconds(tm.step_seconds), _m(spread(tm)), _m(tm.steps_text),
                       gib(tm.peak_memory_bytes), _m(projected(tm, report.outlook.job_steps)))
        console.print(ot)
        for tm in report.outlook.timings:
            console.print(f"  {visible(tm.name)}: {visible(tm.stands_for)}", markup=False, highlight=False)


def _versus(report: Report, console: Console) -> None:
    vs = report.versus
    if vs is None:
        return
    c = vs.counts()
    console.print(f"[bold]predicted vs observed[/] on {_m(vs.where)}: {c['disagrees']} disagree, {c['agrees']} agree, "
                  f"{c['not observed']} not observed" + (f" ({_m(vs.note)})" if vs.note else ""))
    for r in vs.ordered()[:40]:
        console.print(f"  {r.state}: {r.kind} {r.subject}: predicted {r.predicted}; observed {r.observed or '-'}",
                      markup=False, highlight=False)


def render(report: Report, plots=None, width: int = 120) -> str:
    """The terminal view as plain text (for ``report.txt``)."""
    console = Console(record=True, width=width, force_terminal=False, color_system=None, file=io.StringIO())
    print_report(report, console)
    return console.export_text()
