"""The environment record (``mpsready env``): what this machine and Python environment are.

``collect_env(project=None) -> dict`` measures it (schema ``mpsready.env`` v1, basis
``observed``); ``diff_env(a, b)`` compares two records. Imports nothing heavy.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module defining it, imported on first use: the rule registry imports env.rules without
# collecting anything
_EXPORTS = {
    "collect_env": "mpsready.env.collect",
    "diff_env": "mpsready.env.diff",
    "load_env_record": "mpsready.env.diff",
    "Difference": "mpsready.env.diff",
    "SCHEMA_NAME": "mpsready.env.collect",
    "SCHEMA_VERSION": "mpsready.env.collect",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
