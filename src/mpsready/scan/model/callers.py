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

**One pass, "no caller" first** (issue 32, round 8: round 4's callers and round 5's uncalled functions folded).
:func:`caller_reach` asks of each function that holds a limit, in order: (1) *no caller*: nothing in the project
names it (:func:`_no_caller`, the rule below), so it runs on no command; (2) *callers only off the main path*;
(3) *callers all behind an option off by default, or in branches a Mac never enters*. A finding the first case marks
no longer limits, so the later cases do not look it up.

**No caller** (round 5): a limit inside a module-level function that no file of the project names is not on the
main path. A script folder's helper whose only call was commented out (``utils/utils.py: print_gpu_stats``, a
``# print_gpu_stats()`` in ``run.py``) runs on no command of the project, so its ``torch.cuda.current_device()``
limits nothing. The function must be defined at module level with no decorator (a decorator may register it: a
route, a command, a hook), in a folder that is no regular package (no ``__init__.py``: the project's own scripts and
their helpers, not an installed package whose users call its functions), in a module another file of the project
imports (its users are the project's own files; a module nothing imports may be used from outside), and no file of
the project may name it: no name, attribute, import or string constant equal to it in any Python file (tests and
demos included), no mention in a notebook, a packaging file (``setup.py``/``setup.cfg``/``pyproject.toml`` entry
points) or the README. Such a finding gets ``reach: off_main_path`` and ``evidence.uncalled``; the outlook lists it
apart, never in the headline.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Collection
from typing import Any, Mapping

from mpsready.findings import Finding, Scope
from mpsready.scan.code.astutil import spans_a_line
from mpsready.scan.code.result import DefSpan
from mpsready.scan.model.graph import module_of
from mpsready.scan.model.remedy import limits
from mpsready.scan.model.reread import SourceTrees
from mpsready.scan.scope import scope_of

MAX_CALLEES = 64  # functions whose callers are looked up; more is a project this pass does not pay for
MAX_HOPS = 4  # levels of callers followed up from the function holding the finding
MAX_PARSED = 100  # files parsed again for their calls; past that the pass stops looking up (a name not looked up is no guard)
MAX_FILES = 400  # main-path Python files of a project this pass looks at (the torch package has 2,285: skipped)
# called by PyTorch or a framework, not by the project's code: their callers cannot be seen
_MENTIONS = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "README.rst", "README.txt", "README")
_IMPLICIT = {"forward", "training_step", "validation_step", "test_step", "predict_step", "configure_optimizers",
             "setup", "run"}


def caller_reach(findings: list[Finding], results: Mapping[str, Any], sources: SourceTrees,
                 off_options: Mapping[str, str], off_path: Any = None, public: Any = (),
                 api_names: Collection[str] = ()) -> list[Finding]:
    """The one pass over the functions holding limits (see the module doc): case 1, no caller
    (``evidence.uncalled``), then the callers' cases (:func:`behind_caller_flags`) for the findings still limiting.
    ``api_names``: the names the README's code imports (never judged uncalled); ``public``: the same names, which
    keep a function called from off-path files on the main path."""
    if sum(1 for rel in results if rel.endswith(".py")) > MAX_FILES:
        return findings
    return behind_caller_flags(_no_caller(findings, results, sources, api_names), results, sources, off_options,
                               off_path, public)


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
        head = f"{ast.unparse(test)[:80]} is {truth}"
        # a test that is itself the fact (`torch.cuda.is_available()`) read "X is False (line 12): X is False"
        facts = [fact for fact in mac[0].facts if fact != head]
        return f"{MAC_NEVER}{head} (line {test.lineno})" + (f": {'; '.join(facts)}" if facts else "")

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


# ---------------------------------------------------------------- case 1: no caller (round 5)
def _no_caller(findings: list[Finding], results: Mapping[str, Any], sources: Any,
               api_names: Collection[str] = ()) -> list[Finding]:
    """Case 1: ``findings`` with the limits inside functions nothing names marked off the main path (see the module
    doc, "No caller"). ``results`` maps a relative path to (CodeResult, cells); ``sources`` is the project's
    :class:`~mpsready.scan.model.reread.SourceTrees`; ``api_names`` the names the README's code imports."""
    wanted: dict[int, str] = {}
    for i, f in enumerate(findings):
        rel = f.location.path or ""
        if not rel.endswith(".py") or not f.location.line or not limits(f) or _in_package(rel, results) \
                or not _imported(rel, results):
            continue
        name = _top_function(sources.tree(rel), f.location.line)
        if name and not name.startswith("__") and name not in api_names:
            wanted[i] = name
    if not wanted:
        return findings
    named = _named(set(wanted.values()), results, sources)
    out = list(findings)
    for i, name in wanted.items():
        if name not in named:
            f = out[i]
            out[i] = f.with_state(reach="off_main_path").with_evidence(
                {**f.evidence, "uncalled": f"{name}() is called or named by no file of the project"})
    return out


def _in_package(rel: str, results: Mapping[str, Any]) -> bool:
    folder = posixpath.dirname(rel)
    return bool(folder) and posixpath.join(folder, "__init__.py") in results


def _imported(rel: str, results: Mapping[str, Any]) -> bool:
    """Whether another file of the project imports the module at ``rel`` (``from utils.utils import set_seed``): its
    users are the project's own files, so what none of them names is unused. A module nothing imports (a library
    file, a script) may be used from outside: its functions are never judged here."""
    mod = module_of(rel)
    mod = mod[4:] if mod.startswith("src.") else mod
    parent, _, last = mod.rpartition(".")
    for other, (res, _cells) in results.items():
        if other == rel:
            continue
        for imp in res.imports:
            if not imp.level and (imp.module == mod or (parent and imp.module == parent and last in imp.names)):
                return True
            if imp.level and imp.module and (mod == imp.module or mod.endswith("." + imp.module)):
                return True
    return False


def _top_function(tree: ast.Module | None, line: int) -> str | None:
    """The undecorated module-level function holding ``line``, or None (a method, a decorated function, module code)."""
    for node in tree.body if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            return None if node.decorator_list else node.name
    return None


def _named(names: set[str], results: Mapping[str, Any], sources: Any) -> set[str]:
    """The ``names`` some file of the project names (see the module doc); a file that cannot be read or parsed
    names every one it mentions."""
    found: set[str] = set()
    for rel in [*results, *(m for m in _MENTIONS if m not in results)]:
        text = sources.text(rel)
        present = {n for n in names - found if text is not None and n in text}
        if not present:
            continue
        tree = sources.tree(rel) if rel.endswith(".py") and rel in results else None
        if tree is None:  # a notebook, a packaging file, the README, a file that does not parse: a mention counts
            found |= present
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in present and not isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and node.attr in present:
                found.add(node.attr)
            elif isinstance(node, (ast.ImportFrom, ast.Import)):
                found |= {a.name.rsplit(".", 1)[-1] for a in node.names} & present
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in present:
                found.add(node.value)
        if found >= names:
            break
    return found
