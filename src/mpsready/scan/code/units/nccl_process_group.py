"""API107 ``nccl-backend`` for ``init_process_group('nccl')`` / ``backend='nccl'`` (a literal, or a name or
attribute assigned one). Its scope is ``distributed`` inside distributed-only code (a distributed-named
function, ``if args.distributed:``, after ``if not dist.is_available(): return``); an unconditional call in
a training entry (DiT's DDP-only ``train.py``) is on the main path: a Mac needs an edit (gloo, or no process
group for one device). NCCL imports are judged with the imports."""

from __future__ import annotations

import ast

from mpsready.scan.code.analyzer import _kwarg
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name.rsplit(".", 1)[-1] != "init_process_group" or not ("distributed" in name or "dist" in name.split(".")[0]):
        return
    backend = node.args[0] if node.args else _kwarg(node, "backend")
    value, line = v._string_value(backend) if backend is not None else (None, None)
    if value is not None and "nccl" in value:
        where = f" (backend assigned at line {line})" if line else ""
        v.add(A.NCCL, node, f"init_process_group with backend {value!r}{where}: macOS PyTorch has no NCCL")
