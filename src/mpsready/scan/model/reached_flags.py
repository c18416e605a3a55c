"""Switches that only unreached code turns on (issue 32, round 10): a guard decided by what the main path calls.

A model keeps a switch on its instance: ``self.model_parallel = False`` in ``__init__``, ``True`` only in
``parallelize()``, and ``forward`` does ``if self.model_parallel: torch.cuda.set_device(...)``. The per-file evaluation
(:mod:`mpsready.scan.code.macfacts`) joins every value a class assigns to ``self.model_parallel`` ({False, True}: not
decided), so the ``set_device`` limited the Mac. With the reach by calls (:mod:`mpsready.scan.model.call_reach`) the
join can leave out the assignments in code the main path never runs: when every assignment of the attribute in code
that runs gives a false constant (``False``, ``None``, ``0``, an empty string), and each other one sits in a definition
nothing on the main path reaches, a branch that needs the switch true (``if self.X:``, ``if self.X and ...:``,
``... if self.X else ...``) never runs on the main path: its findings are ``behind_flag`` with
``evidence.switch_unreached`` naming the attribute and the definitions that would turn it on.

The attribute is looked up by its name in every main-path file (``model.model_parallel = True`` elsewhere counts as an
assignment where it sits), ``setattr(obj, "model_parallel", ...)`` in reached code keeps the branch, and so does an
assignment of a value that is not a false constant in reached code (a parameter, ``cfg.get(...)``): the analysis can
only drop a limit when the switch is provably off on every call the main path makes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable


def _falsy(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not node.value and not isinstance(node.value, (bytes, complex))


def _switch_of(test: ast.AST) -> str | None:
    """The attribute ``X`` whose truth ``test`` needs: ``self.X``, or one operand of an ``and`` that is."""
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self":
        return test.attr
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            name = _switch_of(v)
            if name:
                return name
    return None


def switches_around(unit: ast.AST, line: int) -> list[tuple[str, int]]:
    """The switches (attribute, line of the test) that must be true for ``line`` of ``unit`` to run: the tests of the
    ``if`` statements and conditional expressions whose true side holds it."""
    out: list[tuple[str, int]] = []

    def holds(nodes: Iterable[ast.AST]) -> bool:
        return any(getattr(n, "lineno", 0) <= line <= (getattr(n, "end_lineno", 0) or 0) for n in nodes)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if not holds([child]):
                continue
            if isinstance(child, ast.If) and holds(child.body):
                name = _switch_of(child.test)
                if name:
                    out.append((name, child.lineno))
            elif isinstance(child, ast.IfExp) and holds([child.body]):
                name = _switch_of(child.test)
                if name:
                    out.append((name, child.lineno))
            visit(child)

    visit(unit)
    return out


def assignments(trees: Iterable[tuple[str, ast.Module]], attr: str) -> list[tuple[str, int, bool]]:
    """Every store of ``attr`` (``obj.attr = v``, ``obj.attr: T = v``, ``setattr(obj, "attr", v)``) in ``trees``:
    (file, line, whether the value is a false constant). A class-level ``attr = False`` counts too."""
    out = []
    for rel, tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(e, ast.Attribute) and e.attr == attr:
                            out.append((rel, n.lineno, _falsy(n.value) and not isinstance(t, ast.Tuple)))
            elif isinstance(n, ast.ClassDef):
                for s in n.body:
                    if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in s.targets):
                        out.append((rel, s.lineno, _falsy(s.value)))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" \
                    and len(n.args) == 3 and isinstance(n.args[1], ast.Constant) and n.args[1].value == attr:
                out.append((rel, n.lineno, _falsy(n.args[2])))
    return out


def switch_unreached(unit: ast.AST, line: int, trees: Callable[[], list[tuple[str, ast.Module]]],
                     reached: Callable[[str, int], str | None]) -> str | None:
    """Why ``line`` of ``unit`` never runs on the main path, or ``None``: a switch around it that only unreached code
    turns on (see the module doc). ``reached(file, line)``: ``None`` when that line's definition is unreached, else its
    name (or ``"module level"``)."""
    for attr, test_line in switches_around(unit, line):
        stores = assignments(trees(), attr)
        on = [(rel, ln) for rel, ln, falsy in stores if not falsy]
        off_reached = [(rel, ln) for rel, ln, falsy in stores if falsy and reached(rel, ln) is not None]
        if not off_reached or any(reached(rel, ln) is not None for rel, ln in on):
            continue
        where = ", ".join(f"{rel}:{ln}" for rel, ln in on) or "nowhere"
        first = off_reached[0]
        return (f"self.{attr} (tested at line {test_line}) is set false at {first[0]}:{first[1]} and turned on only "
                f"at {where}, in code the main path never calls")
    return None
