"""API104 ``device-selection-ignores-mps`` and API115 ``device-type-misroutes-mps``: a device chosen between
CUDA and the CPU only. Forms judged here: ``device = "cuda" if torch.cuda.is_available() else "cpu"``, the same
as an ``if``/``else`` of two assignments (or longer branches that set the same name, Informer's
``_acquire_device``, under an availability test or a CUDA/GPU switch such as ``if args.use_gpu:``), and a
CUDA-or-CPU switch variable (``use_cuda = torch.cuda.is_available() and ...``). A test of a ``'cuda'`` string
(``"cuda" in device``, ``device.startswith("cuda")``) that falls back to ``'cpu'`` is API115. The return form is
:mod:`return_selection`. A scope (function or module) that mentions MPS anywhere is not reported, and one
selection per scope is enough."""

from __future__ import annotations

import ast

from mpsready.scan.code.analyzer import _mentions_mps, _names_cpu, _names_cuda, _target_key, _walk
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


def selection_kind(v, test: ast.AST, cuda_side: ast.AST, other: ast.AST) -> str | None:
    """'available' for cuda-if-available-else-cpu, 'string' for 'cuda'-in-device tests, else None."""
    if not _names_cuda(cuda_side) or not _names_cpu(other):
        return None
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and (v.q(n.func) or "").endswith("cuda.is_available"):
            return "available"
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "device_count":
            return "available"
    if isinstance(test, ast.Compare) and any(isinstance(op, (ast.In, ast.Eq)) for op in test.ops):
        return "string"
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith":
        return "string"
    return None


def is_switch_test(v, test: ast.AST) -> bool:
    """An availability test, or a name or attribute that says CUDA or GPU (`use_gpu`, `args.cuda`)."""
    for n in _walk(test):
        if isinstance(n, ast.Call) and ((v.q(n.func) or "").endswith("cuda.is_available")
                                        or isinstance(n.func, ast.Attribute) and n.func.attr == "device_count"):
            return True
        label = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if "cuda" in label.lower() or "gpu" in label.lower():
            return True
    return False


def report_selection(v, kind: str | None, node: ast.AST) -> bool:
    """Report a selection of ``kind`` at ``node``; True when ``kind`` is a selection (reported or not)."""
    if kind == "available":
        # judged on the enclosing function (or the module): does it consider MPS anywhere?
        scope = v.functions[-1] if v.functions else v.tree
        if _mentions_mps(scope):
            return True
        if id(scope) in v.selection_reported and isinstance(node, ast.Assign):
            return True  # a CUDA switch after a selection already reported in the same scope
        v.selection_reported.add(id(scope))
        key = v._auto_device_guard()
        if v._param_default is not None and not v._param_default.startswith("_"):
            # the default of a public function's device parameter: callers pass device="mps" (CLIP's load)
            fn = v._param_default
            v.add(A.DEVICE_SELECTION, node, f"the default device of {fn}() picks 'cuda' if available, else "
                  "'cpu': callers that pass no device run on the CPU on a Mac",
                  evidence={"parameter_of": fn, "flag": f"{fn}(..., device='mps')"})
        elif key is not None:
            # only the 'auto' (or unset) value of a configurable device is resolved here (minGPT's
            # `if config.device == 'auto':`): setting the value to 'mps' is a config change
            v.add(A.DEVICE_SELECTION, node, f"when {key} is 'auto' the device picks 'cuda' if available, else "
                  "'cpu': on a Mac that is the CPU", evidence={"flag": f"{key}='mps'"})
        else:
            v.add(A.DEVICE_SELECTION, node, "device selection picks 'cuda' if available, else 'cpu': on a Mac "
                  "everything silently runs on the CPU, never on MPS")
        return True
    if kind == "string":
        v.add(A.DEVICE_STRING_TEST, node, "device type derived from a 'cuda' string test defaults to 'cpu': an "
              "'mps' device is treated as the CPU (autocast, pin_memory, dtype choices)")
        return True
    return False


@on(ast.IfExp)
def check_ifexp(v, node: ast.IfExp) -> bool:
    return report_selection(v, selection_kind(v, node.test, node.body, node.orelse), node)


@on(ast.If)
def check_if(v, node: ast.If) -> None:
    if len(node.body) == 1 and len(node.orelse) == 1:
        a, b = node.body[0], node.orelse[0]
        if isinstance(a, ast.Assign) and isinstance(b, ast.Assign):
            if report_selection(v, selection_kind(v, node.test, a.value, b.value), node):
                return
    # longer branches (Informer's _acquire_device): the same name set to a CUDA device in the body and to
    # the CPU in the else branch, under an availability test or a CUDA/GPU switch (`if self.args.use_gpu:`)
    cuda_side = {_target_key(st): st for st in node.body if isinstance(st, ast.Assign) and _names_cuda(st.value)}
    cpu_side = {_target_key(st) for st in node.orelse if isinstance(st, ast.Assign) and _names_cpu(st.value)}
    if any(k is not None and k in cpu_side for k in cuda_side) and is_switch_test(v, node.test):
        report_selection(v, "available", node)


@on(ast.Assign)
def check_switch(v, node: ast.Assign) -> None:
    """`cuda = True if torch.cuda.is_available() else False`, `use_gpu = torch.cuda.is_available() and ...`:
    a CUDA-or-CPU switch that later picks `.cuda()` or the CPU, never MPS."""
    for target in node.targets:
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
        low = name.lower()
        if not ("cuda" in low or "gpu" in low) or "device" in low:
            continue
        value = node.value
        if isinstance(value, ast.IfExp) and isinstance(value.body, ast.Constant) and value.body.value is True:
            value = value.test
        parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
        if any(isinstance(p, ast.Call) and (v.q(p.func) or "").endswith("cuda.is_available") for p in parts):
            report_selection(v, "available", node)
