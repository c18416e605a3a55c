"""API104: the project's device selection -> CUDA, then MPS, then the CPU; and the moves its guards make.

Forms (each keeps CUDA's exact test, so a CUDA machine chooses as before, and every flag still works):

* ``X if <test> else Y`` (Y naming ``"cpu"``) -> ``X if <test> else Y' if <mps test> else Y``, Y' being Y with
  ``"cpu"`` replaced by ``"mps"``. With a PyTorch floor of 2.6 or newer and the plain test
  ``torch.cuda.is_available()``, the whole choice becomes ``torch.accelerator.current_accelerator() if
  torch.accelerator.is_available() else torch.device("cpu")`` (``.type`` for a string; PyTorch 2.6
  torch/accelerator/__init__.py).
* ``if <test>: ...`` / ``else: ...`` setting the device (other statements allowed in both branches, ``device =
  ...; n_gpu = ...``) -> an ``elif <mps test>:`` branch: the else branch with its one ``"cpu"`` literal in the
  device assignment made ``"mps"``; the other statements are copied (MPS is one device: no GPU count).
* A function returning the device, ``if <test>: return X`` then ``return Y`` -> ``elif <mps test>: return Y'``.
* A CUDA flag, ``args.cuda = not args.no_cuda and torch.cuda.is_available()`` (or ``use_cuda = ...``): the
  selections that read it (``"cuda" if use_cuda else "cpu"``) get the MPS branch; when none reads it, a device
  is bound right after the flag (``args.device = torch.device("cuda" if args.cuda else "mps" if <mps test>
  else "cpu")``); guards ``if args.cuda:`` whose body only moves tensors (``model.cuda()``, ``x, y =
  x.cuda(), y.cuda()``) become ``if args.device.type != "cpu":`` with ``.to(args.device)``. Guards around
  ``torch.cuda`` calls stay as they are (CUDA-only, right as they are).

``<mps test>`` is the CUDA test with ``torch.cuda.is_available()`` replaced by
``torch.backends.mps.is_available()`` (PyTorch >= 1.12, torch/backends/mps/__init__.py): ``not args.no_cuda and
torch.backends.mps.is_available()``, so ``--no-cuda`` still forces the CPU on a Mac. A flag's test is the
flag's own assignment, read in the same scope.

Also (found by the transform itself, no scan finding locates them): ``if x.is_cuda:`` guards whose body only
moves tensors with ``.cuda()`` -> ``if x.device.type != "cpu":`` with ``.to(x.device)``, so the moved tensor
follows ``x`` onto MPS too (``Tensor.is_cuda`` is False for an MPS tensor, PyTorch 2.13.0
torch/_tensor_docs.py, and the tensor would stay on the CPU beside it).

Each selection migrated here registers its device variable (:attr:`FileContext.introduced`), so the other
transforms move tensors to that variable rather than to a choice of their own.
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import MPS_AVAILABLE, expr, is_cuda_literal, quote_like, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.selection import SPEC


class _CpuToMps(cst.CSTTransformer):
    def __init__(self) -> None:
        self.replaced = 0

    def leave_SimpleString(self, original_node, updated_node):  # type: ignore[override]
        if string_value(updated_node) == "cpu":
            self.replaced += 1
            return quote_like(updated_node, "mps")
        return updated_node


def mps_variant(node: cst.CSTNode) -> cst.CSTNode | None:
    """``node`` with its ``"cpu"`` literal turned into ``"mps"``; ``None`` when it has none (or several)."""
    t = _CpuToMps()
    out = node.visit(t)
    return out if t.replaced == 1 and isinstance(out, cst.CSTNode) else None


def _shown(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _unparenthesised(node: cst.BaseExpression) -> str:
    """The code of ``node`` without its own parentheses: ``if(train_on_gpu):`` reads the switch too."""
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    return _shown(node)


def _plain_cuda_test(ctx: FileContext, test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Call) and not test.args and "torch.cuda.is_available" in ctx.names(test.func)


def _any_gpu(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``torch.cuda.device_count() > 0`` (also ``!= 0``, ``>= 1``): the same as ``torch.cuda.is_available()``."""
    if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and isinstance(node.left, cst.Call)
            and "torch.cuda.device_count" in ctx.names(node.left.func)):
        return False
    op, right = node.comparisons[0].operator, node.comparisons[0].comparator
    value = right.value if isinstance(right, cst.Integer) else None
    return (isinstance(op, (cst.GreaterThan, cst.NotEqual)) and value == "0") or \
        (isinstance(op, cst.GreaterThanEqual) and value == "1")


