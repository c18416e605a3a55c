"""Shared syntax-tree helpers of the Python analysis: fast walks, names as written, device and dtype literals,
the tests the guards are made of (CUDA, CPU, MPS, distributed), try/except fallbacks and parameter defaults.

Every function here is pure: it reads one node (or a small subtree) and knows nothing of the file around it; the
per-file state (aliases, guards, value flow) is :class:`mpsready.scan.code.context.FileContext`."""

from __future__ import annotations

import ast
import sys
from bisect import bisect_left
from collections import deque
from typing import Any, Iterator

from mpsready.astnames import dotted  # noqa: F401  (re-exported: the scan's modules import it from here)

FALLBACK_EXCEPTIONS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}
CAST_METHODS = {"float", "half", "bfloat16", "type", "int", "long", "bool"}
TENSOR_FROM_ARRAY = {"torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.Tensor"}
DEVICE_KWARGS = {"device", "map_location", "devices", "device_map"}
KERNEL_LIBS = {"triton", "cupy", "numba", "pycuda"}

DTYPE_WORDS = {"float16", "float32", "float64", "double", "half", "float", "bfloat16", "int8", "int16", "int32",
                "int64", "long", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble"}

DTYPE_BARE = DTYPE_WORDS - {"float", "bool", "long", "double", "half"}  # bare names that are also Python's

DTYPE_NAMES = {"torch.float64", "torch.double", "torch.complex128", "torch.cdouble", "torch.complex64", "torch.cfloat",
                "torch.complex32", "torch.chalf", "torch.bfloat16"}

DISTRIBUTED_WORDS = ("ddp", "distributed", "all_gather", "all_reduce", "allreduce", "reduce_dict", "world_size",
                      "broadcast", "barrier", "local_rank", "multi_gpu", "multigpu", "dist_init", "dist_avail",
                      "is_dist", "between_processes")

LEAF_FIELDS = {"ctx", "type_comment", "kind", "name", "id", "attr", "arg", "module", "level", "op", "conversion",
                "is_async", "simple", "lineno", "col_offset", "end_lineno", "end_col_offset", "value_str",
                # type annotations run nothing: `s: torch.cuda.Stream` neither initialises CUDA nor makes a tensor
                "annotation", "returns"}

CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # per node class: its fields outside LEAF_FIELDS (see child_fields)
# statements that hold no other statement and are neither an import nor an assignment
LEAF_STATEMENTS = frozenset((ast.Expr, ast.Return, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Pass, ast.Break,
                              ast.Continue, ast.Delete, ast.Global, ast.Nonlocal, ast.Assert))
# `try` statements: ast.Try and, from Python 3.11, `try/except*` (ast.TryStar, with the same fields); an
# isinstance test against it narrows to the fields both have
if sys.version_info >= (3, 11):
    TRY_NODES: tuple[type[ast.Try | ast.TryStar], ...] = (ast.Try, ast.TryStar)
else:
    TRY_NODES: tuple[type[ast.Try], ...] = (ast.Try,)



def is_cuda_literal(value: Any) -> bool:
    """``"cuda"`` or ``"cuda:N"`` (a device string naming CUDA)."""
    if not isinstance(value, str):
        return False
    return value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit())


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without expression contexts and leaf fields (faster on the small trees of `if` tests)."""
    return walk_lines(node, None)



def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that can hold child nodes worth visiting (all but LEAF_FIELDS), cached."""
    fields = CHILD_FIELDS.get(cls)
    if fields is None:
        fields = CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in LEAF_FIELDS)  # type: ignore[attr-defined]
    return fields


NAMELESS_FIELDS = frozenset({"ctx", "op", "ops"})  # expression contexts and operators: no node of interest below
_WALK_FIELDS: dict[type, tuple[str, ...]] = {}


def walk_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class outside :data:`NAMELESS_FIELDS`, in ``_fields`` order, cached."""
    fields = _WALK_FIELDS.get(cls)
    if fields is None:
        fields = _WALK_FIELDS[cls] = tuple(f for f in cls._fields if f not in NAMELESS_FIELDS)  # type: ignore[attr-defined]
    return fields


def walk_in_order(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (breadth first, the same order) without expression contexts and operators, which hold no name,
    call or statement: a caller keeping the last of several matches gets the same one, faster."""
    todo = deque([node])
    while todo:
        n = todo.popleft()
        for f in walk_fields(n.__class__):
            v = getattr(n, f, None)
            if isinstance(v, ast.AST):
                todo.append(v)
            elif isinstance(v, list):
                todo.extend(c for c in v if isinstance(c, ast.AST))
        yield n


