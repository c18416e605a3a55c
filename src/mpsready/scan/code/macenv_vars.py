"""Environment variables at their defaults (issue 32 items 3 and 6, round 12).

A switch such as ``if os.getenv("BASICSR_JIT") == "True":`` or ``os.environ.get("USE_KERNEL", "0") == "1"`` is a
value the user sets, like a command-line option: the command the outlook proposes sets no environment variable, so
the read returns its default (``os.getenv``/``os.environ.get`` without a default return ``None``: CPython's
``os.getenv`` and ``Mapping.get``, Python 3.9-3.13). Only a read compared with a literal is decided this way
(``==``/``!=`` with a string, number or boolean, ``in``/``not in`` a tuple, list or set of them); the decision is an
option's default (``used_default``), so the code under it is optional and its finding names the variable. A read
used any other way (a device string taken from ``os.environ``, a truth test) stays unknown, as before. Launcher
variables (``RANK``, ``WORLD_SIZE``) are decided as facts in :mod:`mpsready.scan.code.macfacts`.
"""

from __future__ import annotations

import ast

_LITERALS = (str, int, float, bool)


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, _LITERALS)


def literal_side(node: ast.Compare) -> bool:
    """Whether one side of the single comparison ``node`` is a literal (or, for ``in``, a tuple/list/set of them)."""
    if len(node.ops) != 1:
        return False
    right = node.comparators[0]
    if isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return isinstance(right, (ast.Tuple, ast.List, ast.Set)) and bool(right.elts) \
            and all(_literal(e) for e in right.elts)
    if isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return _literal(right) or _literal(node.left)
    return False


def env_default(call: ast.Call) -> tuple[object] | None:
    """``(default,)`` of ``os.getenv(NAME[, default])`` / ``os.environ.get(NAME[, default])``: ``None`` when absent,
    the constant when it is a literal or ``None``; None (not decided) for any other default expression."""
    if call.keywords or not call.args or len(call.args) > 2:
        return None
    if len(call.args) == 1:
        return (None,)
    default = call.args[1]
    if isinstance(default, ast.Constant) and (default.value is None or isinstance(default.value, _LITERALS)):
        return (default.value,)
    return None
