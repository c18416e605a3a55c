"""EXT108: a fallback keyed on ``device.type == "cpu"`` -> keyed on "not CUDA".

``if x.device.type == "cpu": <pure PyTorch path> else: <CUDA kernel>`` sends an MPS tensor down the CUDA
kernel path, which fails on a Mac; ``!= "cuda"`` sends it to the portable path, and on CUDA and the CPU
the choice is the same as before. The scan's EXT108 findings say where (the ``if`` whose other branch calls a
custom autograd Function); the test is rewritten in each form the scan recognises:

* ``x.device.type == "cpu"`` -> ``x.device.type != "cuda"``;
* ``str(x.device) == "cpu"`` and ``x.device == torch.device("cpu")`` -> ``x.device.type != "cuda"``
  (``str()`` of a CUDA device is ``"cuda:0"``, so comparing the string with ``"cuda"`` would be wrong).

A finding whose ``if`` has another shape is listed as manual. The transform also finds ``.type == "cpu"`` /
``!= "cpu"`` tests the scan does not report (the branch off the CPU calls something CUDA-only by name: a
name with ``cuda``/``triton`` in it, an extension module ``_C``, ``*_ext``, ``*_cuda``, or ``.cuda()``,
rather than a ``Function.apply``) and reports those edits under EXT108 too. ``Tensor.device.type`` is
``'mps'`` for MPS tensors (PyTorch 2.13.0 torch/_tensor.py).
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import quote_like, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.cpu_keyed_fallback import SPEC


def _type_test(test: cst.BaseExpression) -> tuple[cst.Comparison, bool] | None:
    """(comparison, is_equal) for ``<...>.type == "cpu"`` / ``!= "cpu"``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    op = test.comparisons[0].operator
    left, right = test.left, test.comparisons[0].comparator
    if isinstance(left, cst.Attribute) and left.attr.value == "type" and string_value(right) == "cpu" \
            and isinstance(op, (cst.Equal, cst.NotEqual)):
        return test, isinstance(op, cst.Equal)
    return None


def _cuda_only_name(name: str) -> bool:
    for part in name.split("."):
        low = part.lower()
        if "cuda" in low or "triton" in low or part == "_C" or low.endswith(("_ext", "_cuda")) or low.startswith("cupy"):
            return True
    return False


class _CudaOnlyCalls(cst.CSTVisitor):
    """Sets ``found`` at a call of a CUDA-only name (:func:`_cuda_only_name`). (A class of the module: one made per
    call is garbage only the cyclic collector frees.)"""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if _cuda_only_name(cst.helpers.get_full_name_for_node(node.func) or ""):
            self.found = True


def _calls_cuda_only(ctx: FileContext, nodes: list[cst.CSTNode]) -> bool:
    found = False
    for n in nodes:
        v = _CudaOnlyCalls()
        ctx.visit(n, v)
        found = found or v.found
    return found


def _returns(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else []
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)


def _names_cpu(node: cst.BaseExpression) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``."""
    if string_value(node) == "cpu":
        return True
    return isinstance(node, cst.Call) and (cst.helpers.get_full_name_for_node(node.func) or "") in (
        "torch.device", "device") and len(node.args) == 1 and string_value(node.args[0].value) == "cpu"


def _device_of(side: cst.BaseExpression) -> cst.BaseExpression | None:
    """The device expression a CPU test looks at: ``x.device`` in ``x.device.type``, ``str(x.device)``, ``x.device``."""
    if isinstance(side, cst.Attribute) and side.attr.value == "type" and isinstance(side.value, cst.Attribute) \
            and side.value.attr.value == "device":
        return side.value
    if isinstance(side, cst.Call) and isinstance(side.func, cst.Name) and side.func.value == "str" \
            and len(side.args) == 1 and isinstance(side.args[0].value, cst.Attribute) \
            and side.args[0].value.attr.value == "device":
        return side.args[0].value
    if isinstance(side, cst.Attribute) and side.attr.value == "device":
        return side
    return None


def _scan_test_rewrite(test: cst.BaseExpression) -> cst.Comparison | None:
    """``<device>.type != "cuda"`` for the CPU tests the scan's EXT108 recognises, else ``None``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)):
        return None
    left, right = test.left, test.comparisons[0].comparator
    if not _names_cpu(right):
        left, right = right, left
        if not _names_cpu(right):
            return None
    device = _device_of(left)
    if device is None:
        return None
    lit = right if isinstance(right, cst.SimpleString) else None
    cuda = quote_like(lit, "cuda") if lit is not None else cst.SimpleString('"cuda"')
    op = test.comparisons[0].operator
    return cst.Comparison(cst.Attribute(device, cst.Name("type")), [cst.ComparisonTarget(
        cst.NotEqual(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after), cuda)])


