"""JSON: the envelope ``mpsready.report`` v1 (documented in ``docs/report.md``)."""

from __future__ import annotations

import json as _json

from mpsready.report.build import Report


def render(report: Report, plots: dict[str, str] | None = None, plots_note: str | None = None) -> str:
    doc = report.to_dict()
    if plots:
        doc["plots"] = dict(plots)
    elif plots_note:
        doc["plots_note"] = plots_note  # why there are none (matplotlib missing)
    return _json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"
