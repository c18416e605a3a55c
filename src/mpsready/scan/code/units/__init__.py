"""Rule units: one small module per check of the syntax tree, each documented by the rule it reports.

Each unit reads the per-file context (:class:`mpsready.scan.code.context.FileContext`: import aliases, CUDA
guards, try/except fallbacks, distributed context, the literals and NumPy arrays bound to names) and reports
through ``ctx.add``; the visitor (:mod:`mpsready.scan.code.visitor`) dispatches each node to the units of its class.
A unit only looks at one node with that context and reports
one rule, so a new pattern is a new unit file (plus its rule in ``scan/rules/``)::

    @on(ast.Call)
    def check(v, node, name, attr):      # ast.Call units get the qualified name and the method name
        ...
    @on(ast.FunctionDef)
    def check(v, node):                  # function units run when the visitor enters the function
        ...
    @on(ast.Assert, ast.Assign, ast.AnnAssign, ast.If)
    def check(v, node):                  # statement units run before the statement's children are visited
        ...
    @on(ast.IfExp)
    def check(v, node) -> bool:          # True: the expression was judged whole, its branches are not entered
        ...
    @on(ImportedModule)
    def check(v, node, module, guard):   # once per imported module path; guard: line of a fallback or None
        ...
    @on(QualifiedName)
    def check(v, node, name) -> bool:    # a torch./cupy. name resolved through the import aliases;
        ...                              # True: the whole attribute chain is judged (the first unit wins)

Units run in the order of :data:`UNIT_MODULES`. Each rule's trigger words (``triggers=`` in its rule
definition) must cover every node a unit can report, so the prefilter stays exact.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

UNITS: dict[type, list[Callable[..., Any]]] = {}


class ImportedModule:
    """Dispatch key of the units that judge one imported module path (``import a.b`` / ``from a.b import c``)."""


class QualifiedName:
    """Dispatch key of the units that judge a qualified ``torch.``/``cupy.`` name (an attribute chain or an
    imported alias); every name they report starts with one of the visitor's ``QUALIFIED_HEADS``."""


UNIT_MODULES = ("to_device_literal", "numpy_float64",
                "dot_cuda", "double", "pin_memory", "sparse_buffer", "default_tensor_type", "nccl_process_group",
                "amp_device", "device_generator", "runtime_kernels", "cpu_roundtrip", "asserts_cuda",
                "device_kwargs", "cpp_extension",
                "kernel_decorators", "device_parameter_default", "return_selection", "fallback_keyed_on_cpu",
                "device_literal_assign", "device_selection",
                "cuda_package_import", "nccl_import",
                "torch_cuda_names", "backend_switches", "dtype_names", "torch_compile", "nccl_names")


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
