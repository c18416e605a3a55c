"""Findings inside a function that the project calls only behind an option that is off by default.

The analyser marks a finding ``behind_flag`` when an ``if args.word_timestamps:`` surrounds the finding itself
(:func:`mpsready.scan.model.project.apply_surfaces`). whisper puts the guard one call up: ``transcribe()`` calls
``add_word_timestamps()`` only ``if word_timestamps:``, and the ``.double()`` that MPS refuses sits in the
callee, in another file. This pass looks at the callers of each function that holds a limiting finding: when
every use of the function's name in the project's main-path files is a call under an ``if <name>:`` test whose
option (``--word_timestamps``) is off by default, the function's findings are behind that option too.

Callers are followed up a few levels (``find_alignment`` <- ``add_word_timestamps`` <- ``transcribe``'s guarded
call); functions are matched by their short name across the project (methods included), a function used other
than by a call (passed as a callback, stored in a table) keeps its findings, and only main-path files that
contain the function's name as text are parsed again, so the pass costs nothing for projects without such
findings. A project of more than MAX_FILES Python files, or one where more than MAX_PARSED files would be parsed
again, is left as it is (a large library such as the torch package: its findings keep limiting).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from mpsready.findings import Finding, Scope
from mpsready.scan.code.astutil import spans_a_line
from mpsready.scan.code.result import DefSpan
from mpsready.scan.model.remedy import limits
from mpsready.scan.model.reread import SourceTrees
from mpsready.scan.scope import scope_of

MAX_CALLEES = 64  # functions whose callers are looked up; more is a project this pass does not pay for
MAX_HOPS = 4  # levels of callers followed up from the function holding the finding
MAX_PARSED = 100  # files parsed again for their calls; past that the pass stops looking up (a name not looked up is no guard)
MAX_FILES = 400  # main-path Python files of a project this pass looks at (the torch package has 2,285: skipped)
# called by PyTorch or a framework, not by the project's code: their callers cannot be seen
_IMPLICIT = {"forward", "training_step", "validation_step", "test_step", "predict_step", "configure_optimizers",
             "setup", "run"}


def behind_caller_flags(findings: list[Finding], results: Mapping[str, Any], sources: SourceTrees,
                        off_options: Mapping[str, str], off_path: Any = None,
                        public: Any = ()) -> list[Finding]:
    """``findings`` with ``evidence["behind_flag"]`` (the option's name) added to those inside a function
    called only behind an option that is off by default (see the module doc).

    ``results`` maps a relative path to (CodeResult, cells); ``sources`` reads and parses project files again
    (shared with the other call-site passes); ``off_options`` maps an option's destination (``word_timestamps``) to its printed name for the
    options of the main path that are off by default. ``off_path(rel)`` (issue 32, round 4) says whether a file is off
    the main path (:func:`mpsready.scan.model.graph.off_main_path`): a function that only such files call (a
    training helper of a package whose main path is inference) is off the main path too, unless ``public`` (the
    names the README's code imports) holds it."""
    if sum(1 for rel in results if rel.endswith(".py")) > MAX_FILES:
        return findings
    spans = {rel: res.def_spans for rel, (res, _c) in results.items() if res.def_spans}
    wanted: dict[int, str] = {}  # index of a finding -> the function holding it
    for i, f in enumerate(findings):
        if f.location.path in spans and f.location.line and limits(f):
            name = _innermost(spans[f.location.path], f.location.line)
            if name and not name.startswith("__") and name not in _IMPLICIT:
                wanted[i] = name
    if not wanted:
        return findings
    uses: dict[str, set] = {}  # name -> {(guard or None, enclosing function or None)}
    todo = set(wanted.values())
    budget = [MAX_PARSED]
    for _ in range(MAX_HOPS):  # callers of callers, a few levels up
        todo -= set(uses)
        if not todo or len(uses) + len(todo) > MAX_CALLEES:
            break
        found = _caller_guards(sorted(todo), results, sources, budget, off_path, public)
        if found is None:
            break  # too many files to read again: judged on the callers found so far (round 5)
        uses.update(found)
        todo = {fn for seen in found.values() for guard, fn in seen if guard is None and fn}
    out = list(findings)
    off = {**off_options, **{g: g for seen in uses.values() for g, _fn in seen
                             if g and g.startswith((MAC_NEVER, OFF_PATH))}}
    for i, name in wanted.items():
        option = _behind(name, uses, off, set())
        if option and option.startswith(OFF_PATH) and name in public:
            pass  # the README's usage imports it: its users call it, whoever else does
        elif option and option.startswith(OFF_PATH):
            # issue 32, round 4: every call of the function (up its callers) is in a file off the main path
            why = option[len(OFF_PATH):]
            out[i] = out[i].with_state(reach="off_main_path").with_evidence(
                {**out[i].evidence, "off_path_callers": f"{name}() is called only from {why}"})
        elif option and option.startswith(MAC_NEVER):
            # issue 32: every call sits in a branch the Mac's facts decide against (`if "RANK" in os.environ:`)
            why = option[len(MAC_NEVER):]
            out[i] = out[i].with_state(behind_flag=f"a Mac never calls it: {why}", caller_guard=name) \
                .with_evidence({**out[i].evidence, "mac_never_caller": why})
        elif option:
            out[i] = out[i].with_state(behind_flag=off_options[option], caller_guard=name)
    return out


def _behind(name: str, uses: Mapping[str, set], off: Mapping[str, str], visiting: set[str]) -> str | None:
    """The off-by-default option every use of ``name`` sits behind (directly, or through callers that are
    themselves behind one), or ``None``."""
    seen = uses.get(name)
    if not seen or name in visiting:
        return None
    visiting = visiting | {name}
    options = []
    for guard, fn in seen:
        if guard is not None:
            if guard not in off:
                return None
            options.append(guard)
        elif fn is None or fn == name:
            return None
        else:
            up = _behind(fn, uses, off, visiting)
            if up is None:
                return None
            options.append(up)
    return sorted(options)[0] if options else None


def _innermost(spans: list[DefSpan], line: int) -> str | None:
    hits = [s for s in spans if s.first <= line <= s.last]
    return min(hits, key=lambda s: s.last - s.first).name if hits else None


def _caller_guards(names: list[str], results: Mapping[str, Any], sources: SourceTrees,
                   budget: list[int], off_path: Any = None, public: Any = ()) -> dict[str, set] | None:
    """For each name, its uses in main-path Python files as (guard, enclosing function): the option an enclosing
    ``if`` tests (``word_timestamps`` for ``if word_timestamps:`` / ``if args.word_timestamps:``) or ``None``, and
    the function the use sits in (``None`` at module level). A use that is not a call is ``(None, None)``: it
    cannot be followed. ``None`` when more files than ``budget[0]`` (decremented) would be parsed."""
    out: dict[str, set] = {n: set() for n in names}
    todo: list[tuple[str, list[str]]] = []  # files naming a function, all found before any is parsed
    off_callers: dict[str, str] = {}  # name -> a file off the main path that names it (round 4)
    for rel in sorted(results):
        if scope_of(rel) is not Scope.MAIN or not rel.endswith(".py"):
            continue
        if off_path is not None and off_path(rel):
            text = sources.text(rel)
            for n in names:
                if text is not None and n + "(" in text:
                    off_callers.setdefault(n, rel)
            continue
        text = sources.text(rel)
        if text is None:  # vanished or unreadable since the walk: its uses are unknown
            for n in names:
                out[n].add((None, None))
            continue
        present = [n for n in names if n in text]
        if present:
            todo.append((rel, present))
    budget[0] -= len(todo)
    if budget[0] < 0:
        return None
    for rel, present in todo:
        tree = sources.tree(rel)
        if tree is None:
            for n in present:
                out[n].add((None, None))
            continue
        _uses(tree, set(present), out, sources.lines(rel, tuple(present)))
    for n, rel in off_callers.items():
        if not out[n] and n not in public:  # called from a file off the main path, named by none on it (the README's
            # code imports none of the names: users call those)
            out[n].add((f"{OFF_PATH}{rel}", None))
    return out


OFF_PATH = "offpath:"  # every use is in a file off the main path: "offpath:<one such file>" (issue 32, round 4)
MAC_NEVER = "mac:"  # a guard the Mac's facts decide false: "mac:<test> is False (line N): <facts>"


def _uses(tree: ast.Module, names: set[str], out: dict[str, set], lines: list[int] | None) -> None:
    """Walk ``tree`` with the test of the enclosing ``if`` body and the enclosing function (iteratively); with
    ``lines`` (those that hold one of ``names``, :meth:`SourceTrees.lines`), only the statements spanning one.
    A branch the Mac's facts decide against (:mod:`mpsready.scan.code.macfacts`) is a guard of its own
    (:data:`MAC_NEVER`), so a function called only there never runs on a Mac (issue 32)."""
    stack: list[tuple[ast.AST, str | None, str | None, Any]] = [(tree, None, None, None)]
    mac: list[Any] = []  # the file's MacEval, built on the first `if` that holds a use
    owners: dict[int, ast.ClassDef] = {}  # id() of a method -> its class (`self.X` reads what its methods set)

    def never(test: ast.expr, want: bool, fn_node: Any) -> str | None:
        if not mac:
            from mpsready.scan.code.macfacts import MacEval
            from mpsready.scan.code.names import build_alias_map
            from mpsready.scan.code.valueflow import ValueFlow
            mac.append(MacEval(ValueFlow(build_alias_map(tree), tree)))
            owners.update({id(st): c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for st in c.body
                           if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))})
        truth = mac[0].truth(test, fn_node, owners.get(id(fn_node)))
        if truth is None or truth == want or mac[0].used_default:
            return None
        return f"{MAC_NEVER}{ast.unparse(test)[:80]} is {truth} (line {test.lineno}): {'; '.join(mac[0].facts)}"

    while stack:
        node, guard, fn, fn_node = stack.pop()
        if lines is not None and isinstance(node, ast.stmt) and not spans_a_line(node, lines):
            continue  # a use is a name on a line that holds it
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend((child, None, node.name, node) for child in node.body)  # a new function: no enclosing test
            stack.extend((d, guard, fn, fn_node) for d in node.decorator_list)
            continue
        if isinstance(node, ast.If):
            switch = _switch(node.test)
            # `if self._use_gpu:` with `self._use_gpu = torch.cuda.is_available()` in __init__: an attribute the
            # Mac's facts decide is no user's switch (issue 32, round 5)
            decided = never(node.test, True, fn_node) if _self_test(node.test) else None
            body_guard = decided or switch or guard or never(node.test, True, fn_node)
            else_guard = guard or (never(node.test, False, fn_node) if node.orelse else None)
            stack.append((node.test, guard, fn, fn_node))
            stack.extend((child, body_guard, fn, fn_node) for child in node.body)
            stack.extend((child, else_guard, fn, fn_node) for child in node.orelse)
            continue
        if isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if callee in names:
                out[callee].add((guard, fn))
                stack.extend((child, guard, fn, fn_node) for child in node.args)
                stack.extend((k.value, guard, fn, fn_node) for k in node.keywords)
                if isinstance(node.func, ast.Attribute):
                    stack.append((node.func.value, guard, fn, fn_node))
                continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # `from align import align` names the function without using it
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            out[node.id].add((None, None))  # a use that is not a call: passed on, stored, returned
        stack.extend((child, guard, fn, fn_node) for child in ast.iter_child_nodes(node))


def _self_test(test: ast.AST) -> bool:
    """``self.X`` or ``not self.X``: a test of an attribute its class sets."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self"


def _switch(test: ast.AST) -> str | None:
    """The option an ``if`` tests as a switch: ``word_timestamps`` or ``args.word_timestamps``."""
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.Attribute) and isinstance(test.value, (ast.Name, ast.Attribute)):
        return test.attr
    return None
