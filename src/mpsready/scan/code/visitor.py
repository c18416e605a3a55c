"""The visitor of one Python source: it walks the syntax tree, keeps the per-file context
(:class:`mpsready.scan.code.context.FileContext`, which it extends) up to date at each node, and dispatches the
node to the rule units registered for its class (:mod:`mpsready.scan.code.units`). It judges nothing itself.

The dispatch is cached per node class (``NodeVisitor.visit`` builds a method name and calls ``getattr`` for every
node, and its ``generic_visit`` walks every field, expression contexts included). With the prefilter's live lines,
a statement that spans no trigger line only gets its bookkeeping (imports, try context, assignments)."""

from __future__ import annotations

import ast
from typing import Any

from mpsready.scan.code import units
from mpsready.scan.code.astutil import (CHILD_FIELDS, DTYPE_BARE, DTYPE_WORDS, KERNEL_LIBS, LEAF_FIELDS, LEAF_STATEMENTS,
                                        TENSOR_FROM_ARRAY, TRY_NODES, guarded_build_line, is_distributed_name, is_distributed_test, kwarg,
                                        mps_branch, project_callee)
from mpsready.scan.code.context import FileContext
from mpsready.scan.code.valueflow import TORCH_FACTORIES
from mpsready.scan.code.names import AliasMap
from mpsready.scan.code.result import CudaSourceRef, F64Call, ImportRecord
from mpsready.scan.code.triggers import bisect_left

UNITS = units.load()
_CALL_UNITS = tuple(UNITS.get(ast.Call, ()))
_QUALIFIED = tuple(UNITS.get(units.QualifiedName, ()))
QUALIFIED_HEADS = ("torch.", "cupy.")  # every name a QualifiedName unit can report starts so


def _skip(self: "Visitor", node: ast.AST) -> None:
    """Dispatch target for nodes that can neither fire nor hold a node that can."""


