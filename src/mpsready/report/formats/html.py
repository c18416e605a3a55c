"""HTML: one self-contained file (inline CSS, plots as base64 PNG), rendered with jinja2.

All text is HTML-escaped by jinja2's autoescape; nothing is fetched at view time.
"""

from __future__ import annotations

import base64

from mpsready import __version__
from mpsready.report.build import Report
from mpsready.report.formats import groups as groups_mod
from mpsready.report.formats import plots as plots_mod
from mpsready.report.formats.common import (PLOTS_NOTHING, PLOTS_SKIPPED_NO_MATPLOTLIB, VERDICT_BLURB, css_class, gib,
                                            project_name, projected, seconds, shown_inputs, spread)


class MissingJinja(RuntimeError):
    """jinja2 (the 'report' extra) is not installed."""


def _env():
    try:
        import jinja2
    except ImportError as exc:  # jinja2 is in the 'report' extra
        raise MissingJinja("the HTML report needs jinja2: pip install 'mpsready[report]'") from exc
    return jinja2.Environment(loader=jinja2.PackageLoader("mpsready.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=False)


def render(report: Report, plots: dict[str, bytes] | None = None, plots_note: str | None = None,
           captions: dict[str, str] | None = None) -> str:
    """The report as HTML. ``plots`` maps a plot name to SVG (or PNG) bytes, ``captions`` a plot name to its
    one-sentence caption (default for both: :func:`plots.all_plots_with_captions`);
    without plots the page says why (``plots_note``, e.g. matplotlib missing). The project is shown by
    its folder name and input files relative to the working directory, never as absolute local paths.
    Readable from a 390 px phone viewport (tables turn into labelled cards) to a 1,400 px desktop."""
    if plots is None:
        try:
            made = plots_mod.all_plots_with_captions(report)
            plots, captions = {k: v[0] for k, v in made.items()}, {k: v[1] for k, v in made.items()}
        except ImportError:  # matplotlib is in the 'report' extra
            plots, plots_note = {}, PLOTS_SKIPPED_NO_MATPLOTLIB
    doc = report.to_dict()
    template = _env().get_template("report.html.j2")
    return template.render(
        project=project_name(report.project), created=doc["created"], version=__version__,
        stages=report.evidence.stages_present(), v=report.verdict, blurb=VERDICT_BLURB[report.verdict.verdict],
        critical=doc["verdict"]["situation"]["critical_items"], items=report.checklist, css=css_class,
        outlook=report.outlook, fmt_s=seconds, fmt_b=gib, fmt_spread=spread, fmt_proj=projected,
        plots_note=plots_note or PLOTS_NOTHING,
        plots={k: f"data:{plots_mod.mime(v)};base64,{base64.b64encode(v).decode('ascii')}" for k, v in plots.items()},
        captions=captions or {},
        plot_titles=plots_mod.TITLES, findings=report.all_findings(), inputs=shown_inputs(report.inputs),
        groups=groups_mod.group_findings(report), open_rules=groups_mod.OPEN_RULES, where=groups_mod.where,
        lines_of=groups_mod.lines_of,
        skipped=report.evidence.skipped, versus=report.versus,
    )
