"""Renderers of a :class:`~mpsready.compare.engine.Comparison`: terminal (rich), JSON,
Markdown and PNG plots. They read the comparison and hold no logic of their own."""

FORMATS = ("terminal", "json", "md")
