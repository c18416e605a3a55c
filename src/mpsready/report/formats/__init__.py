"""Renderers of a :class:`~mpsready.report.build.Report`: one module per format, no judgement here.

Each module exposes ``render(report, ...) -> str`` (``html`` also takes the plots).
"""

FORMATS = ("md", "html", "json", "terminal")