def _pruned(method: Any) -> Any:
    """A statement handler that visits live statements and only bookkeeps the others."""
    def visit_statement(self: "Visitor", node: ast.stmt) -> None:
        if self._is_live(node):
            method(self, node)
        else:
            self._bookkeep(node, True)
    return visit_statement


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class Visitor(FileContext, ast.NodeVisitor):
    """Walks one module's tree once (``visit(tree)``); the findings land in ``result`` (see the module doc)."""

    def __init__(self, aliases: AliasMap, tree: ast.Module, *, cu_literals: bool = True,
                 live_lines: list[int] | None = None) -> None:
        super().__init__(aliases, tree)
        self._dispatch: dict[type, Any] = {} if cu_literals else {ast.Constant: _skip}
        # lines holding a trigger word (None: every statement is live); a statement spanning none of them
        # cannot fire and only gets its bookkeeping (imports, try context, assignments)
        self.live_lines = live_lines

    _BLOCKS = ("body", "orelse", "finalbody")

    def collect_imports(self, body: list[ast.stmt] | tuple[ast.stmt, ...], track_assigns: bool = False) -> None:
        """Record the imports of a source that cannot fire (its imports still decide whether another file's
        kernel is imported only under a fallback), in the order and with the try/except context the full
        traversal gives them. Imports sit only in statements, so expressions are not entered. With
        ``track_assigns`` (a statement that cannot fire inside a source that can), assignments also update
        the string and NumPy-variable tables later statements read, and returns the functions' NumPy returns.

        One loop per block, the simple statements handled in it (only a compound statement recurses): on the
        torch package most statements are bookkept, not visited, and a call per statement cost a third of it."""
        for stmt in body:
            # type(stmt) rather than a local copy of the class: mypy narrows stmt on it, and CPython 3.11 makes the
            # call as cheap as the copy (isinstance and .__class__ cost about twice as much on these hot paths)
            cls = stmt.__class__
            if type(stmt) is ast.Assign:  # the most frequent statement first
                if track_assigns:
                    self.track_assign(stmt)
            elif type(stmt) is ast.Return:
                if track_assigns and self.functions and stmt.value is not None:  # note_return's own early exit
                    self.note_return(stmt)
            elif cls in LEAF_STATEMENTS:
                continue
            elif type(stmt) is ast.Import:
                self.visit_Import(stmt)
            elif type(stmt) is ast.ImportFrom:
                self.visit_ImportFrom(stmt)
            elif cls in TRY_NODES and isinstance(stmt, TRY_NODES):  # the isinstance (on a match only) narrows
                self.try_stack.append(stmt)
                self.collect_imports(stmt.body, track_assigns)
                self.try_stack.pop()
                for handler in stmt.handlers:
                    self.collect_imports(handler.body, track_assigns)
                self.collect_imports(stmt.orelse, track_assigns)
                self.collect_imports(stmt.finalbody, track_assigns)
            elif type(stmt) is ast.Match:
                for case in stmt.cases:
                    self.collect_imports(case.body, track_assigns)
            else:  # a definition, if, loop or with: its blocks (Expr is a leaf statement)
                for name in self._BLOCKS:
                    block = getattr(stmt, name, None)
                    if block:
                        self.collect_imports(block, track_assigns)


    def _bookkeep(self, stmt: ast.stmt, track_assigns: bool) -> None:
        """The bookkeeping of one statement (:meth:`collect_imports` of it alone)."""
        self.collect_imports((stmt,), track_assigns)


    def _is_live(self, node: ast.stmt) -> bool:
        """Whether a trigger line falls within the statement (its decorators included)."""
        start = node.lineno
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            start = min(start, *(d.lineno for d in decorators))
        lines = self.live_lines
        if lines is None:  # no prefilter: every statement is live (the visitor prunes only with one)
            return True
        i = bisect_left(lines, start)
        return i < len(lines) and lines[i] <= (node.end_lineno or node.lineno)

    # ---------------------------------------------------------------- traversal
    def _method(self, cls: type) -> Any:
        """The handler of a node class: its visit_ method, generic_visit when it has child nodes, else _skip
        (also for the strings and None that some child lists hold)."""
        method = getattr(type(self), "visit_" + cls.__name__, None)
        if method is None:
            if not issubclass(cls, ast.AST):
                method = _skip
            else:
                fields = CHILD_FIELDS.get(cls)
                if fields is None:
                    fields = CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in LEAF_FIELDS)
                method = type(self).generic_visit if fields else _skip
        if self.live_lines is not None and issubclass(cls, ast.stmt):
            method = _pruned(method)
        self._dispatch[cls] = method
        return method


    def visit(self, node: ast.AST) -> None:
        cls = node.__class__
        method = self._dispatch.get(cls) or self._method(cls)
        method(self, node)


    def generic_visit(self, node: ast.AST) -> None:
        cls = node.__class__
        fields = CHILD_FIELDS.get(cls)
        if fields is None:
            fields = CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in LEAF_FIELDS)
        dispatch = self._dispatch
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    cls = item.__class__
                    (dispatch.get(cls) or self._method(cls))(self, item)
            elif value is not None:
                cls = value.__class__
                (dispatch.get(cls) or self._method(cls))(self, value)


    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if value.__class__ is str and value.endswith((".cu", ".cuh")) and "\n" not in value:
            scope = self.functions[-1] if self.functions else self.tree
            guard = self.guarded_build.get(id(scope), False)
            if guard is False:
                guard = self.guarded_build[id(scope)] = guarded_build_line(scope)
            self.result.cu_refs.append(CudaSourceRef(value.replace("\\", "/").rsplit("/", 1)[-1], node.lineno, guard))


    def visit_Compare(self, node: ast.Compare) -> None:
        # calls compared against directly, or through one attribute (`dev == torch.device("cuda")`,
        # `dev.type == torch.device("cuda").type`): they build a value to test, move nothing
        for x in (node.left, *node.comparators):
            if x.__class__ is ast.Attribute:
                x = x.value
            if x.__class__ is ast.Call:
                self.compared.add(id(x))
        self.passive_dtype += 1
        self.generic_visit(node)
        self.passive_dtype -= 1


    def visit_Dict(self, node: ast.Dict) -> None:
        self.passive_dtype += 1
        self.generic_visit(node)
        self.passive_dtype -= 1


    def visit_Tuple(self, node: ast.Tuple | ast.List | ast.Set) -> None:
        """A literal naming two or more dtypes (``allowed=(torch.float32, torch.float64)``) is a list of accepted
        types, like a dict table: a dtype named there creates no tensor (issue 23); one a ``for`` loop or a
        comprehension iterates over (``for dt in (torch.float32, torch.float64):``) makes each of them."""
        elts = node.elts
        if len(elts) > 1 and id(node) not in self.iterated:
            n = 0
            for e in elts:
                if (type(e) is ast.Attribute and e.attr in DTYPE_WORDS) or (type(e) is ast.Name and e.id in DTYPE_BARE):
                    n += 1
                    if n > 1:
                        self.passive_dtype += 1
                        self.generic_visit(node)
                        self.passive_dtype -= 1
                        return
        self.generic_visit(node)

    visit_List = visit_Set = visit_Tuple

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        self.iterated.add(id(node.iter))
        if node.__class__ is ast.comprehension:
            self.generic_visit(node)
            return
        self.visit(node.target)
        self.visit(node.iter)
        # a loop body is a block: after `if T: continue` the rest of it runs only when T is false (issue 32, round 4)
        self._visit_block(node.body)  # type: ignore[union-attr]
        for stmt in node.orelse:  # type: ignore[union-attr]
            self.visit(stmt)

    visit_AsyncFor = visit_comprehension = visit_For

    # ---------------------------------------------------------------- structure
    def visit_Try(self, node: ast.Try) -> None:
        self.try_stack.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.try_stack.pop()
        dead = self.cannot_raise(node.body) if node.handlers else None
        if dead is not None:
            self.dead_handlers.append(dead)
        for part in node.handlers:
            self.visit(part)
        if dead is not None:
            self.dead_handlers.pop()
        for stmt in (*node.orelse, *node.finalbody):
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        self.in_test += 1
        self.visit(node.test)
        self.in_test -= 1
        for unit in UNITS.get(ast.If, ()):
            unit(self, node)
        guarded = self.push_guard("cuda", node.test)
        dist = self.push_guard("dist", node.test)
        off_mps = mps_branch(node.test)
        self.mps_excluded += off_mps == "body"
        fn, cls = self.functions[-1] if self.functions else None, self.classes[-1] if self.classes else None
        self.branches.append((node.test, True, fn, cls))
        for stmt in node.body:
            self.visit(stmt)
        self.branches.pop()
        self.mps_excluded -= off_mps == "body"
        self.pop_guard(dist)
        self.pop_guard(guarded)
        if not node.orelse:
            return
        test = node.test
        negated = self.push_guard("cuda", test.operand) \
            if test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not else None
        self.mps_excluded += off_mps == "orelse"
        self.branches.append((node.test, False, fn, cls))
        for stmt in node.orelse:
            self.visit(stmt)
        self.branches.pop()
        self.mps_excluded -= off_mps == "orelse"
        if negated is not None:
            self.pop_guard(negated)


    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.in_test += 1
        self.visit(node.test)
        self.in_test -= 1
        for unit in UNITS.get(ast.IfExp, ()):
            if unit(self, node):
                return  # judged whole (a device selection): its branches are not reported again
        guarded = self.push_guard("cuda", node.test)
        off_mps = mps_branch(node.test)
        self.mps_excluded += off_mps == "body"
        fn, cls = self.functions[-1] if self.functions else None, self.classes[-1] if self.classes else None
        self.branches.append((node.test, True, fn, cls))
        self.visit(node.body)
        self.branches[-1] = (node.test, False, fn, cls)
        self.mps_excluded -= off_mps == "body"
        self.pop_guard(guarded)
        self.mps_excluded += off_mps == "orelse"
        self.visit(node.orelse)
        self.branches.pop()
        self.mps_excluded -= off_mps == "orelse"


    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """In `torch.cuda.is_available() and torch.cuda.X()`, X never runs on a Mac."""
        guarded = 0
        want = isinstance(node.op, ast.And)
        fn, cls = self.functions[-1] if self.functions else None, self.classes[-1] if self.classes else None
        for value in node.values:
            self.visit(value)
            self.branches.append((value, want, fn, cls))  # the next operands run only when this one lets them
            if want and not guarded and self.is_cuda_test(value):
                guarded = 1
                self.cuda_guard += 1
        del self.branches[len(self.branches) - len(node.values):]
        self.cuda_guard -= guarded

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node)
        for unit in UNITS.get(node.__class__, ()):  # function units: decorators, parameter defaults, selections
            unit(self, node)
        dist = is_distributed_name(node.name)
        self.dist_context += dist
        self.param_default = node.name
        self.visit(node.args)
        self.param_default = None
        for part in node.decorator_list:
            self.visit(part)
        self._visit_block(node.body)
        self.dist_context -= dist
        self.functions.pop()


    def _visit_block(self, body: list[ast.stmt]) -> None:
        """Visit statements; after `if not <distributed or CUDA check>: return`, the rest of the block is
        distributed-only (or CUDA-guarded) code."""
        entered_dist = entered_cuda = exits = 0
        for stmt in body:
            self.visit(stmt)
            if type(stmt) is ast.If and not stmt.orelse and stmt.body and type(stmt.body[-1]) in _EXITS:
                # `if T: return` / `raise`: the rest of the block runs only when T is false
                self.branches.append((stmt.test, False, self.functions[-1] if self.functions else None,
                                      self.classes[-1] if self.classes else None))
                exits += 1
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and all(
                    isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for s in stmt.body) \
                    and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not):
                if not entered_dist and is_distributed_test(stmt.test.operand):
                    entered_dist = 1
                    self.dist_context += 1
                elif not entered_cuda and self.is_cuda_test(stmt.test.operand):
                    entered_cuda = 1
                    self.cuda_guard += 1
            elif not entered_cuda and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and all(
                    isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for s in stmt.body) \
                    and isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.Or) and any(
                    isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) and self.is_cuda_test(v.operand)
                    for v in stmt.test.values):
                # `if not torch.cuda.is_available() or not use_flash: return` exits on every Mac as well
                # (vit-pytorch's simple_flash_attn_vit.py)
                entered_cuda = 1
                self.cuda_guard += 1
        self.dist_context -= entered_dist
        self.cuda_guard -= entered_cuda
        if exits:
            del self.branches[len(self.branches) - exits:]

    visit_AsyncFunctionDef = visit_FunctionDef

    # ---------------------------------------------------------------- imports
    def visit_Import(self, node: ast.Import) -> None:
        self.resolve_guards()
        self.aliases.add_import(node)  # imports inside functions bind from here on
        guard = self.fallback_guard()
        for alias in node.names:
            self.result.imports.append(ImportRecord(0, alias.name, (), node.lineno, guard is not None))
        for alias in node.names:
            self.imported(alias.name, node, guard)


    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.resolve_guards()
        self.aliases.add_import_from(node)
        guard = self.fallback_guard()
        names = tuple(a.name for a in node.names)
        self.result.imports.append(ImportRecord(node.level, node.module or "", names, node.lineno, guard is not None))
        if node.level == 0 and node.module:
            self.imported(node.module, node, guard)


    def imported(self, module: str, node: ast.Import | ast.ImportFrom, guard: str | None) -> None:
        """Note which GPU-kernel libraries are imported and whether only under a fallback, then run the
        import units."""
        top = module.split(".")[0]
        if top in KERNEL_LIBS and top not in self.kernel_lib_guard:
            self.kernel_lib_guard[top] = guard
        elif top in KERNEL_LIBS and guard is None:
            self.kernel_lib_guard[top] = None
        for unit in UNITS.get(units.ImportedModule, ()):  # DEP107, API107 (cuda_package_import, nccl_import)
            unit(self, node, module, guard)

    # ---------------------------------------------------------------- statements the units judge
    def visit_Assign(self, node: ast.Assign) -> None:
        self.track_assign(node)
        for target in node.targets:
            if isinstance(target, ast.Attribute) and "cuda" in target.attr.lower() \
                    and target.attr not in self.result.availability_attrs and any(
                    isinstance(n, ast.Call) and (self.q(n.func) or "").startswith("torch.cuda.")
                    for n in ast.walk(node.value)):
                self.result.availability_attrs.append(target.attr)
        for unit in UNITS.get(ast.Assign, ()):  # device_literal_assign, device_selection
            unit(self, node)
        self.generic_visit(node)


    def visit_Return(self, node: ast.Return) -> None:
        self.note_return(node)
        self.generic_visit(node)


    def visit_Assert(self, node: ast.Assert) -> None:
        for unit in UNITS.get(ast.Assert, ()):  # API120 (mpsready.scan.code.units.asserts_cuda)
            unit(self, node)
        self.generic_visit(node)


    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        for unit in UNITS.get(ast.AnnAssign, ()):  # API103 (device_literal_assign)
            unit(self, node)
        self.generic_visit(node)

    # ---------------------------------------------------------------- names, attributes and calls
    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = node.value
        while root.__class__ is ast.Attribute:
            root = root.value
        if root.__class__ is ast.Name:
            if not self.aliases.is_imported(root.id):
                return  # `self.model.cuda`: a chain over a local name is never a torch/cupy name
            name = self.q(node)  # never None for a chain over a Name
            if name is None or not name.startswith(QUALIFIED_HEADS):
                return  # nor can its inner parts (prefixes of the name), which are only Attributes and a Name
            if self._check_qualified(name, node):
                return  # the whole chain is reported; do not report its inner parts again
        self.generic_visit(node)


    def visit_Name(self, node: ast.Name) -> None:
        name = self.aliases.names.get(node.id)
        if name is not None and name != node.id and name.startswith(QUALIFIED_HEADS):
            self._check_qualified(name, node)


    def _check_qualified(self, name: str, node: ast.AST) -> bool:
        """Report a qualified torch/cupy name; True when the whole chain was judged. Every name it reports
        starts with one of QUALIFIED_HEADS."""
        for unit in _QUALIFIED:
            if unit(self, node, name):
                return True
        return False


    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self.q(func) or ""
        attr = func.attr if isinstance(func, ast.Attribute) else None
        for unit in _CALL_UNITS:
            unit(self, node, name, attr)
        if attr in ("to", "cuda", "register_buffer") or name in TORCH_FACTORIES or name.endswith("Parameter"):
            self.note_cpu_f64(node, name, attr)
        # a project call passing a NumPy float64 array, for the model to join with the callee's parameters; a
        # tensor made from an array and placed on a device by this call itself is the numpy_float64 unit's
        placed = name in TENSOR_FROM_ARRAY and node.args and kwarg(node, "dtype") is None \
            and kwarg(node, "device") is not None
        if not placed and (node.args and self.np_f64_vars or any(isinstance(a, ast.Call) for a in node.args)):
            callee = project_callee(node)
            if callee is not None and callee not in ("to", "astype", "float", "append", "array", "asarray"):
                for i, a in enumerate(node.args):
                    if (isinstance(a, ast.Name) and a.id in self.np_f64_vars) or self.is_numpy_f64(a):
                        self.result.f64_calls.append(F64Call(callee, i, node.lineno))
        self.generic_visit(node)
