"""The static audit stage: ``mpsready scan PATH`` and its library call :func:`scan_path`.

Layout (pip-audit style): ``sources/`` (one module per declaration file kind), ``code/`` (Python
syntax-tree analysis), ``rules/`` (documented rules, registered into :mod:`mpsready.rules`),
``formats/`` (terminal, json, sarif, md renderers), ``data/`` (knowledge base), ``engine.py``
(the scan), ``outlook.py`` (the static verdict), ``cli.py``. Importing this package is cheap and
never imports torch.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module defining it, imported on first use: importing a submodule (the rules, the argument
# definitions) must not load the engine
_EXPORTS = {
    "ScanConfig": "mpsready.scan.config",
    "ScanResult": "mpsready.scan.engine",
    "scan_path": "mpsready.scan.engine",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
