"""The environment of the Mac-facts evaluation (:mod:`mpsready.scan.code.macfacts`, issue 32): what each name,
``self.`` attribute and argparse option of one file is assigned, built on first need and cached per file."""

from __future__ import annotations

import ast
from typing import Any

from mpsready.scan.code.astutil import walk_in_order

# an assigned value, or None where the binding is not an expression the evaluation reads (an import, a loop target)
Assigns = dict[str, list["ast.expr | None"]]


def atoms(value: Any) -> frozenset:
    return frozenset((value,))


class MacEnv:
    """Name -> assigned values of one file (module level, per function, ``self.`` attributes per class) and its
    argparse options with their value on a Mac. ``ctx`` is the file's
    :class:`~mpsready.scan.code.context.FileContext`."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.used_default = False  # the last decision read an option's default (a user's choice, not a fact)
        self._module: Assigns | None = None
        self._defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
        self._locals: dict[int, Assigns] = {}
        self._self_attrs: dict[int, Assigns] = {}
        self._options: dict[str, tuple[frozenset | None, str | None]] | None = None
        self._parsed: dict[tuple[str, int], bool | None] = {}  # (name, id of its function) -> parse_result

    def _fact(self, text: str) -> None:
        """Keep ``text``, a fact of the Mac a decision used. This base class reads assignments only and is never
        used alone: :class:`~mpsready.scan.code.macfacts.MacEval` keeps the facts (its evidence lists them)."""
        raise TypeError("MacEnv is a base class: MacEval records the facts")

    def module_assigns(self) -> Assigns:
        if self._module is None:
            self._module, self._defs = {}, {}
            self._collect(self.ctx.tree.body if self.ctx.tree is not None else [], self._module, self._defs)
        return self._module

    def defs(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        self.module_assigns()
        assert self._defs is not None
        return self._defs

    @staticmethod
    def _collect(body: list[ast.stmt], out: Assigns, defs: dict | None = None) -> None:
        """Assignments to plain names in a block and the blocks it controls (not nested definitions)."""
        stack = list(body)
        while stack:
            stmt = stack.pop()
            cls = stmt.__class__
            if cls is ast.Assign:
                for t in stmt.targets:  # type: ignore[attr-defined]
                    if t.__class__ is ast.Name:
                        out.setdefault(t.id, []).append(stmt.value)  # type: ignore[attr-defined]
                    elif t.__class__ in (ast.Tuple, ast.List):
                        for i, e in enumerate(t.elts):  # type: ignore[attr-defined]
                            if e.__class__ is ast.Name:
                                out.setdefault(e.id, []).append(_known_first(stmt.value, i))  # type: ignore[arg-type, attr-defined]
            elif cls in (ast.AnnAssign, ast.AugAssign) and stmt.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                value = stmt.value if cls is ast.AnnAssign else None  # type: ignore[attr-defined]
                out.setdefault(stmt.target.id, []).append(value)  # type: ignore[attr-defined]
            elif cls in (ast.For, ast.AsyncFor) and stmt.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                out.setdefault(stmt.target.id, []).append(None)  # type: ignore[attr-defined]
                stack += stmt.body + stmt.orelse  # type: ignore[attr-defined]
                continue
            elif cls in (ast.FunctionDef, ast.AsyncFunctionDef):
                if defs is not None:
                    defs.setdefault(stmt.name, stmt)  # type: ignore[attr-defined]
                out.setdefault(stmt.name, []).append(None)  # type: ignore[attr-defined, arg-type]
                continue
            elif cls is ast.ClassDef:
                out.setdefault(stmt.name, []).append(None)  # type: ignore[attr-defined, arg-type]
                continue
            elif cls in (ast.Import, ast.ImportFrom):
                for alias in stmt.names:  # type: ignore[attr-defined]
                    bound = alias.asname or alias.name.split(".")[0]
                    out.setdefault(bound, []).append(None)  # type: ignore[arg-type]
                continue
            elif cls in (ast.Global, ast.Nonlocal):
                for name in stmt.names:  # type: ignore[attr-defined]
                    out.setdefault(name, []).append(None)  # type: ignore[arg-type]
                continue
            for part in ("body", "orelse", "finalbody"):
                block = getattr(stmt, part, None)
                if block.__class__ is list:
                    stack += block
            for h in getattr(stmt, "handlers", ()):
                stack += h.body
                if h.name:
                    out.setdefault(h.name, []).append(None)  # type: ignore[arg-type]
            if cls in (ast.With, ast.AsyncWith):
                for item in stmt.items:  # type: ignore[attr-defined]
                    if item.optional_vars.__class__ is ast.Name:
                        out.setdefault(item.optional_vars.id, []).append(None)

    def local_assigns(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Assigns:
        got = self._locals.get(id(fn))
        if got is None:
            got = {}
            # a lambda's body is one expression: it assigns no name (round 13: the reach by calls decides a
            # conditional expression inside a lambda, the first test evaluated with a lambda around it)
            self._collect(fn.body if isinstance(fn.body, list) else [], got)
            text = getattr(self.ctx, "text", None)
            for n in ast.walk(fn) if text is None or ":=" in text else ():  # walrus-bound names are unknown
                if n.__class__ is ast.NamedExpr and n.target.__class__ is ast.Name:  # type: ignore[attr-defined]
                    got.setdefault(n.target.id, []).append(None)  # type: ignore[attr-defined, arg-type]
            args = fn.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None:
                    got.setdefault(a.arg, []).append(None)  # type: ignore[arg-type]
            self._locals[id(fn)] = got
        return got

    def self_attrs(self, cls: ast.ClassDef) -> Assigns:
        got = self._self_attrs.get(id(cls))
        if got is None:
            got = {}
            # statements only (an assignment is a statement): the methods' blocks, not their expressions
            stack: list[ast.stmt] = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            while stack:
                n = stack.pop()
                if n.__class__ is ast.Assign:
                    for t in n.targets:  # type: ignore[attr-defined]
                        if t.__class__ is ast.Attribute and t.value.__class__ is ast.Name \
                                and t.value.id == "self":  # type: ignore[attr-defined]
                            got.setdefault(t.attr, []).append(n.value)  # type: ignore[attr-defined]
                    continue
                for part in ("body", "orelse", "finalbody"):
                    block = getattr(n, part, None)
                    if block.__class__ is list:
                        stack += block
                for h in getattr(n, "handlers", ()):
                    stack += h.body
            self._self_attrs[id(cls)] = got
        return got

    def parse_result(self, name: str, fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool | None:
        """Whether ``name`` (in ``fn``, else at module level) holds an argparse parse result, whose attributes are
        the file's options (issue 32, round 8): True when one of its bindings is ``X.parse_args(...)``,
        ``X.parse_known_args(...)[0]`` (or the first name of ``a, _ = X.parse_known_args()``) or a call of a
        function of this file that returns one; False when every binding is another expression (an object that
        only looks like settings); None when a binding is not read (a parameter, an import) or there is none."""
        key = (name, id(fn))
        if key not in self._parsed:
            values = self.local_assigns(fn).get(name) if fn is not None else None
            if values is None:
                values = self.module_assigns().get(name)
            if not values:
                self._parsed[key] = None
            elif any(v is not None and self._parses(v, 0) for v in values):
                self._parsed[key] = True
            else:
                self._parsed[key] = None if any(v is None for v in values) else False
        return self._parsed[key]

    def _parses(self, value: ast.expr, depth: int) -> bool:
        """``value`` is a parse result: argparse's ``parse_args`` (argparse.py: ``ArgumentParser.parse_args``
        returns the namespace), the first of ``parse_known_args``'s pair, or a helper of this file returning one."""
        if value.__class__ is ast.Subscript:
            index = value.slice  # type: ignore[attr-defined]
            inner = value.value  # type: ignore[attr-defined]
            return index.__class__ is ast.Constant and index.value == 0 and inner.__class__ is ast.Call \
                and inner.func.__class__ is ast.Attribute and inner.func.attr == "parse_known_args"
        if value.__class__ is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        if func.__class__ is ast.Attribute:
            return func.attr == "parse_args"
        if func.__class__ is not ast.Name or depth >= 3:
            return False
        target = self.defs().get(func.id)
        if target is None:
            return False
        local = self.local_assigns(target)
        for n in ast.walk(target):
            returned = n.value if n.__class__ is ast.Return else None  # type: ignore[attr-defined]
            if returned is None:
                continue
            if returned.__class__ is ast.Name:
                if any(v is not None and self._parses(v, depth + 1) for v in local.get(returned.id, ())):
                    return True
            elif self._parses(returned, depth + 1):
                return True
        return False

    def options(self) -> dict[str, tuple[frozenset | None, str | None]]:
        """argparse options of the file: destination -> (its value on the Mac, the fact that says so)."""
        if self._options is None:
            self._options = {}
            text = getattr(self.ctx, "text", None)
            tree = self.ctx.tree if text is None or "add_argument" in text else None  # no option: no walk
            for n in walk_in_order(tree) if tree is not None else ():  # ast.walk's order: a later option wins
                if n.__class__ is ast.Call and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument":
                    self._option(n)
        return self._options

    def _option(self, call: ast.Call) -> None:
        assert self._options is not None
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        dest_node = kw.get("dest")
        longs = [s for s in names if s.startswith("--")] or names
        if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
            dest = dest_node.value
        elif longs:
            dest = longs[0].lstrip("-").replace("-", "_")
        else:
            return
        choices = kw.get("choices")
        choice_vals = [e.value for e in choices.elts if isinstance(e, ast.Constant)] \
            if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) else []
        last = dest.lower().replace("-", "_").split("_")[-1]
        action = kw.get("action")
        act = action.value if isinstance(action, ast.Constant) else None
        default = kw.get("default")
        # a device option holds the proposed 'mps', unless its choices leave it out or its type makes it a number
        # (`--device 0 1`: GPU ids, issue 32 round 5); then it holds its default
        if act is None and ("mps" in choice_vals or (last in ("device", "accelerator") and not choice_vals
                                                      and not _numeric_type(kw.get("type")))):
            self._options[dest] = (atoms("mps"), f"{longs[0] if longs else dest} mps (the proposed flag)")
        elif act == "store_true":
            self._options[dest] = (atoms(False), f"{longs[0] if longs else dest} is off by default")
        elif act == "store_false":
            self._options[dest] = (atoms(True), f"{longs[0] if longs else dest} is on by default")
        elif default is None:
            self._options[dest] = (atoms(None), f"{longs[0] if longs else dest} defaults to None")
        elif isinstance(default, ast.Constant):
            self._options[dest] = (atoms(default.value), f"{longs[0] if longs else dest} defaults to "
                                   f"{default.value!r}"
                                   + (GPU_IDS if last == "device" and _numeric_type(kw.get("type")) else ""))
        elif isinstance(default, (ast.List, ast.Tuple)) and all(_constant(e) for e in default.elts):
            # `nargs='+', default=[-1]` (issue 32, round 5): a list default is a tuple atom, read through subscripts
            value = tuple(_constant(e)[0] for e in default.elts)  # type: ignore[index]
            self._options[dest] = (atoms(value), f"{longs[0] if longs else dest} defaults to {list(value)!r}"
                                   + (GPU_IDS if last == "device" and _numeric_type(kw.get("type")) else ""))
        else:
            self._options[dest] = (None, None)