class CpuKeyedFallback(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/cpu_keyed_fallback.py
    detects = True
    words = ("cpu",)

    def wants(self, text: str) -> bool:
        # the self-detected form needs a CUDA-only name in the other branch (_C, *_ext, *cuda*, triton)
        return "cpu" in text and ".type" in text and any(w in text for w in ("_C", "_ext", "cuda", "triton"))

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        claimed: set[cst.CSTNode] = set()
        for f in findings:
            node = next((n for n in ctx.nodes_of(f)
                         if isinstance(n, cst.If)), None)
            new = _scan_test_rewrite(node.test) if node is not None else None
            if node is None or new is None:
                manuals.append(manual(f, "the CPU test of this fallback has a shape migrate does not rewrite: key it "
                                         "on `x.device.type != \"cuda\"` by hand"))
                continue
            claimed.add(node)
            edits.append(Edit(node.test, lambda n, new=new: new.with_changes(lpar=n.lpar, rpar=n.rpar), "EXT108",
                              ctx.line_of(node), "fallback keyed on the CPU -> keyed on not CUDA (.type != 'cuda')",
                              finding=f))
        for stmt in ctx.of_type(cst.If):
            if stmt in claimed:
                continue
            found = _type_test(stmt.test)
            if found is None:
                continue
            test, is_equal = found
            off_cpu = self._off_cpu_branch(ctx, stmt, is_equal)
            if not off_cpu or not _calls_cuda_only(ctx, off_cpu):
                continue

            def rewrite(n: cst.CSTNode, is_equal=is_equal) -> cst.CSTNode:
                assert isinstance(n, cst.Comparison)
                comp = n.comparisons[0]
                lit = comp.comparator
                assert isinstance(lit, cst.SimpleString)
                old = comp.operator
                assert isinstance(old, (cst.Equal, cst.NotEqual))  # what _type_test matched
                op = (cst.NotEqual(whitespace_before=old.whitespace_before, whitespace_after=old.whitespace_after)
                      if is_equal else cst.Equal(whitespace_before=old.whitespace_before,
                                                 whitespace_after=old.whitespace_after))
                return n.with_changes(comparisons=[comp.with_changes(operator=op, comparator=quote_like(lit, "cuda"))])

            what = ("fallback keyed on .type == 'cpu' -> .type != 'cuda'" if is_equal
                    else "CUDA path keyed on .type != 'cpu' -> .type == 'cuda'")
            edits.append(Edit(test, rewrite, "EXT108", ctx.line_of(stmt), what))
        return edits, manuals

    def _off_cpu_branch(self, ctx: FileContext, node: cst.If, is_equal: bool) -> list[cst.CSTNode]:
        if not is_equal:
            return [node.body]
        if isinstance(node.orelse, cst.Else):
            return [node.orelse.body]
        if node.orelse is None and _returns(node.body):
            block = ctx.parents.get(node)
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                body: list[cst.CSTNode] = list(block.body)
                return body[body.index(node) + 1:]
        return []
