"""Renderers of a migration plan: ``diff`` (unified diff plus a summary on stderr) and ``json``."""

from mpsready.migrate.formats.diff import render_cells, render_diff, render_summary
from mpsready.migrate.formats.json_doc import render_json

__all__ = ["render_cells", "render_diff", "render_json", "render_summary"]
