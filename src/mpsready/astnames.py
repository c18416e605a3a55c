"""Names written in Python source, read with :mod:`ast` only (shared by the scan and the ops builder, which imports
nothing from the scan)."""

from __future__ import annotations

import ast


def dotted(node: ast.AST) -> str | None:
    """``args.dist_backend`` for an Attribute chain over a Name (as written, no alias resolution); ``None`` for
    anything else (a call, a subscript, a constant at the root)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
