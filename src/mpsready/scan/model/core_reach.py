"""Which functions and classes of a model file run unconditionally (issue 32, round 9): the CUDA-core rule
(:mod:`mpsready.scan.model.core`) reads a kernel's use inside one function; this module says whether that function
itself is reached only behind a condition.

A CUDA-first package's op used unconditionally inside a helper is no core use when every reference to the helper in
its file sits behind a condition (an ``if``, a conditional expression, a boolean operator, a ``try``, or after an
``if`` whose body returns), the same conditions the intra-procedural rule reads: the attention layer that calls
``self._xformers_attention(q, k, v)`` only under ``if XFORMERS_AVAILABLE and self.use_xformers:``, or the Triton
autograd function chosen by ``TritonScan if x.is_cuda else TorchScan``. A path exists beside the call, as for a use
under the ``if`` itself.

A definition is **reached** when (in this order):

- another Python file of the project imports it by name, or references it outside every condition (a subclass's
  call of an inherited helper under its own ``if`` does not count): it is reached there;
- its file never references it outside its own body: it is called by a protocol (``forward``, ``__call__``) or from
  outside, so it is reached;
- some reference to it is unconditional, at module level or inside a definition that is itself reached.

A method is reached only when its class is too. References are by name (``name``, ``obj.name``), so two methods of one
name count each other's calls (never fewer reached). A reference under ``if __name__ == "__main__":`` counts as
unconditional (a script's own use). Limits: calls through a variable (``fn = self._x; fn()`` counts, ``getattr(self,
"_x")`` does not, so that helper reads as never referenced: reached).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from mpsready.scan.code.astutil import TRY_NODES

MAX_FILES = 2000  # project Python files read (once per round of questions) to ask whether another file reaches a helper
_CONDITIONAL = (ast.If, ast.IfExp, *TRY_NODES, ast.BoolOp, ast.While, ast.ExceptHandler)


@dataclass
class _Def:
    name: str  # the short name a reference uses
    owner: str | None  # the key of the class a method belongs to
    inside: set[str] = field(default_factory=set)  # keys of the definitions nested in it (itself included)


@dataclass(frozen=True)
class _Ref:
    name: str
    where: str | None  # the key of the definition the reference sits in; None at module level
    conditional: bool


def _protocol(name: str) -> bool:
    """A dunder method (``__init__``, ``__call__``): Python calls it, whatever the file names."""
    return name.startswith("__") and name.endswith("__")


def _main_guard(node: ast.AST) -> bool:
    t = node.test if isinstance(node, ast.If) else None
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__" \
        and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant) \
        and t.comparators[0].value == "__main__"


def availability_test(flags: frozenset[str], words: tuple[str, ...]) -> Callable[[ast.AST], bool]:
    """A test of whether a condition is about the kernel's availability or the device: it reads a name ``flags``
    holds (bound in an except handler of the file's imports: ``HAVE_XF = False``), a name or attribute holding one of
    ``words`` (the package's name: ``self.use_xformers``) or a string holding one (``cfg.get("use_xformers")``),
    ``.is_cuda``, an ``is_available()`` check, or compares with ``"cuda"``. Other conditions (``isinstance(m,
    Attention)``, ``mask is not None``) choose among inputs, not a path beside the kernel, so a call under them still
    reaches it; and an ``if`` whose ``elif``/``else`` only raises offers no path beside, whatever its test
    (:func:`other_case_raises`)."""
    def test(node: ast.AST) -> bool:
        for n in ast.walk(node):
            name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
            if name is not None and (name in flags or name in ("is_cuda", "is_available")
                                     or any(w in name.lower() for w in words)):
                return True
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and (
                    n.value.startswith("cuda") or any(w in n.value.lower() for w in words)):
                return True  # `device == "cuda"`, `cfg.get("use_cuda_kernel")`
        return False
    return test


def handler_flags(tree: ast.Module, words: tuple[str, ...] = ()) -> frozenset[str]:
    """Availability flags of a file: the names a module-level ``try``'s except handlers bind (``HAVE_XF = False``),
    and the names assigned an expression that reads one of them or passes :func:`availability_test` (``use_fast =
    HAVE_XF and self.use_xformers``: a local the later ``if use_fast:`` tests)."""
    out: set[str] = set()
    for node in tree.body:
        for h in getattr(node, "handlers", ()) if isinstance(node, TRY_NODES) else ():
            out.update(n.id for n in ast.walk(h) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    assigns = [(n.targets[0].id, n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and _truth_value(n.value)]
    for _round in range(2):  # a flag derived from a derived flag
        test = availability_test(frozenset(out), words)
        out.update(name for name, value in assigns if test(value))
    return frozenset(out)


def _truth_value(node: ast.AST) -> bool:
    """A value that is a truth test (``a and b``, ``x == "cuda"``, ``not y``, a flag, ``torch.cuda.is_available()``),
    not a computed tensor (``y = xformers.ops.memory_efficient_attention(...)`` makes no flag of ``y``)."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr == "is_available"
    return isinstance(node, (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.Name, ast.Attribute, ast.Constant))


def other_case_raises(node: ast.If) -> bool:
    """Whether an ``elif``/``else`` of ``node`` only raises (``if x.is_cuda: ... elif not x.is_cuda: raise
    NotImplementedError()``): the author says the other case is unsupported, so the test offers no path beside."""
    rest = node.orelse
    while rest:
        if all(isinstance(s, ast.Raise) for s in rest):
            return True
        if len(rest) == 1 and isinstance(rest[0], ast.If):
            if all(isinstance(s, ast.Raise) for s in rest[0].body):
                return True
            rest = rest[0].orelse
        else:
            return False
    return False


def _collect(tree: ast.Module, guard: Callable[[ast.AST], bool]) -> tuple[dict[str, _Def], list[_Ref]]:
    """The definitions of ``tree`` by key (``Class.method``, ``func``, ``outer.inner``: the keys the CUDA-core rule
    names a use's function by) and every load of a name or attribute with its place; a load is *conditional* under
    an ``if``, conditional expression, ``while`` or boolean operator whose test ``guard`` accepts, in a ``try`` or
    an except handler, or after an ``if`` with such a test whose body returns."""
    defs: dict[str, _Def] = {}
    refs: list[_Ref] = []

    def add_def(key: str, name: str, owner: str | None, parents: list[str]) -> None:
        defs[key] = _Def(name, owner, {key})
        for p in parents:
            defs[p].inside.add(key)

    def visit(node: ast.AST, where: str | None, conditional: bool, parents: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                key = child.name if where is None else f"{where}.{child.name}"
                add_def(key, child.name, None, parents)
                for dec in child.decorator_list + child.bases:
                    visit(ast.Expr(dec), where, conditional, parents)
                for stmt in child.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        enter(stmt, f"{child.name}.{stmt.name}", where, conditional, key, [*parents, key])
                    else:
                        visit(ast.Module([stmt], []), where, conditional, [*parents, key])
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = child.name if where is None else f"{where}.{child.name}"
                enter(child, key, where, conditional, None, parents)
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                refs.append(_Ref(child.id, where, conditional))
            elif isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Load):
                refs.append(_Ref(child.attr, where, conditional))
            if isinstance(child, ast.If) and _main_guard(child) and where is None:
                visit(child, where, conditional, parents)  # a script's own use counts as unconditional
            elif isinstance(child, ast.If):
                visit(child, where, conditional or (guard(child.test) and not other_case_raises(child)), parents)
            elif isinstance(child, (ast.IfExp, ast.While)):
                visit(child, where, conditional or guard(child.test), parents)
            elif isinstance(child, ast.BoolOp):
                for v in child.values:
                    others = [o for o in child.values if o is not v]
                    visit(ast.Expr(v), where, conditional or any(guard(o) for o in others), parents)
            else:
                visit(child, where, conditional or isinstance(child, (*TRY_NODES, ast.ExceptHandler)), parents)

    def enter(fn: ast.FunctionDef | ast.AsyncFunctionDef, key: str, outer: str | None, conditional: bool,
                 owner: str | None, parents: list[str]) -> None:
        add_def(key, fn.name, owner, parents)
        for dec in [*fn.decorator_list, *fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]:
            visit(ast.Expr(dec), outer, conditional, parents)
        beside = False
        for stmt in fn.body:
            visit(ast.Module([stmt], []), key, beside, [*parents, key])
            beside = beside or (isinstance(stmt, ast.If) and guard(stmt.test)
                                and any(isinstance(s, ast.Return) for s in stmt.body))

    visit(tree, None, False, [])
    return defs, refs


@dataclass(frozen=True)
class FileRefs:
    """What one other file says about names: those it imports by name (``from m import name``, under any condition),
    those it defines itself at module level, and those it references outside every availability condition."""

    imported: frozenset[str]
    own: frozenset[str]
    unconditional: frozenset[str]

    def reaches(self, name: str) -> bool:
        """Whether the file reaches a definition named ``name`` of another file: it imports the name, or references
        it outside every condition while not defining its own (a copy of the module calls its own); a subclass's call
        of an inherited helper under its own ``if`` does not reach the helper."""
        return name in self.imported or (name in self.unconditional and name not in self.own)


def file_refs(tree: ast.Module, guard: Callable[[ast.AST], bool]) -> FileRefs:
    """:class:`FileRefs` of a file, its conditions judged by ``guard``."""
    imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for a in node.names}
    defs, refs = _collect(tree, guard)
    return FileRefs(frozenset(imported), frozenset(d.name for d in defs.values() if d.owner is None),
                    frozenset(r.name for r in refs if not r.conditional))


def reached_defs(tree: ast.Module, named_elsewhere: Callable[[list[str]], set[str]],
                 guard: Callable[[ast.AST], bool]) -> Callable[[str], bool]:
    """A test of whether the definition with a key (``Class.method``) runs unconditionally (see the module doc);
    ``named_elsewhere(names)`` gives those of ``names`` that another project file reaches (asked only for the
    definitions the file alone leaves unreached). Unknown keys are reached."""
    defs, refs = _collect(tree, guard)
    by_name: dict[str, list[_Ref]] = {}
    for r in refs:
        by_name.setdefault(r.name, []).append(r)
    outside: dict[str, list[_Ref]] = {key: [r for r in by_name.get(d.name, ()) if r.where not in d.inside]
                                      for key, d in defs.items()}
    reached: set[str] = set()
    asked: dict[str, bool] = {}

    def spread() -> None:
        changed = True
        while changed:
            changed = False
            for key, d in defs.items():
                if key in reached or (d.owner is not None and d.owner not in reached):
                    continue
                if asked.get(d.name) or _protocol(d.name) or not outside[key] or any(
                        not r.conditional and (r.where is None or r.where in reached) for r in outside[key]):
                    reached.add(key)
                    changed = True

    spread()
    while True:  # what the file alone leaves unreached is reached where another file names it
        new = [d.name for key, d in defs.items() if key not in reached and d.name not in asked
               and (d.owner is None or d.owner in reached)]
        if not new:
            break
        found = named_elsewhere(sorted(set(new)))
        for name in new:
            asked[name] = name in found
        spread()
    return lambda key: key not in defs or key in reached
