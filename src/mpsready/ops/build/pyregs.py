"""MPS kernels registered from Python, read with ``ast`` from ``torch/backends/mps/__init__.py``.

Pattern (torch 2.3.1-2.11.0, research note §2.4)::

    _lib = _Library("aten", "IMPL")
    _lib.impl("native_group_norm", native_group_norm, "MPS")

Any ``<expr>.impl("<op>", <fn>, "MPS")`` call counts; the file is parsed, never imported.
"""

from __future__ import annotations

import ast

BACKENDS_MPS = "torch/backends/mps/__init__.py"


def mps_impls(source: str) -> list[str]:
    """Op names passed to ``.impl(name, fn, "MPS")`` in ``source``, in file order (no namespace)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "impl"):
            continue
        args = list(node.args)
        key = args[2] if len(args) > 2 else next((k.value for k in node.keywords if k.arg == "dispatch_key"), None)
        if not (isinstance(key, ast.Constant) and key.value == "MPS"):
            continue
        if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            names.append(args[0].value)
    return names
