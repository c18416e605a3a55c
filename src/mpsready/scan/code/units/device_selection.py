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

from mpsready.findings import Severity
from mpsready.scan.code.astutil import (DEVICE_KWARGS, cuda_text, dotted, mentions_mps, names_cpu,
                                         names_cuda, target_key, walk, walk_spanning, is_cuda_literal)
from mpsready.scan.code.triggers import name_lines
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


def selection_kind(v, test: ast.AST, cuda_side: ast.AST, other: ast.AST) -> str | None:
    """'available' for cuda-if-available-else-cpu, 'string' for 'cuda'-in-device tests, else None."""
    if not names_cuda(cuda_side) or not names_cpu(other):
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
    for n in walk(test):
        if isinstance(n, ast.Call) and ((v.q(n.func) or "").endswith("cuda.is_available")
                                        or isinstance(n.func, ast.Attribute) and n.func.attr == "device_count"):
            return True
        label = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if "cuda" in label.lower() or "gpu" in label.lower():
            return True
    return False


# calls whose behaviour on MPS follows the device type (PyTorch 2.13.0 torch/amp/autocast_mode.py, grad_scaler.py)
AMP_CALLS = {"autocast": ("torch.amp.autocast", "torch.autocast", "torch.amp.autocast_mode.autocast",
                          "torch.cuda.amp.autocast"),
             "GradScaler": ("torch.amp.GradScaler", "torch.GradScaler", "torch.amp.grad_scaler.GradScaler",
                            "torch.cuda.amp.GradScaler")}


def amp_calls(v) -> list[str]:
    """Which of autocast / GradScaler the file calls (an API115 test then decides whether they turn on for MPS,
    which migrate keeps off below the PyTorch floor where MPS has them)."""
    names = {v.q(n.func) or "" for n in ast.walk(v.tree) if isinstance(n, ast.Call)}
    return [kind for kind, qual in AMP_CALLS.items() if names & set(qual)]


def report_selection(v, kind: str | None, node: ast.AST) -> bool:
    """Report a selection of ``kind`` at ``node``; True when ``kind`` is a selection (reported or not)."""
    if kind == "available":
        # judged on the enclosing function (or the module): does it consider MPS anywhere?
        scope = v.functions[-1] if v.functions else v.tree
        if mentions_mps(scope):
            return True
        if id(scope) in v.selection_reported and isinstance(node, ast.Assign):
            return True  # a CUDA switch after a selection already reported in the same scope
        v.selection_reported.add(id(scope))
        guard = v.auto_device_guard()
        if v.param_default is not None and not v.param_default.startswith("_"):
            # the default of a public function's device parameter: callers pass device="mps" (CLIP's load)
            fn = v.param_default
            v.add(A.DEVICE_SELECTION, node, f"the default device of {fn}() picks 'cuda' if available, else "
                  "'cpu': callers that pass no device run on the CPU on a Mac",
                  evidence={"parameter_of": fn, "argument": f"{fn}(..., device='mps')"})
        elif guard is not None:
            # only the 'auto' (or unset) value of a configurable device is resolved here (minGPT's
            # `if config.device == 'auto':`): setting the value to 'mps' is a config change
            key, tested = guard
            # a config value (`config.device`) is set without code; a function's own parameter (`device=None`) is an
            # argument its callers pass in their code: an edit there, not a flag (issue 32, round 7)
            fn = v.functions[-1] if v.functions else None
            params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} if fn else set()
            kind = "argument" if key in params else "flag"
            v.add(A.DEVICE_SELECTION, node, f"when {key} is {tested} the device picks 'cuda' if available, else "
                  "'cpu': on a Mac that is the CPU", evidence={kind: f"{key}='mps'"})
        else:
            unset = unset_device(v)
            v.add(A.DEVICE_SELECTION, node, "device selection picks 'cuda' if available, else 'cpu': on a Mac "
                  "everything silently runs on the CPU, never on MPS"
                  + (f" (when {unset} is not set)" if unset else ""),
                  evidence={"unset_device": unset} if unset else None)
        return True
    if kind == "string":
        amp = amp_calls(v)
        v.add(A.DEVICE_STRING_TEST, node, "device type derived from a 'cuda' string test defaults to 'cpu': an "
              "'mps' device is treated as the CPU (autocast, pin_memory, dtype choices)",
              evidence={"amp_calls": amp} if amp else None)
        return True
    return False


def unset_device(v) -> str | None:
    """The device value (as written: ``cfg.device``) whose absence the enclosing branch stands for, or None: the
    ``else`` of ``if cfg.device:`` / ``if cfg.device is not None:``, or the body of ``if cfg.device is None:`` /
    ``if not cfg.device:`` (issue 32, round 6). The CUDA-or-CPU choice there is the fallback of a configurable
    device: setting the device (an entry's ``--device mps``) puts the program on MPS."""
    for test, polarity, _fn, _cls in reversed(getattr(v, "branches", ())):
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        inner = test.operand if negated else test
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.comparators[0], ast.Constant) \
                and inner.comparators[0].value is None and isinstance(inner.ops[0], (ast.Is, ast.IsNot)):
            negated = negated != isinstance(inner.ops[0], ast.Is)
            inner = inner.left
        label = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else ""
        if "device" in label.lower() and polarity == negated:
            return dotted(inner) or label
    return None