class _AvailableToMps(cst.CSTTransformer):
    def __init__(self, ctx: FileContext) -> None:
        self.ctx, self.replaced, self.other = ctx, 0, False

    def _available(self, node: cst.CSTNode) -> bool:
        return (isinstance(node, cst.Call) and "torch.cuda.is_available" in self.ctx.names(node.func)) \
            or _any_gpu(self.ctx, node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._available(node):
            return False
        if isinstance(node, cst.Call) and any(q.startswith("torch.cuda.") for q in self.ctx.names(node.func)):
            self.other = True
        return True

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        if self._available(original_node):
            self.replaced += 1
            return expr(MPS_AVAILABLE).with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node


def mps_test(ctx: FileContext, test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The MPS test of a CUDA test: ``torch.cuda.is_available()`` made ``torch.backends.mps.is_available()``,
    the rest (``not args.no_cuda and ...``) kept; ``None`` when the test has no availability call or calls
    another ``torch.cuda`` function (``device_count() > 1`` has no MPS reading)."""
    t = _AvailableToMps(ctx)
    out = test.visit(t)
    if t.other or t.replaced == 0:
        return None
    return out.with_changes(lpar=[], rpar=[]) if isinstance(out, cst.BaseExpression) else None


def _scope(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return next((a for a in ctx.ancestors(node) if isinstance(a, cst.FunctionDef)), ctx.module)


def _assigned_name(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """The plain name (``device``) or attribute (``args.device``) an enclosing assignment binds ``node`` to."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in anc.targets] if isinstance(anc, cst.Assign) else [anc.target]
            if len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Attribute)):
                return _shown(targets[0])
            return None
        if isinstance(anc, (cst.SimpleStatementLine, cst.FunctionDef)):
            return None
    return None


def _register(ctx: FileContext, node: cst.CSTNode, name: str | None, line: int) -> None:
    if name is not None:
        ctx.introduced.append((_scope(ctx, node), name, line))


def _block_of(ctx: FileContext, stmt: cst.CSTNode) -> tuple[cst.CSTNode, int] | None:
    """The block (module or indented block) holding ``stmt`` and its index there."""
    parent = ctx.parents.get(stmt)
    if isinstance(parent, (cst.Module, cst.IndentedBlock)):
        body: list[cst.CSTNode] = list(parent.body)
        return (parent, body.index(stmt)) if stmt in body else None
    return None


