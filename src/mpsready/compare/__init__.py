"""Comparison of run records: ``mpsready compare A B [--reference C]``.

Library use (the report stage calls this)::

    from mpsready.compare import compare_records
    comp = compare_records("runs/cuda", "runs/mps", reference="runs/cpu64")
    comp.ok, comp.first_forward, comp.findings

Needs numpy (and reads safetensors files itself); never needs torch.
"""

import importlib
from typing import Any

# Names resolve lazily (PEP 562) so that importing the package, as the CLI does to build its
# parser, does not import numpy: ``mpsready scan`` must work where numpy is absent.
_EXPORTS = {
    "compare_records": "engine", "Comparison": "engine", "TensorComparison": "engine", "StepLoss": "engine",
    "ThreeWay": "engine", "RunInfo": "engine", "DEFAULT_K": "engine",
    "Tolerance": "tolerances", "ToleranceSpec": "tolerances", "build_spec": "tolerances",
    "default_tolerance": "tolerances", "DTYPE_DEFAULTS": "tolerances",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605  # a list: the lazy exports' names


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'mpsready.compare' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mpsready.compare.{_EXPORTS[name]}"), name)
