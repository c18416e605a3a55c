"""Guards around references (issue 32, round 10b): reach by calls follows only the branches a Mac run takes.

The reach by calls (:mod:`mpsready.scan.model.call_reach`) read every name in a reached definition as called. A
reference inside ``if torch.cuda.is_available():``, or inside ``if args.trt:`` where ``--trt`` is a ``store_true``
option, reached its callee as surely as one on the straight path, so a CUDA-graph runner or a TensorRT exporter three
calls away limited the Mac. Round 4's caller pass (:mod:`mpsready.scan.model.callers`) covers one call up; this pass
carries the guard along the whole chain.

**Which branches are skipped.** The test of an ``if`` statement in reached code is decided by the file's evaluation
under the Mac's facts (:class:`mpsready.scan.code.macfacts.MacEval`, PyTorch 2.13.0 on macOS arm64): a test decided
False skips the body, one decided True skips the ``else``. A test decided only by an option's default (``used_default``:
a ``store_true`` option is False, a settings ``.get("x", False)`` is False) skips its side too, as the visitor's
``behind_flag`` does for a finding inside such a branch: the default configuration never runs it, and the finding says
which option turns it on. Only tests whose skipped side names a definition of the project are evaluated (the others
decide no reach).

**What a finding gets.** A limit in a definition that the guarded reach does not reach, but the unguarded one does, is
``behind_flag`` (``a Mac never calls it: ...`` for a fact of the Mac, ``called only when ...`` for an option's
default) with ``evidence.calls_guarded``: the test, its file and line, and the facts that decide it. When no skipped
branch explains the difference the limit stays (the analysis only drops what it can show).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from mpsready.scan.model.reach_walk import names_any, sides, statements


@dataclass(frozen=True)
class Skipped:
    """One skipped side of a decided ``if``: its file and lines, the test as written, and why it is skipped."""

    rel: str
    first: int
    last: int
    test: str
    line: int
    facts: tuple[str, ...]
    by: str  # "mac facts", "option default" (an option or setting at its default) or "constant" (`if False:`)


class Guards:
    """Decides the ``if`` tests of reached code file by file (one :class:`MacEval` per file) and records each side
    it skips."""

    def __init__(self, sources: Any, names: frozenset[str]) -> None:
        self.sources = sources
        self.names = names  # the names of the project's definitions: a side naming none decides no reach
        self.skipped: list[Skipped] = []
        self._evals: dict[str, Any] = {}
        self._owners: dict[str, dict[int, ast.ClassDef]] = {}
        # names -> those some main-path file passes as a keyword with a true constant (set by the reach pass)
        self.turned_on: Any = None

    def _mac(self, rel: str) -> Any:
        if rel not in self._evals:
            from mpsready.scan.code.macfacts import MacEval
            from mpsready.scan.code.names import build_alias_map
            from mpsready.scan.code.valueflow import ValueFlow
            tree = self.sources.tree(rel)
            flow = None if tree is None else ValueFlow(build_alias_map(tree), tree)
            if flow is not None:
                # the file's text bounds the evaluation's walks (no `add_argument`: no walk for options; no `:=`: no
                # walk of each function for walrus names), as it does in the per-file analysis
                flow.text = self.sources.text(rel)
            self._evals[rel] = None if flow is None else MacEval(flow)
            self._owners[rel] = {} if tree is None else {
                id(st): c for c in statements(tree) if isinstance(c, ast.ClassDef) for st in c.body
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return self._evals[rel]

    def _names_any(self, stmts: list[ast.stmt]) -> bool:
        return names_any(stmts, self.names)

    def skip(self, rel: str, node: ast.If | ast.IfExp, fn: ast.AST | None) -> str | None:
        """``"body"`` or ``"orelse"``: the side of ``node`` a Mac run at the defaults never enters, else None. Round 13:
        a conditional expression too (``CudaGraphWrapper(f) if self.graphs else f``): its sides are one expression
        each, and a reference on the side it never takes reaches nothing, as in an ``if`` statement."""
        body, orelse = sides(node)
        if not (self._names_any(body) or self._names_any(orelse)):
            return None
        mac = self._mac(rel)
        if mac is None:
            return None
        owner = self._owners[rel].get(id(fn))
        truth = mac.truth(node.test, fn, owner)  # a RecursionError is caught there: None
        if truth is None:
            off = off_param(node.test, fn, owner, self.turned_on)
            if off is None or not body:
                return None
            self.skipped.append(Skipped(rel, body[0].lineno, max(getattr(s, "end_lineno", s.lineno) or s.lineno
                                                                 for s in body),
                                        ast.unparse(node.test)[:80], node.lineno, (f"{off}=False (the default)",),
                                        "option default"))
            return "body"
        side = orelse if truth else body
        if not side:
            return None
        self.skipped.append(Skipped(rel, side[0].lineno, max(getattr(s, "end_lineno", s.lineno) or s.lineno
                                                              for s in side),
                                    ast.unparse(node.test)[:80], node.lineno, tuple(mac.facts),
                                    "option default" if mac.used_default else "mac facts" if mac.facts
                                    else "constant"))
        return "orelse" if truth else "body"

    def why(self, rel: str, line: int) -> Skipped | None:
        """The skipped side holding ``rel:line`` (the innermost), or None."""
        best = None
        for s in self.skipped:
            if s.rel == rel and s.first <= line <= s.last and (best is None or s.first >= best.first):
                best = s
        return best


def off_param(test: ast.expr, fn: ast.AST | None, owner: ast.ClassDef | None, turned_on: Any) -> str | None:
    """Round 12: the parameter that keeps the body of ``if self.sparse and ...:`` (or ``if sparse:``) off at the
    defaults: an operand of the test (all of an ``and``) that reads a parameter of ``fn`` or of its class's
    ``__init__`` whose default is ``False``/``None`` (:func:`~mpsready.scan.code.astutil.off_by_default`, the rule
    :func:`~mpsready.scan.model.core.behind_off_params` applies to a finding inside such a branch), ``self.X``
    assigned in the class only from that parameter, and no main-path file passing it as a keyword with a true
    constant. A function called only there (a sparse-attention mask builder and its local import) is then not reached."""
    from mpsready.scan.code.astutil import off_by_default
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    inits = [s for s in (owner.body if owner is not None else ()) if isinstance(s, ast.FunctionDef)
             and s.name == "__init__"]
    for op in operands:
        if isinstance(op, ast.Name) and off_by_default(op.id, [fn]):
            name = op.id
        elif isinstance(op, ast.Attribute) and isinstance(op.value, ast.Name) and op.value.id == "self" \
                and owner is not None and off_by_default(op.attr, inits) and _only_from_param(owner, op.attr):
            name = op.attr
        else:
            continue
        if turned_on is None or name not in turned_on(frozenset((name,))):
            return name
    return None


def _only_from_param(owner: ast.ClassDef, name: str) -> bool:
    """Whether every ``self.<name> = ...`` in the class assigns the parameter of that name (or a false constant)."""
    for node in ast.walk(owner):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name) \
                    and t.value.id == "self":
                value = getattr(node, "value", None)
                if isinstance(node, ast.AugAssign) or not (
                        (isinstance(value, ast.Name) and value.id == name)
                        or (isinstance(value, ast.Constant) and value.value in (False, None))):
                    return False
    return True


def module_guard(guards: Guards, rel: str, line: int) -> Skipped | None:
    """Round 12: the skipped side of a module-level ``if`` (inside module-level ``try``/``with`` too, never inside a
    definition) that holds ``rel:line``, decided by an option's or an environment variable's default. Module-level code
    runs when its file is imported, so such a branch is the only thing that keeps it from running: ``if
    os.getenv("BASICSR_JIT") == "True":`` around a kernel build. Tests decided by the Mac's facts are the per-file
    analysis's (``mac_never``); this adds those decided at the defaults. None when no such branch holds the line."""
    tree = guards.sources.tree(rel)
    mac = guards._mac(rel) if tree is not None else None
    if mac is None:
        return None
    found = None
    stack = list(tree.body)
    while stack:
        st = stack.pop()
        if not (st.lineno <= line <= (getattr(st, "end_lineno", None) or st.lineno)) \
                or isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.If):
            truth = mac.truth(st.test, None, None)
            side = st.body if truth is False else st.orelse if truth is True else []
            if side and mac.used_default and side[0].lineno <= line <= max(
                    getattr(s, "end_lineno", None) or s.lineno for s in side):
                found = Skipped(rel, side[0].lineno, line, ast.unparse(st.test)[:80], st.lineno, tuple(mac.facts),
                                "option default")
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(st, name, None) or [])
        for handler in getattr(st, "handlers", None) or []:
            stack.extend(handler.body)
    return found


def explain(guarded: Any, full: Any, guards: Guards, unit: Any) -> Skipped | None:
    """Why ``unit`` (reached by the unguarded reach ``full``, not by ``guarded``) never runs on a Mac at the defaults:
    the skipped branch that holds the first reference of its chain that the guarded reach did not follow."""
    node, steps, seen = (unit.rel, unit.key), [], set()
    while node is not None and node in full.came_from and node not in seen:
        seen.add(node)
        prev, rel, line = full.came_from[node]
        steps.append((node, prev, rel, line))
        node = prev
    for node, prev, rel, line in reversed(steps):
        if node in guarded.came_from:
            continue
        if prev is not None and prev not in guarded.came_from:
            return None
        return guards.why(rel, line)
    return None