# creations of a 0-dim tensor from a number: `torch.tensor(0.0, device=...)`, `torch.zeros((), device=...)`
_SCALAR_FROM_NUMBER = ("torch.tensor", "torch.scalar_tensor", "torch.as_tensor")
_SCALAR_FROM_SHAPE = ("torch.zeros", "torch.ones", "torch.empty", "torch.full")


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def scalar_device(v, node: ast.AST) -> str | None:
    """The creation call (``torch.tensor``) when ``node`` is the ``device=`` of a 0-dim tensor made from a number
    (issue 32, round 5): on a Mac that tensor is on the CPU, and PyTorch's TensorIterator treats a 0-dim CPU
    tensor as a scalar beside tensors of another device (PyTorch 2.13.0 aten/src/ATen/TensorIterator.cpp,
    ``compute_types``: ``allow_cpu_scalars_``, ``is_cpu_scalar``), so element-wise arithmetic with MPS tensors
    works; the CUDA-or-CPU choice of such a scalar is no limit of the Mac's main work. Found by walking the file
    once, kept per file."""
    found = v.__dict__.get("_scalar_devices")
    if found is None:
        found = {}
        for n in ast.walk(v.tree):
            if not isinstance(n, ast.Call) or not n.args:
                continue
            kw = next((k.value for k in n.keywords if k.arg == "device"), None)
            if kw is None:
                continue
            qual = v.q(n.func) or ""
            first = n.args[0]
            if (qual in _SCALAR_FROM_NUMBER and _number(first)) or (
                    qual in _SCALAR_FROM_SHAPE and isinstance(first, (ast.Tuple, ast.List)) and not first.elts):
                found[id(kw)] = qual
        v.__dict__["_scalar_devices"] = found
    return found.get(id(node))


@on(ast.IfExp)
def check_ifexp(v, node: ast.IfExp) -> bool:
    kind = selection_kind(v, node.test, node.body, node.orelse)
    creation = scalar_device(v, node) if kind == "available" else None
    if creation is not None:
        v.add(A.DEVICE_SELECTION, node, f"{creation}() makes a 0-dim scalar on 'cuda' if available, else 'cpu': on "
              "a Mac a CPU scalar, which element-wise ops combine with MPS tensors (no limit)",
              severity=Severity.INFO, evidence={"scalar_creation": creation})
        return True
    return report_selection(v, kind, node)


@on(ast.If)
def check_if(v, node: ast.If) -> None:
    if len(node.body) == 1 and len(node.orelse) == 1:
        a, b = node.body[0], node.orelse[0]
        if isinstance(a, ast.Assign) and isinstance(b, ast.Assign):
            if report_selection(v, selection_kind(v, node.test, a.value, b.value), node):
                return
    # longer branches (Informer's _acquire_device): the same name set to a CUDA device in the body and to
    # the CPU in the else branch, under an availability test or a CUDA/GPU switch (`if self.args.use_gpu:`)
    cuda_side = {target_key(st): st for st in node.body if isinstance(st, ast.Assign) and names_cuda(st.value)}
    cpu_side = {target_key(st) for st in node.orelse if isinstance(st, ast.Assign) and names_cpu(st.value)}
    if any(k is not None and k in cpu_side for k in cuda_side) and is_switch_test(v, node.test):
        report_selection(v, "available", node)
    elif not node.orelse and _without_cuda(v, node.test) and any(
            isinstance(st, ast.Assign) and names_cpu(st.value) and "device" in (target_key(st) or "").lower()
            for st in node.body):
        # issue 32, round 6: `device = args.device` then `if not torch.cuda.is_available(): device = "cpu"`: a Mac
        # always enters the branch, so the device is the CPU whatever the option (or its proposed `mps`) says
        report_selection(v, "available", node)


def _without_cuda(v, test: ast.AST) -> bool:
    """``not torch.cuda.is_available()``: a test a Mac always passes (:data:`mpsready.scan.code.macfacts.FACTS`)."""
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call) \
        and (v.q(test.operand.func) or "").endswith("cuda.is_available")


@on(ast.Assign)
def check_switch(v, node: ast.Assign) -> None:
    """`cuda = True if torch.cuda.is_available() else False`, `use_gpu = torch.cuda.is_available() and ...`:
    a CUDA-or-CPU switch, reported only when the flag (or a name it selects) later picks a torch device
    (:func:`switch_picks_device`); a flag that only chooses ONNX Runtime providers or a log label is not."""
    for target in node.targets:
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
        low = name.lower()
        if not ("cuda" in low or "gpu" in low) or "device" in low:
            continue
        value = node.value
        if isinstance(value, ast.IfExp) and isinstance(value.body, ast.Constant) and value.body.value is True:
            value = value.test
        parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
        if any(isinstance(p, ast.Call) and (v.q(p.func) or "").endswith("cuda.is_available") for p in parts) \
                and switch_picks_device(v, target, node):
            report_selection(v, "available", node)


