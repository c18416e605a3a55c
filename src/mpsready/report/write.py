"""Write a report to a directory in several formats at once (used by ``report --out``, ``check``, ``demo``)."""

from __future__ import annotations

import sys
from pathlib import Path

from mpsready.errors import UsageError
from mpsready.report.build import Report
from mpsready.report.formats import html as html_fmt
from mpsready.report.formats import json as json_fmt
from mpsready.report.formats import markdown as md_fmt
from mpsready.report.formats import plots as plots_mod
from mpsready.report.formats import terminal as term_fmt
from mpsready.report.formats.common import PLOTS_SKIPPED_NO_MATPLOTLIB

FILENAMES = {"md": "report.md", "html": "report.html", "json": "report.json", "terminal": "report.txt"}
PLOT_DIR = "report-plots"


def prepare_out_dir(out: str | Path) -> Path:
    """Create ``out`` (the last level only: its parent must exist, :func:`mpsready.output.missing_parent`) for
    writing; raises :class:`UsageError` when it cannot be (a missing parent, a file stands there, a read-only or
    virtual file system such as /proc)."""
    from mpsready.output import missing_parent

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"output path {out} exists and is not a directory")
    parent = missing_parent(out)
    if parent is not None:  # h40c: /nonexist/a/b was created whole
        raise UsageError(f"cannot create output directory {out}: the folder {parent} does not exist "
                         "(only the last level is created)")
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output directory {out}: {exc.strerror or exc}") from None
    return out


def write_report(report: Report, out: str | Path, formats: tuple[str, ...] = ("md", "html", "json")) -> dict[str, Path]:
    """Write each format into ``out`` (created if needed); returns format -> path.

    Markdown links its plots as SVG files under ``report-plots/`` (a compare stage's PNG stays PNG); the HTML
    embeds them. Each plot has a one-sentence caption.
    """
    out = prepare_out_dir(out)
    note = None
    try:
        made = plots_mod.all_plots_with_captions(report) if {"md", "html", "json"} & set(formats) else {}
    except ImportError:  # matplotlib is in the 'report' extra: the report is whole without plots, and says so
        print("note: no plots (matplotlib is not installed: pip install 'mpsready[report]')", file=sys.stderr)
        made, note = {}, PLOTS_SKIPPED_NO_MATPLOTLIB
    pngs = {k: v[0] for k, v in made.items()}
    captions = {k: v[1] for k, v in made.items()}
    rel_plots: dict[str, str] = {}
    if pngs and ("md" in formats or "json" in formats):
        (out / PLOT_DIR).mkdir(exist_ok=True)
        for name, data in pngs.items():
            file = f"{name}.{plots_mod.extension(data)}"
            (out / PLOT_DIR / file).write_bytes(data)
            rel_plots[name] = f"{PLOT_DIR}/{file}"
    written: dict[str, Path] = {}
    for fmt in formats:
        path = out / FILENAMES[fmt]
        if fmt == "md":
            text = md_fmt.render(report, rel_plots, plots_note=note, captions=captions)
        elif fmt == "html":
            try:
                text = html_fmt.render(report, pngs, plots_note=note, captions=captions)
            except html_fmt.MissingJinja as exc:
                print(f"note: {exc}; report.html not written", file=sys.stderr)
                continue
        elif fmt == "json":
            text = json_fmt.render(report, rel_plots, plots_note=note)
        else:
            text = term_fmt.render(report)
        tmp = path.with_name(path.name + ".tmp")
        # a project path that is not UTF-8 (h40b: a folder named b'p\xff' ended check and report with exit 3) is
        # written as its escape, \udcff, as the terminal shows it
        tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
        tmp.replace(path)
        written[fmt] = path
    return written
