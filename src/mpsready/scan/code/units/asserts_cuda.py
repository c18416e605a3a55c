"""API120 ``asserts-cuda-tensor``: ``assert x.is_cuda`` (alone or in an ``and`` chain) outside a CUDA guard: the
function exists only for CUDA tensors (svox2's fused renderer); inside ``if x.is_cuda:`` it is info. Also an
assertion that CUDA is available, ``assert torch.cuda.is_available()`` (alone or in an ``and`` chain) or ``if not
torch.cuda.is_available(): raise ...``: the program stops on every machine without CUDA. That one has a remedy (an
edit: drop the check or let it accept MPS), so it carries no ``no_alternative``; a test that lets another device
through (``or torch.backends.mps.is_available()``) or that only returns or warns is not reported, and an assertion in
a function (or module) that also selects MPS is info (it checks a CUDA device the user chose). PyTorch 2.13.0
torch/cuda/__init__.py: ``is_available()`` is False in a build without CUDA (every macOS wheel)."""

from __future__ import annotations

import ast

from mpsready.findings import Severity
from mpsready.scan.code.astutil import dotted, mentions_mps
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A

STOPS = "the program stops on any machine without CUDA, a Mac included"
FIX = ("Remove the check, or accept MPS as well (`torch.cuda.is_available() or torch.backends.mps.is_available()`) "
       "and use the selected device after it.")


def _and_parts(test: ast.expr) -> list[ast.expr]:
    return test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]


def _is_available(v, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and not node.args and (v.q(node.func) or "") == "torch.cuda.is_available"


@on(ast.Assert)
def check(v, node: ast.Assert) -> None:
    for part in _and_parts(node.test):
        if isinstance(part, ast.Attribute) and part.attr == "is_cuda":
            v.add(A.ASSERTS_CUDA, node, f"assert {dotted(part) or 'x.is_cuda'}: this path exists only for CUDA "
                  "tensors", evidence={"no_alternative": True})
            return
        if _is_available(v, part):
            _report_stop(v, node, "assert torch.cuda.is_available()")
            return


@on(ast.If)
def check_raise(v, node: ast.If) -> None:
    test = node.test
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and node.body
            and isinstance(node.body[-1], ast.Raise)):
        return
    if _is_available(v, test.operand):  # `not (cuda or mps)` lets a Mac through: only the bare test stops it
        _report_stop(v, node, "if not torch.cuda.is_available(): raise")


def _report_stop(v, node: ast.AST, what: str) -> None:
    scope = v.functions[-1] if v.functions else v.tree
    if mentions_mps(scope):  # yolov5's select_device: the check validates a CUDA device the user chose
        v.add(A.ASSERTS_CUDA, node, f"{what}: checks a CUDA device in code that also selects MPS, so a Mac takes "
              "another branch", severity=Severity.INFO, fix=FIX, evidence={"requires": "cuda", "considers_mps": True})
    else:
        v.add(A.ASSERTS_CUDA, node, f"{what}: {STOPS}", fix=FIX, evidence={"requires": "cuda"})