def walk_without_helper(tree: ast.AST):
    """``ast.walk`` that does not enter ``def _mpsready_device`` (mpsready.migrate.helper)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.FunctionDef) and child.name == "_mpsready_device"):
                todo.append(child)


def end_of(node: ast.AST) -> tuple[int | None, int | None]:
    """A node's ``(end_lineno, end_col_offset)`` (``None`` for nodes without positions)."""
    return getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)


def receiver(call: ast.Call) -> ast.expr | None:
    """The object a method call is made on (``x`` of ``x.to(dev)``), or ``None`` when the callee is not an
    attribute (``foo(x)``)."""
    func = call.func
    return func.value if isinstance(func, ast.Attribute) else None


def kwarg(node: ast.Call, name: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None


def device_like_name(name: str) -> bool:
    low = name.lower()
    return "device" in low or low in ("dev", "map_location")


def names_cuda(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return is_cuda_literal(node.value)
    if cuda_text(node):
        return True
    if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith("cuda.current_device"):
        return True  # the current CUDA device's index: `torch.device(torch.cuda.current_device())` (issue 32, round 6)
    if isinstance(node, ast.Call) and node.args:
        return names_cuda(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)) and isinstance(node.left, ast.Constant):
        # "cuda:" + str(args.device), "cuda:%d" % rank (issue 32)
        text = node.left.value
        return isinstance(text, str) and (text == "cuda" or text.startswith("cuda:"))
    return False


def cuda_text(node: ast.AST) -> str | None:
    """A device string built at run time that names CUDA: ``f"cuda:{rank}"`` or ``"cuda:{}".format(i)``,
    shown as written (``cuda:{rank}``); ``None`` for anything else."""
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and (
                head.value == "cuda:" or (head.value == "cuda" and len(node.values) == 1)):
            return "cuda:" + "".join("{" + (dotted(v.value) or "...") + "}" for v in node.values[1:]
                                     if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str) \
            and node.func.value.value.startswith("cuda:{"):
        return node.func.value.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant) \
            and node.left.value == "cuda:":  # "cuda:" + str(args.device)
        inner = node.right.args[0] if isinstance(node.right, ast.Call) and node.right.args else node.right
        return "cuda:{" + (dotted(inner) or "...") + "}"
    return None


