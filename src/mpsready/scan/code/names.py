"""Import alias resolution: turn ``th.cuda.synchronize`` back into ``torch.cuda.synchronize``.

Handles ``import torch as th``, ``import torch.cuda``, ``from torch import cuda``,
``from torch.cuda import amp as A`` and relative imports (kept relative: the engine resolves
them against the file's package). Bindings are file-wide: a name imported anywhere in the file
is resolved everywhere, which is what research scripts do in practice.
"""

from __future__ import annotations

import ast


class AliasMap:
    """Local name -> fully qualified dotted name, built from a module's import statements."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def add_import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._names[alias.asname] = alias.name
            else:  # `import torch.cuda` binds `torch`
                top = alias.name.split(".")[0]
                self._names.setdefault(top, top)

    def add_import_from(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return  # relative: project-local, never torch
        for alias in node.names:
            if alias.name == "*":
                continue
            self._names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualname(self, node: ast.AST) -> str | None:
        """Dotted name of a Name/Attribute chain with the first part resolved, or ``None``.

        ``th.cuda.Event`` -> ``torch.cuda.Event`` when ``import torch as th``; an unimported
        head is returned as written (``model.cuda`` -> ``model.cuda``).
        """
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self._names.get(node.id, node.id)
        parts.append(head)
        return ".".join(reversed(parts))

    @property
    def names(self) -> dict[str, str]:
        """The live map local name -> qualified name (read-only by convention; for hot loops)."""
        return self._names

    def is_imported(self, local: str) -> bool:
        return local in self._names


def build_alias_map(tree: ast.Module) -> AliasMap:
    """Aliases from module-level imports, including those under top-level ``if``/``try``/``with``.

    Imports inside functions and classes are added by the analyser when it reaches them, which
    saves a walk over the whole tree (they normally precede their uses).
    """
    aliases = AliasMap()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            aliases.add_import(node)
        elif isinstance(node, ast.ImportFrom):
            aliases.add_import_from(node)
        elif isinstance(node, (ast.If, ast.Try, ast.With)) or node.__class__.__name__ == "TryStar":
            for part in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, part, ()):
                    stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return aliases
