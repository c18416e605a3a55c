"""Small pieces the transforms share: reading literals, building expressions, the device in scope.

Every expression the transforms write calls only documented PyTorch API: ``torch.cuda.is_available``,
``torch.backends.mps.is_available`` (PyTorch >= 1.12, torch/backends/mps/__init__.py) and the
``torch.mps`` functions named in src/mpsready/scan/data/cuda_api.yaml (checked against PyTorch 2.13.0).
"""

from __future__ import annotations

import ast
import functools
from typing import TypeGuard

import libcst as cst

from mpsready.migrate.interface import FileContext

HELPER = "_mpsready_device"
CUDA_AVAILABLE = "torch.cuda.is_available()"
MPS_AVAILABLE = "torch.backends.mps.is_available()"


def expr(src: str) -> cst.BaseExpression:
    return cst.parse_expression(src)


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain string literal (no f-string, no concatenation), else ``None``."""
    if isinstance(node, cst.SimpleString):
        value = _literal(node.value)
        return value if isinstance(value, str) else None
    return None


@functools.lru_cache(maxsize=4096)
def _literal(source: str) -> object:
    """``ast.literal_eval`` of a string literal's source, once per distinct source: it compiles each time, and the
    transforms ask the same few literals (``"cuda"``, ``"cpu"``) again and again (600 compiles on the synthetic
    tree of ``benchmarks/migrate_bench.py``). The value is a ``str`` or ``bytes``, immutable, so one is shared."""
    return ast.literal_eval(source)


def is_cuda_literal(value: object) -> TypeGuard[str]:
    """``"cuda"`` or ``"cuda:N"``: the device strings the scan reports (API103)."""
    return isinstance(value, str) and (value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit()))


def cuda_index(value: str) -> str | None:
    """``"1"`` for ``"cuda:1"``, ``None`` for ``"cuda"``."""
    return value[5:] if value.startswith("cuda:") else None


def helper_call(index: cst.BaseExpression | str | None = None) -> cst.Call:
    """``_mpsready_device()`` or ``_mpsready_device(index)``."""
    if index is None:
        return cst.Call(cst.Name(HELPER))
    arg = expr(index) if isinstance(index, str) else index
    return cst.Call(cst.Name(HELPER), [cst.Arg(arg)])


def quote_like(original: cst.SimpleString, value: str) -> cst.SimpleString:
    """A string literal holding ``value`` with the quote character of ``original``."""
    q = "'" if original.value.lstrip("rbuRBU").startswith("'") else '"'
    return cst.SimpleString(f"{q}{value}{q}")


def append_arg(args: list[cst.Arg] | tuple[cst.Arg, ...], new: cst.Arg) -> list[cst.Arg]:
    """``args`` plus ``new`` at the end, keeping the call's own layout: the whitespace (a newline before the
    closing parenthesis) and any trailing comma move to the new last argument."""
    args = list(args)
    if not args:
        return [new]
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # f(a,\n): the new argument takes over the trailing comma
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return [*args, new.with_changes(comma=last.comma)]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                 whitespace_after_arg=cst.SimpleWhitespace(""))
    return [*args, new.with_changes(whitespace_after_arg=last.whitespace_after_arg)]


def kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                                         cst.SimpleWhitespace("")))


def device_type_of(device: str) -> str:
    """An expression for the device type of the device expression ``device`` (a str or a torch.device)."""
    if device == f"{HELPER}()":
        return f"{HELPER}().type"
    return f"torch.device({device}).type"


def device_in_scope(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """The name of a device variable usable at ``node``: a parameter ``device`` of the enclosing function, or
    ``device`` bound (before ``node``) in that function or at module level to a device expression (a
    ``torch.device(...)`` call, a cuda-or-cpu selection, the helper, a device string). ``None`` when there is none:
    the caller then uses the helper."""
    line = ctx.line_of(node)
    ancestors = set(ctx.ancestors(node))
    for scope, name, bound in ctx.introduced:  # bound by the migrated selection (transforms/selection.py)
        if (scope is ctx.module or scope in ancestors) and bound < line:
            return name
    scopes: list[cst.CSTNode] = []
    scopes += [a for a in ctx.ancestors(node) if isinstance(a, cst.FunctionDef)][:1]
    scopes.append(ctx.module)
    for scope in scopes:
        if isinstance(scope, cst.FunctionDef):
            params = [*scope.params.params, *scope.params.kwonly_params, *scope.params.posonly_params]
            if any(p.name.value == "device" for p in params):
                return "device"
            # a nested def or class would bind its own names: only this function's own statements count
        for assign in _assigns(ctx, scope):
            if ctx.positions[assign].start.line < line and _is_device_value(ctx, assign.value):
                return "device"
    return None


# The visitors are classes of the module, not of the functions that use them: a class made per call is garbage
# only the cyclic collector frees, and it would keep what its methods see (nodes, the file context and so the
# whole tree) alive until then.
class _DeviceAssigns(cst.CSTVisitor):
    """``device = ...`` assignments of ``scope``'s own statements (nested defs and classes skipped)."""

    def __init__(self, scope: cst.CSTNode) -> None:
        super().__init__()
        self.scope = scope
        self.found: list[cst.Assign] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and node.targets[0].target.value == "device":
            self.found.append(node)


def _assigns(ctx: FileContext, scope: cst.CSTNode) -> list[cst.Assign]:
    """The ``device = ...`` assignments of ``scope``'s own statements, found once per scope and file (kept in
    ``ctx.memo``): without it every ``.cuda()`` edit walked the whole module again, quadratic in the edits."""
    key = ("device_assigns", id(scope))
    if key in ctx.memo:
        return ctx.memo[key]
    v = _DeviceAssigns(scope)
    ctx.visit(scope, v)
    out = ctx.memo[key] = v.found  # the tree holds ``scope`` as long as ctx lives, so its id is not reused meanwhile
    return out


def _is_device_value(ctx: FileContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        v = string_value(value)
        return v is not None and (is_cuda_literal(v) or v in ("cpu", "mps"))
    if isinstance(value, cst.IfExp):
        return _is_device_value(ctx, value.body) and _is_device_value(ctx, value.orelse)
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name) and func.value == HELPER:
            return True
        return "torch.device" in ctx.names(func)
    return False


class _CudaTest(cst.CSTVisitor):
    """Sets ``found`` at a ``torch.cuda.*`` call, a CUDA literal or a name mentioning CUDA."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if any(q.startswith("torch.cuda.") for q in self.ctx.names(node.func)):
            self.found = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if is_cuda_literal(string_value(node)):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if "cuda" in node.value.lower() and node.value != "torch":
            self.found = True


def _is_cuda_test(ctx: FileContext, test: cst.BaseExpression) -> bool:
    """A condition that is False without CUDA: ``torch.cuda.is_available()``, ``x == "cuda"``, ``use_cuda``, ``args.cuda``."""
    v = _CudaTest(ctx)
    ctx.visit(test, v)
    return v.found


def under_cuda_guard(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in the body of an ``if`` (or the true side of a conditional expression) whose test
    holds only with CUDA, so it never runs on a Mac."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.If) and child is anc.body and _is_cuda_test(ctx, anc.test):
            return True
        if isinstance(anc, cst.IfExp) and child is anc.body and _is_cuda_test(ctx, anc.test):
            return True
        child = anc
    return False