def names_cpu(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    if isinstance(node, ast.Call) and node.args:
        return names_cpu(node.args[0])
    return False


def is_cpu_test(test: ast.AST) -> bool:
    """``x.device.type == "cpu"``, ``str(x.device) == "cpu"`` or ``x.device == torch.device("cpu")``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    if not names_cpu(right):
        left, right = right, left
        if not names_cpu(right):
            return False
    if isinstance(left, ast.Attribute) and left.attr == "type" and isinstance(left.value, ast.Attribute) \
            and left.value.attr == "device":
        return True
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "str" and left.args \
            and isinstance(left.args[0], ast.Attribute) and left.args[0].attr == "device":
        return True
    return isinstance(left, ast.Attribute) and left.attr == "device"


def dtype_operands(value: ast.AST) -> list[ast.AST] | None:
    """The operands whose dtype an expression keeps (``x[i]`` -> x, ``a - b`` -> a and b, ``-x`` -> x, by NumPy's
    and PyTorch's type promotion for float64 with Python numbers), or ``None`` for any other expression."""
    if isinstance(value, ast.Subscript):
        return [value.value]
    if isinstance(value, ast.BinOp):
        return [value.left, value.right]
    if isinstance(value, ast.UnaryOp):
        return [value.operand]
    return None


def is_cuda_type_test(test: ast.AST) -> bool | None:
    """``x.device.type == "cuda"`` / ``x.is_cuda`` (True: the ``if`` body is the CUDA branch) or
    ``x.device.type != "cuda"`` / ``not x.is_cuda`` (False: the body is the portable branch); else ``None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = is_cuda_type_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # `torch.cuda.is_available() and value.is_cuda` (GroundingDINO's deformable attention): the CUDA branch
        # when one part is a CUDA type test and no part is the portable one
        kinds = [is_cuda_type_test(v) for v in test.values]
        return True if True in kinds and False not in kinds else None
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value == "cuda"):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and right.value == "cuda" and isinstance(left, ast.Attribute)
            and left.attr == "type" and isinstance(left.value, ast.Attribute) and left.value.attr == "device"):
        return None
    return isinstance(test.ops[0], ast.Eq)


def target_key(stmt: ast.Assign) -> str | None:
    if len(stmt.targets) != 1:
        return None
    return dotted(stmt.targets[0])


def project_callee(value: ast.AST) -> str | None:
    """Short name of the function a call expression calls when it may be the project's own (``foo(...)``,
    ``self.transform.apply_coords(...)``); ``None`` for anything else."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.value if not isinstance(root, ast.Call) else root.func
        if isinstance(root, ast.Name) and root.id in ("np", "numpy", "torch", "F", "nn"):
            return None
        return func.attr
    return None


def is_fallback_handler(handler: ast.ExceptHandler) -> bool:
    """An except clause that catches import failures and does something other than re-raise."""
    types: list[ast.AST] = []
    if handler.type is None:
        types = []
    elif isinstance(handler.type, ast.Tuple):
        types = list(handler.type.elts)
    else:
        types = [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in types}
    if handler.type is not None and not (names & FALLBACK_EXCEPTIONS):
        return False
    return not all(isinstance(s, ast.Raise) for s in handler.body)


def guarded_build_line(scope: ast.AST) -> int | None:
    """Line of a try/except in ``scope`` (a function or module) that wraps a call and falls back on failure:
    the shape of `try: plugin = build(sources) except Exception: warn(...); use the reference`."""
    for n in walk(scope):
        if isinstance(n, ast.Try) and any(isinstance(c, ast.Call) for st in n.body for c in walk(st)):
            for h in n.handlers:
                if is_fallback_handler(h):
                    return h.lineno
    return None


def mps_branch(test: ast.AST) -> str | None:
    """Which branch of ``if test:`` a tensor or device on MPS never takes: ``"body"`` for ``x.device.type !=
    "mps"``, ``"mps" not in str(d)``, ``not x.is_mps``; ``"orelse"`` for ``== "mps"``, ``"mps" in``, ``x.is_mps``;
    else None."""
    if type(test) is ast.UnaryOp and test.op.__class__ is ast.Not:
        inner = mps_branch(test.operand)
        return {"body": "orelse", "orelse": "body"}.get(inner) if inner else None
    if type(test) is ast.Attribute:
        return "orelse" if test.attr == "is_mps" else None
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    sides = (test.left, test.comparators[0])
    if not any(s.__class__ is ast.Constant and s.value == "mps" for s in sides):
        return None
    op = test.ops[0].__class__
    if op in (ast.NotEq, ast.IsNot, ast.NotIn):
        return "body"
    if op in (ast.Eq, ast.Is, ast.In):
        return "orelse"
    return None


def is_distributed_name(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in DISTRIBUTED_WORDS)



def is_distributed_test(test: ast.AST) -> bool:
    """`if ddp:`, `if args.distributed:`, `if world_size > 1:` and the like: multi-GPU-only code."""
    for n in walk(test):
        if isinstance(n, ast.Name) and is_distributed_name(n.id):
            return True
        if isinstance(n, ast.Attribute) and is_distributed_name(n.attr):
            return True
    return False


def mentions(node: ast.AST, names: set[str]) -> bool:
    """Whether an expression uses one of ``names`` (as a name or as an attribute: ``self.betas``)."""
    return any((n.__class__ is ast.Name and n.id in names) or (n.__class__ is ast.Attribute and n.attr in names)
               for n in ast.walk(node))


def names_mps_word(text: str) -> bool:
    """Whether a string names MPS as a word ('mps', 'mps:0', 'cuda, mps or cpu'), not inside another word:
    '--word_timestamps' and 'lamps' do not (whisper's CLI options hid its CUDA-or-CPU default)."""
    if "mps" not in text.lower():
        return False
    return "mps" in "".join(c if c.isalnum() else " " for c in text.lower()).split()


def mentions_mps(tree: ast.AST) -> bool:
    """Whether the scope considers MPS as a device: an 'mps' string it can choose, or a ``.mps`` attribute
    (``torch.backends.mps.is_available()``). An 'mps' string that is only compared against
    (``device.type != 'mps'``, ``'mps' in name``) tests a device chosen elsewhere and does not count
    (Pytorch-UNet picks CUDA-or-CPU and only then asks whether the device is MPS). The device helper
    ``mpsready migrate`` adds (``def _mpsready_device``) does not count either: it is not the scope's own choice,
    and counting it hid a selection migrate had left as it was from the re-scan."""
    compared: set[int] = set()
    nodes = list(walk_without_helper(tree))
    for n in nodes:
        if isinstance(n, ast.Compare):
            compared.update(id(c) for c in (n.left, *n.comparators) if isinstance(c, ast.Constant))
    for n in nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and names_mps_word(n.value) and id(n) not in compared:
            return True
        if isinstance(n, ast.Attribute) and n.attr == "mps":
            return True
    return False


def off_by_default(name: str, fns: list) -> bool:
    """Whether ``name`` is a parameter of one of ``fns`` (``ast.FunctionDef``, innermost first) whose default is
    ``False`` or ``None``; the first function that has the parameter decides."""
    for fn in fns:
        args = fn.args
        pos = args.posonlyargs + args.args
        pairs = list(zip(pos[len(pos) - len(args.defaults):], args.defaults)) + [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for a, d in pairs:
            if a.arg == name:
                return isinstance(d, ast.Constant) and d.value in (False, None)
    return False


def statements(body: list[ast.stmt], imports: list[ast.Import | ast.ImportFrom], assigns: list[ast.Assign]) -> None:
    """Every import and assignment statement, at any depth (expressions are not entered)."""
    for stmt in body:
        cls = stmt.__class__
        if cls in LEAF_STATEMENTS:
            continue
        # type(stmt) rather than a local copy of the class: mypy narrows stmt on it, and CPython 3.11 makes the
        # call as cheap as the copy (isinstance and .__class__ cost about twice as much on these hot paths)
        if type(stmt) is ast.Import or type(stmt) is ast.ImportFrom:
            imports.append(stmt)
        elif type(stmt) is ast.Assign:
            assigns.append(stmt)
        elif type(stmt) is ast.Match:
            for case in stmt.cases:
                statements(case.body, imports, assigns)
        elif cls is not ast.Expr:
            for name in ("body", "orelse", "finalbody"):
                block = getattr(stmt, name, None)
                if block:
                    statements(block, imports, assigns)
            for handler in getattr(stmt, "handlers", ()):
                statements(handler.body, imports, assigns)


def spans_a_line(stmt: ast.stmt, lines: list[int]) -> bool:
    """Whether one of the sorted 1-based ``lines`` falls within the statement (its decorators included): a walk
    looking for names that occur only on ``lines`` need not enter a statement for which this is False."""
    start = stmt.lineno
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    i = bisect_left(lines, start)
    return i < len(lines) and lines[i] <= (stmt.end_lineno or stmt.lineno)


def walk_lines(node: ast.AST, lines: list[int] | None) -> Iterator[ast.AST]:
    """:func:`walk` without the statements that span none of the sorted 1-based ``lines`` (:func:`spans_a_line`;
    every node when ``lines`` is None): for a walk looking for identifiers that occur only on ``lines``."""
    stack = [node]
    while stack:
        n = stack.pop()
        if lines is not None and isinstance(n, ast.stmt) and not spans_a_line(n, lines):
            continue
        yield n
        cls = n.__class__
        fields = CHILD_FIELDS.get(cls)
        if fields is None:
            fields = CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in LEAF_FIELDS)
        for name in fields:
            value = getattr(n, name, None)
            if value.__class__ is list:
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def walk_spanning(tree: ast.AST, lines: list[int] | None) -> Iterator[ast.AST]:
    """The nodes of ``tree`` in ``ast.walk``'s order, without the statements that span none of the sorted 1-based
    ``lines`` (:func:`spans_a_line`; every node when ``lines`` is None): for a walk looking for names that occur
    only on ``lines`` (:func:`mpsready.scan.code.triggers.name_lines`), the nodes it finds and their order are
    those of the whole walk."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if lines is not None and isinstance(node, ast.stmt) and not spans_a_line(node, lines):
            continue
        todo.extend(ast.iter_child_nodes(node))
        yield node