def _statement_of(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((a for a in [node, *ctx.ancestors(node)] if isinstance(a, (cst.SimpleStatementLine, cst.If))), None)


# The visitors are classes of the module, not of the functions that use them: a class made per call is garbage
# only the cyclic collector frees, and it would keep what its methods see (the file context: the whole tree)
# alive until then.
class _OfKind(cst.CSTVisitor):
    """``found``: every node of ``kind``, in visiting order."""

    def __init__(self, kind: type | tuple[type, ...]) -> None:
        super().__init__()
        self.kind = kind
        self.found: list = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found.append(node)
        return True


class _Variables(cst.CSTVisitor):
    """``found``: names used as variables (not keyword names nor attributes), walking ``ctx``'s index."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.found: set[str] = set()

    def visit_Arg(self, node: cst.Arg) -> bool:
        self.ctx.visit(node.value, self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.ctx.visit(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _nodes_in(ctx: FileContext, root: cst.CSTNode, kind: type | tuple[type, ...]) -> list:
    """The nodes of ``kind`` under ``root`` (``root`` included), in visiting order: a slice of the file's index."""
    index = ctx.index
    if index is None or root not in index.at:
        v = _OfKind(kind)
        root.visit(v)
        return v.found
    at = index.at[root]
    nodes = index.order[at:index.ends[at]]
    if kind is cst.CSTNode:
        return nodes  # every node of the index is one
    classes = ctx.classes_of(kind)  # isinstance without ABCMeta.__instancecheck__ per node
    return [n for n in nodes if type(n) in classes]


def _variables(ctx: FileContext, root: cst.CSTNode) -> set[str]:
    """Names used as variables under ``root``: not keyword names (``device=``) nor attributes (``x.device``)."""
    v = _Variables(ctx)
    ctx.visit(root, v)
    return v.found


def _is_move(node: cst.CSTNode, follows: str | None = None) -> bool:
    """A ``.cuda()`` call without arguments (the current CUDA device); with ``follows`` (the tensor an ``is_cuda``
    guard tests, ``x``), also ``.cuda(x.get_device())``: the device of ``x`` itself (gaussian-splatting's ssim)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda"):
        return False
    if not node.args:
        return True
    if follows is None or len(node.args) != 1 or node.args[0].keyword is not None:
        return False
    arg = node.args[0].value
    return isinstance(arg, cst.Call) and not arg.args and isinstance(arg.func, cst.Attribute) \
        and arg.func.attr.value == "get_device" and _shown(arg.func.value) == follows


def _mentions_cuda(ctx: FileContext, node: cst.CSTNode, follows: str | None = None) -> bool:
    """Whether ``node`` holds anything CUDA besides plain ``.cuda()`` moves: a ``torch.cuda`` name, a CUDA
    literal, ``.cuda(i)``, ``DataParallel``."""
    for n in _nodes_in(ctx, node, cst.CSTNode):
        if isinstance(n, cst.SimpleString) and is_cuda_literal(string_value(n)):
            return True
        if isinstance(n, (cst.Name, cst.Attribute)) and any(q.startswith("torch.cuda") or q.endswith("DataParallel")
                                                            for q in ctx.names(n)):
            return True
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "cuda" and n.args \
                and not _is_move(n, follows):
            return True
    return False


def _moves_only(ctx: FileContext, block: cst.BaseSuite, follows: str | None = None) -> bool:
    """Every statement of ``block`` moves a tensor or module with ``.cuda()`` and holds nothing else CUDA."""
    stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return bool(stmts) and all(_nodes_in(ctx, s, cst.Call) and any(_is_move(c, follows) for c in _nodes_in(ctx, s, cst.Call))
                               and not _mentions_cuda(ctx, s, follows) for s in stmts)


def _finding_at(ctx: FileContext, node: cst.CSTNode, code: str) -> Finding | None:
    r = ctx.positions[node]
    for f in ctx.findings:
        if f.code == code and f.location.line == r.start.line and (f.location.column or 0) - 1 == r.start.column:
            return f
    return None


def _move_edits(ctx: FileContext, root: cst.CSTNode, dev: str, code: str, follows: str | None = None) -> list[Edit]:
    """``.cuda()`` -> ``.to(dev)`` for every move under ``root`` (each fixing its API101 finding)."""
    edits = []
    for call in _nodes_in(ctx, root, cst.Call):
        if not _is_move(call, follows):
            continue
        f = _finding_at(ctx, call, "API101")

        def rewrite(n: cst.CSTNode, dev=dev) -> cst.CSTNode:
            assert isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
            return n.with_changes(func=n.func.with_changes(attr=cst.Name("to")), args=[cst.Arg(expr(dev))])

        edits.append(Edit(call, rewrite, "API101", ctx.line_of(call), f".cuda() -> .to({dev}) (follows the guard's "
                          "device)", finding=f))
    return edits


def _guard_edits(ctx: FileContext, guard: cst.If | cst.IfExp, dev: str, code: str, why: str,
                 follows: str | None = None) -> list[Edit]:
    new_test = expr(f"{dev}.type != 'cpu'")
    edits = [Edit(guard, lambda n, t=new_test: n.with_changes(test=t.with_changes(lpar=n.test.lpar, rpar=n.test.rpar)),
                  code, ctx.line_of(guard), f"{why} -> {dev}.type != 'cpu' (CUDA or MPS)")]
    return edits + _move_edits(ctx, guard.body, dev, code, follows)


class Selection(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/selection.py
    detects = True  # is_cuda guards of moves: no scan rule locates them
    words = ("is_cuda",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        done: set[cst.CSTNode] = set()
        for f in findings:
            nodes = ctx.nodes_of(f)
            node = next((n for n in nodes if isinstance(n, (cst.IfExp, cst.If, cst.Assign))), None)
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.IfExp):
                node = node.value
            if isinstance(node, cst.IfExp):
                result: list[Edit] | str = self._ifexp(ctx, f, node)
            elif isinstance(node, cst.If):
                result = self._if(ctx, f, node)
            elif isinstance(node, cst.Assign):
                result = self._flag(ctx, f, node, done)
            else:
                result = "the device selection was not found at this position"
            if isinstance(result, str):
                manuals.append(manual(f, result))
            else:
                edits += result
                done |= {e.node for e in result}
        edits += self._is_cuda_guards(ctx, done)
        return edits, manuals

    # --- the selection itself -------------------------------------------------------------------------------
    def _mps_of(self, ctx: FileContext, test: cst.BaseExpression) -> cst.BaseExpression | None:
        """The MPS test for ``test``: read directly, or through the flag's own assignment in the same scope."""
        direct = mps_test(ctx, test)
        if direct is not None:
            return direct
        if isinstance(test, (cst.Name, cst.Attribute)):
            flag = self._flag_assignment(ctx, test)
            if flag is not None:
                return mps_test(ctx, flag.value)
        return None

    def _flag_assignment(self, ctx: FileContext, use: cst.BaseExpression) -> cst.Assign | None:
        """The last ``<flag> = <expr>`` before ``use`` in its scope (or at module level)."""
        text, line = _shown(use), ctx.line_of(use)
        best = None
        for scope in {_scope(ctx, use), ctx.module}:
            for a in _nodes_in(ctx, scope, cst.Assign):
                if len(a.targets) == 1 and _shown(a.targets[0].target) == text and ctx.line_of(a) < line \
                        and _scope(ctx, a) is scope and (best is None or ctx.line_of(a) > ctx.line_of(best)):
                    best = a
        return best

    def _ifexp(self, ctx: FileContext, f: Finding, node: cst.IfExp) -> list[Edit] | str:
        line = ctx.line_of(node)
        _register(ctx, node, _assigned_name(ctx, node), line)
        if ctx.accelerator_api and _plain_cuda_test(ctx, node.test) and mps_variant(node.orelse) is not None:
            as_str = isinstance(node.body, cst.SimpleString)
            acc = "torch.accelerator.current_accelerator()" + (".type" if as_str else "")
            new = expr(f"{acc} if torch.accelerator.is_available() else {_shown(node.orelse)}")
            return [Edit(node, lambda n: new.with_changes(lpar=n.lpar, rpar=n.rpar), f.code, line,
                         "cuda-or-cpu -> torch.accelerator (CUDA, MPS or another accelerator), else the CPU",
                         finding=f)]
        mps = mps_variant(node.orelse)
        if mps is None:
            return "the CPU side of the selection names 'cpu' indirectly; add an MPS branch by hand"
        test = self._mps_of(ctx, node.test)
        if test is None:
            return f"the selection's test ({_shown(node.test)}) is not a CUDA-availability test migrate can read"

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.IfExp)
            sp = cst.SimpleWhitespace(" ")
            return n.with_changes(orelse=cst.IfExp(test=test, body=cast(cst.BaseExpression, mps), orelse=n.orelse, whitespace_before_if=sp,
                                                   whitespace_after_if=sp, whitespace_before_else=sp,
                                                   whitespace_after_else=sp))

        return [Edit(node, rewrite, f.code, line, f"cuda-or-cpu -> cuda, else mps ({_shown(test)}), else cpu",
                     finding=f)]

    def _if(self, ctx: FileContext, f: Finding, node: cst.If) -> list[Edit] | str:
        test = self._mps_of(ctx, node.test)
        if test is None:
            return f"the selection's test ({_shown(node.test)}) is not a CUDA-availability test migrate can read"
        if node.orelse is None:
            return self._return_form(ctx, f, node, test)
        if not isinstance(node.orelse, cst.Else) or not isinstance(node.orelse.body, cst.IndentedBlock):
            return "an if/elif chain: add the MPS branch by hand"
        targets = self._device_targets(ctx, node.body)
        branch = []
        changed = 0
        for stmt in node.orelse.body.body:
            assigns = _nodes_in(ctx, stmt, cst.Assign)
            if any(_shown(t.target) in targets for a in assigns for t in a.targets):
                new = mps_variant(stmt)
                if new is None:
                    return "the else branch names 'cpu' indirectly; add an MPS branch by hand"
                changed += 1
                branch.append(new)
            else:
                branch.append(stmt)
        if changed == 0:
            return "the else branch does not set the device the CUDA branch sets; add an MPS branch by hand"
        for name in targets:
            _register(ctx, node, name, ctx.line_of(node))
        first = branch[0].with_changes(leading_lines=[])

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.If) and isinstance(n.orelse, cst.Else)
            body = n.orelse.body.with_changes(body=[first, *branch[1:]])
            return n.with_changes(orelse=cst.If(test=test, body=body, orelse=n.orelse))

        return [Edit(node, rewrite, f.code, ctx.line_of(node),
                     f"if cuda / else cpu -> elif {_shown(test)} (the else branch with 'mps')", finding=f)]

    def _device_targets(self, ctx: FileContext, body: cst.BaseSuite) -> set[str]:
        """Names the CUDA branch binds to a value naming CUDA (``device = torch.device("cuda")``)."""
        out = set()
        for a in _nodes_in(ctx, body, cst.Assign):
            if any(is_cuda_literal(string_value(s)) for s in _nodes_in(ctx, a.value, cst.SimpleString)):
                out |= {_shown(t.target) for t in a.targets if isinstance(t.target, (cst.Name, cst.Attribute))}
        return out

    def _return_form(self, ctx: FileContext, f: Finding, node: cst.If, test: cst.BaseExpression) -> list[Edit] | str:
        block = _block_of(ctx, node)
        stmts = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        if block is None or len(stmts) != 1 or not _nodes_in(ctx, stmts[0], cst.Return):
            return "an if without else that does not return the device: add the MPS branch by hand"
        parent, i = block
        after = list(parent.body)[i + 1] if i + 1 < len(list(parent.body)) else None  # type: ignore[attr-defined]
        if after is None or not _nodes_in(ctx, after, cst.Return):
            return "the CPU device is not returned right after the CUDA branch: add the MPS branch by hand"
        mps = mps_variant(after)
        if mps is None:
            return "the CPU return names 'cpu' indirectly; add an MPS branch by hand"
        branch = cast(cst.BaseStatement, mps.with_changes(leading_lines=[]))

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.If)
            return n.with_changes(orelse=cst.If(test=test, body=cst.IndentedBlock([branch])))

        return [Edit(node, rewrite, f.code, ctx.line_of(node), f"return cuda / return cpu -> elif {_shown(test)}: "
                     "return mps", finding=f)]

    # --- a CUDA flag and the guards that read it -------------------------------------------------------------
    def _flag(self, ctx: FileContext, f: Finding, assign: cst.Assign, done: set) -> list[Edit] | str:
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, (cst.Name, cst.Attribute)):
            return "a CUDA switch assigned to several names: select the device by hand"
        flag = assign.targets[0].target
        flag_text, line = _shown(flag), ctx.line_of(assign)
        test = mps_test(ctx, assign.value)
        if test is None:
            return f"the CUDA switch {flag_text} is not read from torch.cuda.is_available() alone"
        scope = _scope(ctx, assign)
        reads = [n for n in _nodes_in(ctx, scope, (cst.IfExp, cst.If)) if _unparenthesised(n.test) == flag_text
                 and ctx.line_of(n) > line and n not in done]
        selections = [n for n in reads if self._selects(ctx, n)]
        guards = [n for n in reads if n not in selections and self._moves(ctx, n)]
        edits: list[Edit] = []
        dev: str | None = None
        for sel in selections:
            sub = self._ifexp(ctx, f, sel) if isinstance(sel, cst.IfExp) else self._if(ctx, f, sel)
            if isinstance(sub, str):
                return sub
            edits += sub
            done.add(sel)
            if dev is None:
                dev = _assigned_name(ctx, sel) if isinstance(sel, cst.IfExp) else \
                    next(iter(sorted(self._device_targets(ctx, sel.body))), None)
        bad = [g for g in reads if g not in selections and g not in guards and self._has_move(ctx, g)]
        if bad:
            return (f"{flag_text} guards .cuda() moves beside other CUDA code (line {ctx.line_of(bad[0])}): split "
                    "the moves from the CUDA-only calls, then run migrate again")
        if not guards:
            return edits or f"{flag_text} selects no device and guards no move migrate can follow: select the " \
                            "device by hand"
        legacy = [n for n in reads if isinstance(n, cst.IfExp) and _legacy_tensor_type(n.body)]
        if legacy:
            # `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`: the moves would reach MPS while the
            # tensors made from the CPU type stay on the CPU (no torch.mps tensor types: PyTorch 2.13.0 torch/mps)
            return (f"{flag_text} also picks a legacy CUDA tensor type (line {ctx.line_of(legacy[0])}), which has no "
                    "MPS counterpart: the moved modules would reach MPS while tensors made from the CPU type stay on "
                    "the CPU; make those tensors with torch.tensor(..., device=...) first, then run migrate again")
        if dev is None:
            new_edit = self._bind_device(ctx, f, assign, flag, test)
            if isinstance(new_edit, str):
                return new_edit
            dev = new_edit[1]
            edits.append(new_edit[0])
        _register(ctx, assign, dev, line)
        for g in guards:
            edits += _guard_edits(ctx, g, dev, f.code, f"guard {flag_text}")
            done.add(g)
        edits[0].finding = f
        return edits

    def _selects(self, ctx: FileContext, node: cst.IfExp | cst.If) -> bool:
        if isinstance(node, cst.IfExp):
            return mps_variant(node.orelse) is not None and any(
                is_cuda_literal(string_value(s)) for s in _nodes_in(ctx, node.body, cst.SimpleString))
        return isinstance(node.orelse, cst.Else) and bool(self._device_targets(ctx, node.body))

    def _has_move(self, ctx: FileContext, node: cst.IfExp | cst.If) -> bool:
        return any(_is_move(c) for c in _nodes_in(ctx, node.body, cst.Call))

    def _moves(self, ctx: FileContext, node: cst.IfExp | cst.If) -> bool:
        if isinstance(node, cst.If):
            return node.orelse is None and _moves_only(ctx, node.body)
        return self._has_move(ctx, node) and not _mentions_cuda(ctx, node.body) and not self._has_move(
            ctx, cst.IfExp(test=node.test, body=node.orelse, orelse=node.orelse))

    def _bind_device(self, ctx: FileContext, f: Finding, assign: cst.Assign, flag: cst.BaseExpression,
                     test: cst.BaseExpression) -> tuple[Edit, str] | str:
        flag_text = _shown(flag)
        if isinstance(flag, cst.Attribute):
            name = f"{_shown(flag.value)}.device"
            taken = any(_shown(a) == name for a in _nodes_in(ctx, ctx.module, cst.Attribute))
        else:
            name = "device"
            taken = "device" in _variables(ctx, _scope(ctx, assign))
        if taken:
            return f"{name} is already used in this file: select the device from {flag_text} by hand"
        stmt = _statement_of(ctx, assign)
        block = _block_of(ctx, stmt) if stmt is not None else None
        if block is None:
            return f"the CUDA switch {flag_text} is not a plain statement: select the device by hand"
        parent, i = block
        new = cst.parse_statement(f'{name} = torch.device("cuda" if {flag_text} else "mps" if {_shown(test)} '
                                  'else "cpu")\n')

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            body = list(n.body)  # type: ignore[attr-defined]
            return n.with_changes(body=[*body[:i + 1], new, *body[i + 1:]])

        return Edit(parent, rewrite, f.code, ctx.line_of(assign),
                    f"{name} selected after {flag_text}: cuda, else mps ({_shown(test)}), else cpu"), name

    # --- is_cuda guards ---------------------------------------------------------------------------------------
    def _is_cuda_guards(self, ctx: FileContext, done: set) -> list[Edit]:
        edits: list[Edit] = []
        for node in _nodes_in(ctx, ctx.module, cst.If):
            test = node.test
            if node in done or node.orelse is not None or not isinstance(test, cst.Attribute) \
                    or test.attr.value != "is_cuda" or not _moves_only(ctx, node.body, _shown(test.value)):
                continue
            dev = f"{_shown(test.value)}.device"
            edits += _guard_edits(ctx, node, dev, "API101", f"{_shown(test)} guard", _shown(test.value))
        return edits


def _legacy_tensor_type(node: cst.BaseExpression) -> bool:
    """``torch.cuda.FloatTensor`` (any ``torch.cuda.*Tensor`` name)."""
    name = cst.helpers.get_full_name_for_node(node) or ""
    return ".cuda." in f".{name}" and name.endswith("Tensor")
