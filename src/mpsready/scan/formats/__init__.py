"""Output formats for scan results: a registry of name -> :class:`~.interface.ScanFormat`.

Each format lives in its own module, imported when it is asked for (:func:`get`): a JSON scan never loads
rich, a terminal one never loads the SARIF writer. A new format is one module with a ``ScanFormat``
subclass and one line in :data:`REGISTRY` (and its name in ``mpsready.commands.scan.FORMAT_NAMES``, which
``--help`` lists without importing this package; a test keeps the two equal).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpsready.scan.formats.interface import ScanFormat

# format name -> (module, class), in the order ``--format`` lists them
REGISTRY: dict[str, tuple[str, str]] = {
    "terminal": ("mpsready.scan.formats.terminal", "TerminalFormat"),
    "json": ("mpsready.scan.formats.json", "JsonFormat"),
    "sarif": ("mpsready.scan.formats.sarif", "SarifFormat"),
    "md": ("mpsready.scan.formats.md", "MarkdownFormat"),
    "github": ("mpsready.scan.formats.github", "GithubFormat"),
    "concise": ("mpsready.scan.formats.concise", "ConciseFormat"),
    "gitlab": ("mpsready.scan.formats.gitlab", "GitlabFormat"),
}
_CLASSES = {cls: module for module, cls in REGISTRY.values()}


def get(name: str) -> type[ScanFormat]:
    """The format class registered as ``name``; raises ``KeyError`` for a name not in :data:`REGISTRY`."""
    module, cls = REGISTRY[name]
    found: type[ScanFormat] = getattr(importlib.import_module(module), cls)
    return found


def __getattr__(name: str) -> Any:
    # the format classes by name, and FORMATS ({name: class}, every format imported), as before the registry
    if name in _CLASSES:
        return getattr(importlib.import_module(_CLASSES[name]), name)
    if name == "FORMATS":
        return {n: get(n) for n in REGISTRY}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["REGISTRY", "FORMATS", "get", "ConciseFormat", "GithubFormat", "GitlabFormat", "JsonFormat",
           "MarkdownFormat", "SarifFormat", "TerminalFormat"]
