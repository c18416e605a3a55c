"""API107 ``nccl-backend`` for ``init_process_group('nccl')`` / ``backend='nccl'`` (a literal, or a name or
attribute assigned one). Its scope is ``distributed`` inside distributed-only code (a distributed-named
function, ``if args.distributed:``, after ``if not dist.is_available(): return``); an unconditional call in
a training entry (DiT's DDP-only ``train.py``) is on the main path: a Mac needs an edit (gloo, or no process
group for one device). NCCL imports are judged with the imports."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import kwarg
from mpsready.scan.code.units import on
from mpsready.scan.markers import MAC_MARKER_ENV
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name.rsplit(".", 1)[-1] != "init_process_group" or not ("distributed" in name or "dist" in name.split(".")[0]):
        return
    backend = node.args[0] if node.args else kwarg(node, "backend")
    if isinstance(backend, ast.Name) and backend.id in v.choice_vars:
        backend = v.choice_vars[backend.id]
    backend = _on_a_mac(v, backend)
    value, line = v.string_value(backend) if backend is not None else (None, None)
    if value is not None and "nccl" in value:
        where = f" (backend assigned at line {line})" if line else ""
        v.add(A.NCCL, node, f"init_process_group with backend {value!r}{where}: macOS PyTorch has no NCCL")


def _on_a_mac(v, node):
    """The branch a conditional backend takes on a Mac: ``"gloo" if os.name == "nt" else "nccl"`` (NVlabs/edm) is
    ``"nccl"`` there; ``"nccl" if torch.cuda.is_available() else "gloo"`` is ``"gloo"``. A test this cannot
    decide leaves the expression as it is (no finding)."""
    while isinstance(node, ast.IfExp):
        truth = False if v.is_cuda_test(node.test) else _platform_test(node.test)
        if truth is None:
            return node
        node = node.body if truth else node.orelse
    return node


def _platform_test(test) -> bool | None:
    """``os.name == "nt"``, ``sys.platform == "win32"`` / ``.startswith("linux")``, ``platform.system() ==
    "Windows"`` evaluated for macOS, with the values of the Mac's PEP 508 marker environment
    (:data:`mpsready.scan.markers.MAC_MARKER_ENV`: os_name "posix", sys_platform "darwin", platform_system
    "Darwin", the same values Python's os.name, sys.platform and platform.system() give on macOS)."""
    mac = {"os.name": MAC_MARKER_ENV["os_name"], "sys.platform": MAC_MARKER_ENV["sys_platform"],
           "platform.system()": MAC_MARKER_ENV["platform_system"]}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        key = _short(test.left)
        if key in mac and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
            equal = mac[key] == test.comparators[0].value
            return equal if isinstance(test.ops[0], ast.Eq) else not equal
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and _short(test.func.value) == "sys.platform" and test.args and isinstance(test.args[0], ast.Constant):
        return MAC_MARKER_ENV["sys_platform"].startswith(str(test.args[0].value))
    return None


def _short(node) -> str | None:
    """``os.name`` / ``sys.platform`` / ``platform.system()`` as written, for those shapes only (never a
    whole expression: hostile sources nest them thousands deep)."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        inner = _short(node.func) if isinstance(node.func, ast.Attribute) else None
        return f"{inner}()" if inner else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None

