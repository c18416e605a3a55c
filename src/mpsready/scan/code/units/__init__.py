"""Rule units: one small module per check of the syntax tree, each documented by the rule it reports.

The visitor in :mod:`mpsready.scan.code.analyzer` is the per-file model: it resolves import aliases,
tracks CUDA guards, try/except fallbacks, distributed context, the literals and NumPy arrays bound to
names, and reports through ``visitor.add``. A unit only looks at one node with that context and reports
one rule, so a new pattern is a new unit file (plus its rule in ``scan/rules/``)::

    @on(ast.Call)
    def check(v, node, name, attr):      # ast.Call units get the qualified name and the method name
        ...
    @on(ast.FunctionDef)
    def check(v, node):                  # function units run when the visitor enters the function
        ...
    @on(ast.Assert)
    def check(v, node):
        ...

Units run in the order of :data:`UNIT_MODULES`. Each rule's trigger words (``triggers=`` in its rule
definition) must cover every node a unit can report, so the prefilter stays exact.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

UNITS: dict[type, list[Callable[..., Any]]] = {}

UNIT_MODULES = ("dot_cuda", "double", "pin_memory", "sparse_buffer", "default_tensor_type", "nccl_process_group",
                "amp_device", "device_generator", "runtime_kernels", "cpu_roundtrip", "asserts_cuda",
                "return_selection", "fallback_keyed_on_cpu")


def on(*classes: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated check for nodes of ``classes``."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for cls in classes:
            UNITS.setdefault(cls, []).append(fn)
        return fn
    return register


def load() -> dict[type, list[Callable[..., Any]]]:
    """Import every unit module (once) and return the registry."""
    for name in UNIT_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return UNITS