def _known_first(value: ast.expr, index: int) -> ast.expr | None:
    """The value an unpacked name gets where the evaluation reads it: the first of ``parse_known_args()``'s pair
    (``args, _ = parser.parse_known_args()``: the namespace, then the unparsed strings), else None (unknown)."""
    if index == 0 and value.__class__ is ast.Call and value.func.__class__ is ast.Attribute \
            and value.func.attr == "parse_known_args":  # type: ignore[attr-defined]
        return ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(0), ctx=ast.Load()), value)
    return None


# the fact's suffix for a device option holding CUDA GPU ids (`--device 0 1`, type=int): a Mac has no CUDA GPU to
# name, so its command keeps the default; a test decided by it is a fact of the Mac, not a user's switch (round 5)
GPU_IDS = " (GPU ids: a Mac names none)"


def _constant(node: ast.expr) -> tuple[Any] | None:
    """``(value,)`` of a constant or a negated number (``-1``), else None."""
    if isinstance(node, ast.Constant):
        return (node.value,)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        number = node.operand.value
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            return (-number,)
    return None


def _numeric_type(node: ast.expr | None) -> bool:
    """``type=int`` / ``type=float``: an option that holds numbers (GPU ids), never a device name."""
    return isinstance(node, ast.Name) and node.id in ("int", "float")


def compare(op: ast.cmpop, a: Any, b: Any) -> bool | None:
    """One comparison of two atoms; None when a run-time string (``"cuda:*"``) leaves it open."""
    star = (isinstance(a, str) and a.endswith("*")) or (isinstance(b, str) and b.endswith("*"))
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        if star:
            pa, pb = str(a).rstrip("*"), str(b).rstrip("*")
            if not (pa.startswith(pb) or pb.startswith(pa)):
                equal = False
            else:
                return None
        else:
            equal = a == b if isinstance(op, (ast.Eq, ast.NotEq)) else a is b or (a == b and a is None)
        return equal if isinstance(op, (ast.Eq, ast.Is)) else not equal
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, tuple):
            if star:
                return None
            inside = a in b
        elif isinstance(b, str) and isinstance(a, str):
            if a.endswith("*"):
                return None
            if b.endswith("*"):
                if a in b.rstrip("*"):
                    inside = True
                else:
                    return None
            else:
                inside = a in b
        else:
            return None
        return inside if isinstance(op, ast.In) else not inside
    if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) and type(a) is int and type(b) is int:
        return {ast.Gt: a > b, ast.GtE: a >= b, ast.Lt: a < b, ast.LtE: a <= b}[op.__class__]
    return None