def _search_scope(v, target: ast.AST) -> ast.AST:
    """Where the uses of a switch can be: the enclosing function for a local name; the module for a module-level
    name (functions read it as a global) and for an attribute (`self.use_gpu` is read in other methods)."""
    return v.functions[-1] if isinstance(target, ast.Name) and v.functions else v.tree


def _own_parts(stmt: ast.stmt) -> tuple[list[ast.AST], list[ast.stmt]]:
    """(the expressions a statement evaluates itself, the statements it controls with them): the test and the
    branches of an if/while, a for's iterable and body, a with's items and body; a simple statement is its own
    expression. Nested function and class definitions are searched as statements of their own."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test], [*stmt.body, *stmt.orelse]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter], [*stmt.body, *stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [i.context_expr for i in stmt.items], stmt.body
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try, ast.Match)) or \
            stmt.__class__.__name__ == "TryStar":
        return [], []
    return [stmt], []


def _reads(expr: ast.AST, target: ast.AST) -> bool:
    """Whether ``expr`` reads the switch ``target`` (the same name, or the same attribute chain as written)."""
    want = dotted(target) if isinstance(target, ast.Attribute) else None
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and isinstance(target, ast.Name) and n.id == target.id \
                and isinstance(n.ctx, ast.Load):
            return True
        if want and isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and dotted(n) == want:
            return True
    return False


def _places(v, nodes: list[ast.AST]) -> bool:
    """Whether the code picks a torch device: torch.device(...), `.to(...)`/`.cuda(...)`, a device keyword
    (`device=`, `map_location=`...), a 'cuda' device string or a `torch.cuda.*` name (`torch.cuda.FloatTensor`)."""
    for part in nodes:
        for n in ast.walk(part):
            if isinstance(n, ast.Call):
                if isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cuda"):
                    return True
                if (v.q(n.func) or "") == "torch.device" or any(k.arg in DEVICE_KWARGS for k in n.keywords):
                    return True
            if (isinstance(n, ast.Constant) and is_cuda_literal(n.value)) or cuda_text(n) is not None:
                return True
            qual = v.q(n) or "" if isinstance(n, ast.Attribute) else ""
            if qual.startswith("torch.cuda.") and qual.split(".")[2] not in _BOOKKEEPING:
                return True
    return False


# torch.cuda functions that place nothing (timing, seeds, memory statistics, queries): a switch that only gates them
# chooses no device (issue 32, round 4: yolov9's `self.cuda = torch.cuda.is_available()` before
# `torch.cuda.synchronize()` in its timer); PyTorch 2.13.0 torch/cuda/__init__.py, torch/cuda/memory.py, random.py
_BOOKKEEPING = frozenset((
    "synchronize", "empty_cache", "ipc_collect", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
    "max_memory_cached", "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "memory_stats", "memory_summary", "mem_get_info", "get_device_name", "get_device_properties",
    "get_device_capability", "device_count", "current_device", "is_available", "utilization"))


def _returned(value: ast.AST | None, target: ast.AST) -> bool:
    """`return use_cuda` or `return model, use_cuda`: the switch itself leaves the function."""
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    return any(item is not None and _reads(item, target) and isinstance(item, (ast.Name, ast.Attribute))
               for item in items)


def switch_picks_device(v, target: ast.AST, assign: ast.Assign, depth: int = 0) -> bool:
    """Whether a later use of ``target`` picks a torch device (:func:`_places`): a statement that reads it and
    places something itself, an if/while on it whose branches do, a return of the switch itself (the caller may
    choose with it), or a name assigned from it (`where = 'cuda' if cuda else 'cpu'`, one step) whose own uses
    do. Only the statements spanning a line that holds the switch's name (or its last attribute) can read it:
    the others are not entered (:func:`~mpsready.scan.code.triggers.name_lines`; the same statements in
    ``ast.walk``'s order)."""
    word = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
    lines = name_lines(v.text, (word,)) if v.text is not None and word else None
    for stmt in walk_spanning(_search_scope(v, target), lines):
        if not isinstance(stmt, ast.stmt) or stmt is assign:
            continue
        exprs, branches = _own_parts(stmt)
        if not any(_reads(e, target) for e in exprs):
            continue
        if (depth == 0 and isinstance(stmt, ast.Return) and _returned(stmt.value, target)) \
                or _places(v, [*exprs, *branches]):
            return True
        if depth == 0 and isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, (ast.Name, ast.Attribute)) and switch_picks_device(v, t, stmt, 1):
                    return True
    return False
