"""Reach by calls, not by imports (issue 32, round 10): a limit counts only where the main path's code calls it.

The main path (:mod:`mpsready.scan.model.graph`) is the set of files the entries import, transitively. Importing a
module runs its module-level code, not its functions: a training helper, a CUDA-graph runner or an exporter method in a
module the entry imports for one class runs only when some code that runs calls it. Before this round every limit in
such a module counted, so on a project of thousands of lines one unused function with a ``.cuda()`` made the headline
``mac_for_dev``. This pass asks of each limiting finding inside a function or method whether the main path's code
reaches that definition through names, and says how.

**Units and what runs.** A *unit* is a module-level function, a class, or a method (nested functions belong to the
definition around them). The code that runs without being called is the module-level code of every main-path file
(class bodies, decorators, default values and base classes included; the ``if __name__ == "__main__":`` block only in
a main entry, :func:`mpsready.scan.model.graph.main_entries`); when the main path starts at modules rather than
scripts (a library's README imports, a console script's module), every definition of those starting modules, every
name they re-export (``from .base import load_model`` in ``__init__.py``) and every name the README's code imports
runs too (their users call them), with the public methods of the classes among them. A unit is **reached** when
reached code loads its name (``f(...)``, ``obj.f``, a callback ``f``, a string ``"f"`` given to ``getattr``) and, for
a method, its class is reached; a reached class's methods that Python or a framework calls by name (dunders,
``forward``, Lightning's ``*_step``/``on_*`` hooks, ...: :data:`HOOKS`) are reached with it. A bare name means what
Python's scoping binds in its file (:class:`_Scope`): the file's own module-level definition, else the definition of
the name it imports (``from tools.export import main as export_main``), else, after a ``*`` import, any module-level
definition of that name; a name the file neither defines nor imports is a builtin, local or parameter, no definition of
the project (an entry's ``main()`` does not reach another module's ``main``). Attributes and strings are matched by
their text over every main-path file: two methods of one name reach each other's callers, so for them the analysis can
only over-count what runs.

**Guards** (round 10b, :mod:`mpsready.scan.model.reach_guards`): a reference on the side of an ``if`` that a Mac run
at the defaults never enters (the Mac's facts, an option's default) reaches nothing; a limit reached only through such
references is ``behind_flag`` with ``evidence.calls_guarded``. An imported module's ``if __name__ == "__main__":``
block does not run on import and reaches nothing.

**What a finding gets.** A limiting finding in a reached unit keeps limiting, and carries the chain of calls that
reaches it (``evidence.main_path.calls``: ``["train.py:40 main", "train.py:12 Trainer.fit", "engine.py:88
Trainer._step"]``, each step the file and line of the reference and the unit it reaches); the terminal prints it after
the import chain. A finding in a unit that nothing reached names is ``reach: off_main_path`` with
``evidence.uncalled_on_path`` (why): it is listed on its part's line, never in the headline. A finding in a unit whose
reach the analysis cannot settle is **not verified** (``evidence.not_verified``, and ``outlook.not_verified`` in JSON,
a ``not verified:`` line in the terminal): a definition with a decorator that may register it (``@MODELS.register()``;
a registry picks it by a string the analysis does not see; round 13: unless a configuration value of the project names
it, :mod:`mpsready.scan.model.registry_choice`, then it limits with ``evidence.selected_by``), or a method a framework
may call by a name not in :data:`HOOKS` (its class derives from a class defined outside the project). Neither limits the headline.

An override of ``.cuda()`` (``def cuda(self, *args): ... return super().cuda(*args)``, vendored ``PreTrainedModel``
copies) is no limit of its own: it runs only where code calls ``.cuda()`` on the object, a finding where it sits
(``evidence.delegate``).

**Limits.** Calls through computed names (``getattr(self, f"forward_{mode}")``) and registries selected by a config
file's string reach nothing here (the decorator rule above puts the registry's members in *not verified*). A main path
of more than :data:`MAX_FILES` Python files, or a project of more than :data:`MAX_PROJECT_FILES`, is left as it is (each
limit counts), and each such limit says so (``evidence.calls_unchecked``, round 11).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding
from mpsready.scan.model.graph import main_entries, main_path
from mpsready.scan.model.reach_guards import Guards, explain, module_guard
from mpsready.scan.model.reach_walk import ReachMemo, loads, summarise
from mpsready.scan.model.reached_flags import switch_unreached
from mpsready.scan.model.registry_choice import ConfigValues, registered_names
from mpsready.scan.model.remedy import limits

# round 11: the pass reads the main path's files only, so its bound is on those (400 project files before, which
# skipped lerobot's 807); the project bound keeps the pass off trees the size of the torch package (2,285 files,
# benchmarks/scan_bench.py), where one reach over ~1,000 files would cost more than the parse itself
MAX_FILES = 1000
MAX_PROJECT_FILES = 2000
_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # what a unit is
# decorators that wrap a definition without registering it anywhere (functools, torch, typing, abc, dataclasses)
NEUTRAL_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "setter", "getter", "deleter", "cached_property", "wraps",
    "lru_cache", "cache", "no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "autocast", "script",
    "ignore", "unused", "export", "compile", "abstractmethod", "abstractproperty", "dataclass", "contextmanager",
    "asynccontextmanager", "overload", "final", "override", "total_ordering", "jit", "custom_fwd", "custom_bwd",
    "once_differentiable", "njit", "singledispatch", "runtime_checkable", "unique", "torch_compile", "dynamo",
})
# decorators that make a function a command of a command line (typer's `app.command()`/`app.callback()`, click's
# `cli.command()`/`click.group()`): in a main entry the README's command runs it by the command's name
CLI_COMMANDS = frozenset({"command", "group", "callback"})
# methods Python, PyTorch or a training framework calls by name (torch.nn.Module, torch.autograd.Function,
# torch.utils.data, torch.optim, Lightning's LightningModule/Callback/LightningDataModule, gym.Env, transformers'
# PreTrainedModel): a reached class's method of such a name runs without the project naming it
HOOKS = frozenset({
    "forward", "backward", "setup_context", "jvp", "vmap", "extra_repr", "reset_parameters", "_init_weights",
    "_load_from_state_dict", "_save_to_state_dict", "_apply", "step", "zero_grad", "state_dict", "load_state_dict",
    "get_lr", "setup", "teardown", "prepare_data", "configure_optimizers", "configure_model", "configure_callbacks",
    "configure_gradient_clipping", "reset", "render", "close", "seed", "run", "compute", "update", "generate",
    "prepare_inputs_for_generation", "train", "eval", "predict", "fit", "transform", "collate", "sample",
})
_HOOK_SUFFIXES = ("_step", "_step_end", "_epoch_end", "_epoch_start", "_dataloader", "_batch_end", "_batch_start")
_HOOK_PREFIXES = ("on_", "configure_")


def is_hook(name: str) -> bool:
    """Whether Python or a framework calls a method of this name (see :data:`HOOKS`)."""
    return (name.startswith("__") and name.endswith("__")) or name in HOOKS or name.startswith(_HOOK_PREFIXES) \
        or name.endswith(_HOOK_SUFFIXES)


@dataclass
class _Unit:
    rel: str
    key: str  # `f`, `Cls`, `Cls.method`
    name: str
    first: int
    last: int
    node: _Def
    owner: str | None = None  # a method's class key
    registered: bool = False  # a decorator that may register it
    methods: list[str] = field(default_factory=list)  # a class's method keys
    external_base: bool = False  # a class with a base class not defined in the project


def _decorator_name(node: ast.AST) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _registered(node: ast.AST) -> bool:
    return any(_decorator_name(d) not in NEUTRAL_DECORATORS for d in getattr(node, "decorator_list", ()))


def _main_guard(node: ast.AST) -> bool:
    t = node.test if isinstance(node, ast.If) else None
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__" \
        and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant) \
        and t.comparators[0].value == "__main__"


def _module_units(rel: str, tree: ast.Module, units: dict[tuple[str, str], _Unit], guards: Guards | None = None,
                  main: bool = True) -> list[ast.AST]:
    """Record the units of ``tree`` and return the module-level code (what importing the file runs): statements,
    decorators, defaults, base classes and class bodies; definitions' bodies are left to their units. With ``guards``
    the side of a module-level ``if`` a Mac never enters adds its definitions but none of its code; unless ``main``
    (the file is a main entry), neither does its ``if __name__ == "__main__":`` block (importing it runs no such
    block: before round 10b the block of every main-path module counted as run)."""
    top: list[ast.AST] = []

    def add_def(node: _Def, key: str, owner: str | None, out: list[ast.AST]) -> _Unit:
        u = _Unit(rel, key, node.name, node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno, node,
                  owner, _registered(node))
        units[(rel, key)] = u
        out.extend(node.decorator_list)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None)
        return u

    def walk(stmts: Iterable[ast.stmt], runs: bool = True) -> None:
        out = top if runs else []  # a side a Mac never enters: its definitions exist, its code does not run
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                add_def(stmt, stmt.name, None, out)
            elif isinstance(stmt, ast.ClassDef):
                cls = add_def(stmt, stmt.name, None, out)
                out.extend([*stmt.bases, *stmt.keywords])
                for inner in stmt.body:
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        cls.methods.append(add_def(inner, f"{stmt.name}.{inner.name}", stmt.name, out).key)
                    else:
                        out.append(inner)  # a class body runs when the module is imported
            elif isinstance(stmt, ast.If) and not main and _main_guard(stmt):
                walk(stmt.body, False)
                walk(stmt.orelse, runs)
            elif isinstance(stmt, ast.If) and guards is not None and runs:
                side = guards.skip(rel, stmt, None)
                out.append(stmt.test)
                walk(stmt.body, side != "body")
                walk(stmt.orelse, side != "orelse")
            elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(stmt).__name__ == "TryStar":
                out.extend(getattr(stmt, attr) for attr in ("test", "iter", "target") if hasattr(stmt, attr))
                out.extend(getattr(stmt, "items", ()))
                walk(getattr(stmt, "body", ()), runs)
                walk(getattr(stmt, "orelse", ()), runs)
                walk(getattr(stmt, "finalbody", ()), runs)
                for h in getattr(stmt, "handlers", ()):
                    walk(h.body, runs)
            elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                      for t in stmt.targets):
                continue  # `__all__` names what may be imported, not what runs
            else:
                out.append(stmt)

    walk(tree.body)
    return top


@dataclass(frozen=True)
class _Scope:
    """What a bare name can mean in one file (Python's scoping): a module-level definition of the file, a name it
    imports from another module (``from m import f as g``: ``g`` -> ``f``), or, after ``from m import *``, any."""

    defined: frozenset[str]
    imported: dict[str, str]
    star: bool


@dataclass(frozen=True)
class Reach:
    """The answer for one project: the reached units with the step that reached each (predecessor unit or ``None``
    for module-level code, the file and line of the reference), and every unit by file."""

    units: dict[tuple[str, str], _Unit]
    came_from: dict[tuple[str, str], tuple[tuple[str, str] | None, str, int]]
    trees: list[tuple[str, ast.Module]] = field(default_factory=list)

    def reached_at(self, rel: str, line: int) -> str | None:
        """The name of the reached definition holding ``rel:line`` (``"module level"`` outside every definition of a
        main-path file), ``None`` when that definition is not reached."""
        u = self.unit_at(rel, line)
        if u is None:
            return "module level" if any(r == rel for r, _t in self.trees) else None
        return u.key if (u.rel, u.key) in self.came_from else None

    def unit_at(self, rel: str, line: int) -> _Unit | None:
        """The innermost unit of ``rel`` holding ``line`` (a method before its class), ``None`` at module level."""
        best = None
        for (r, _k), u in self.units.items():
            if r == rel and u.first <= line <= u.last and (best is None or u.first >= best.first):
                best = u
        return best

    def chain(self, unit: _Unit) -> list[str]:
        """The references from module-level code to ``unit``: ``file:line name`` per step."""
        steps: list[str] = []
        node: tuple[str, str] | None = (unit.rel, unit.key)
        seen: set[tuple[str, str]] = set()
        while node is not None and node in self.came_from and node not in seen:
            seen.add(node)
            prev, rel, line = self.came_from[node]
            steps.append(f"{rel}:{line} {node[1]}")
            node = prev
        return steps[::-1]


def reach_by_calls(results: Mapping[str, Any], sources: Any, on_path: set[str], starts: Iterable[str],
                   mains: Iterable[str], api: Iterable[str] = (), guards: Guards | None = None,
                   memo: ReachMemo | None = None) -> Reach:
    """The units of the main-path files ``on_path`` that its code reaches (see the module doc). ``starts``: modules
    the main path starts from that are no scripts (their definitions are called by their users); ``mains``: files
    whose ``__main__`` block is a main entry; ``api``: the names the README's code imports from the project.
    Long because its worklist's closures (``reach``, ``see``, ``see_bare``) share one state (queue, came_from, the
    names loaded so far): split apart they would pass all of it around."""
    units: dict[tuple[str, str], _Unit] = {}
    top_code: dict[str, list[ast.AST]] = {}
    trees: list[tuple[str, ast.Module]] = []
    mains = set(mains)
    memo = ReachMemo() if memo is None else memo  # one walk per file for both reaches of calls_pass
    summaries = memo.summaries
    for rel in sorted(on_path):
        tree = sources.tree(rel) if rel.endswith(".py") else None
        if tree is not None and rel not in summaries:
            summaries[rel] = summarise(tree)
    if guards is not None:
        guards.names = frozenset(name for sm in summaries.values() for name in sm.defs)
    for rel in sorted(on_path):
        tree = sources.tree(rel) if rel.endswith(".py") else None
        if tree is None:
            continue
        trees.append((rel, tree))
        code = _module_units(rel, tree, units, guards, rel in mains)
        top_code[rel] = code
    by_name: dict[str, list[_Unit]] = {}
    for u in units.values():
        by_name.setdefault(u.name, []).append(u)
    project_classes = {u.name for u in units.values() if isinstance(u.node, ast.ClassDef)}
    for u in units.values():
        if isinstance(u.node, ast.ClassDef):
            bases = [_decorator_name(b) for b in u.node.bases]
            u.external_base = any(b and b not in project_classes and b != "object" for b in bases)
    came_from: dict[tuple[str, str], tuple[tuple[str, str] | None, str, int]] = {}
    queue: deque[tuple[str, str]] = deque()
    loaded: set[str] = set()  # names loaded by reached code so far
    where: dict[str, tuple[tuple[str, str] | None, str, int]] = {}  # a name -> the first reached reference to it

    def reach(key: tuple[str, str], step: tuple[tuple[str, str] | None, str, int], api: bool = False) -> None:
        u = units[key]
        if key in came_from and not (api and isinstance(u.node, ast.ClassDef)):
            return
        came_from.setdefault(key, step)
        queue.append(key)
        if isinstance(u.node, ast.ClassDef):
            for m in u.methods:
                mu = units[(u.rel, m)]
                if is_hook(mu.name) or (api and not mu.name.startswith("_")):
                    # a library's users call its API classes' public methods (`model.score(...)`)
                    reach((u.rel, m), (key, u.rel, mu.first))
                elif mu.name in loaded:
                    reach((u.rel, m), where[mu.name])

    own: dict[str, set[str]] = {}
    for u in units.values():
        if u.owner is None:
            own.setdefault(u.rel, set()).add(u.name)
    scopes = {rel: _Scope(frozenset(own.get(rel, ())), summaries[rel].imported, summaries[rel].star)
              for rel, _tree in trees}

    def see_bare(names: Mapping[str, int], from_key: tuple[str, str] | None, rel: str) -> None:
        """A bare name reaches what it means in ``rel`` (:class:`_Scope`): the file's own definition, else the
        definitions of the name it imports, else (a ``*`` import) any module-level definition of that name."""
        sc = scopes.get(rel)
        for name, line in names.items():
            if sc is not None and name in sc.defined:
                targets = [u for u in by_name.get(name, ()) if u.rel == rel and u.owner is None]
            elif sc is not None and name in sc.imported:
                targets = [u for u in by_name.get(sc.imported[name], ()) if u.rel != rel and u.owner is None]
            elif sc is None or sc.star:
                targets = [u for u in by_name.get(name, ()) if u.owner is None]
            else:
                targets = []  # a builtin, a local or a parameter: no definition of the project
            for u in targets:
                reach((u.rel, u.key), (from_key, rel, line))

    def see_all(loads: tuple[dict[str, int], dict[str, int]], from_key: tuple[str, str] | None, rel: str) -> None:
        see_bare(loads[0], from_key, rel)
        see(loads[1], from_key, rel)

    def see(names: Mapping[str, int], from_key: tuple[str, str] | None, rel: str, api: bool = False) -> None:
        for name, line in names.items():
            if name in loaded and not api:
                continue
            loaded.add(name)
            where.setdefault(name, (from_key, rel, line))
            for u in by_name.get(name, ()):
                if u.owner is None or (u.rel, u.owner) in came_from:
                    reach((u.rel, u.key), (from_key, rel, line), api and u.owner is None)

    starts = set(starts)
    for rel, code in top_code.items():
        see_all(loads(code, rel, None, guards)[0], None, rel)
    for rel in sorted(starts & set(top_code)):
        # a starting module's re-exports (`from .base import load_model` in a package's __init__.py) are its API
        see({a.asname or a.name: n.lineno for n in top_code[rel] if isinstance(n, ast.ImportFrom) for a in n.names},
            None, rel, True)
    see(dict.fromkeys(api, 0), None, "README", True)  # the names the README's code imports from the project
    for (rel, key), u in list(units.items()):
        if rel in mains and u.owner is None and any(_decorator_name(d) in CLI_COMMANDS for d in u.node.decorator_list):
            # a command of the entry's own command line (`@app.command()`, typer/click): `python cli.py train` runs
            # it through the app the `__main__` block calls, never by its name (a false runs_on_mac before)
            reach((rel, key), (None, rel, u.first))
    for (rel, key), u in list(units.items()):
        if rel in starts and u.owner is None:
            reach((rel, key), (None, rel, u.first), True)  # a library's users call what its starting modules define
    def body_loads(u: _Unit) -> tuple[dict[str, int], dict[str, int]]:
        """The names ``u``'s body loads; a guarded walk keeps the unguarded answer for the second reach."""
        known = memo.loads.get(id(u.node))
        if guards is None and known is not None:
            return known
        mine, every = loads(u.node.body, u.rel, u.node, guards, guards is not None)
        memo.loads[id(u.node)] = every if every is not None else mine
        return mine

    while queue:
        at = queue.popleft()
        u = units[at]
        if isinstance(u.node, ast.ClassDef):
            continue  # its body ran with the module; its methods are units of their own
        see_all(body_loads(u), at, u.rel)
    return Reach(units, came_from, trees)


def _starts(results: Mapping[str, Any], roots: list[str]) -> list[str]:
    """The starting modules that are no scripts: a library's README imports, a console script's module."""
    return [rel for rel in roots if rel in results and not results[rel][0].entry]


def calls_pass(findings: list[Finding], results: Mapping[str, Any], sources: Any, declared: Any) -> list[Finding]:
    """``findings`` with each limit in a definition the main path's code never reaches moved off the main path, each
    one whose reach cannot be settled marked *not verified*, and each reached one given its call chain."""
    if declared is None:
        return findings
    todo = [i for i, f in enumerate(findings) if limits(f) and f.reach is None and not (f.evidence or {}).get("optional")
            and (f.location.path or "").endswith(".py") and f.location.line]
    if not todo:
        return findings
    n_project = sum(1 for rel in results if rel.endswith(".py"))
    if n_project > MAX_PROJECT_FILES:
        return _unchecked(findings, todo, f"the project holds {n_project} Python files, more than the "
                                          f"{MAX_PROJECT_FILES} the reach-by-calls pass reads")
    on_path, roots = main_path(results, declared.readme, declared.imports, declared.console, None, declared.features)
    if on_path is None:
        return findings  # no entry: every file counts
    wanted = [i for i in todo if findings[i].location.path in on_path]
    if not wanted:
        return findings
    n_path = sum(1 for rel in on_path if rel.endswith(".py"))
    if n_path > MAX_FILES:
        return _unchecked(findings, wanted, f"the main path holds {n_path} Python files, more than the {MAX_FILES} "
                                            f"the reach-by-calls pass reads")
    mains = main_entries(results, roots, declared)
    starts = _starts(results, roots)
    guards = Guards(sources, frozenset())
    from mpsready.scan.model.core import _keywords_set_on
    turned: dict[frozenset[str], set[str]] = {}  # one read of the project's keywords per parameter name

    def turned_on(names: frozenset[str]) -> set[str]:
        if names not in turned:
            turned[names] = _keywords_set_on(set(names), results, sources)
        return turned[names]

    guards.turned_on = turned_on
    memo = ReachMemo()
    r = reach_by_calls(results, sources, on_path, starts, mains, declared.api_names, guards, memo)
    full: list[Reach] = []  # the reach that follows every branch, built when a limit is not reached

    def unguarded() -> Reach:
        if not full:
            full.append(reach_by_calls(results, sources, on_path, starts, mains, declared.api_names, None, memo))
        return full[0]

    out = list(findings)
    chosen = ConfigValues(getattr(declared, "config_files", ()), results, sources)  # round 13: read when asked
    for i in wanted:
        f = out[i]
        u = r.unit_at(f.location.path or "", f.location.line or 0)
        if u is not None:  # else module-level code: it runs when the file is imported
            out[i] = _judge(f, u, r, unguarded, guards, chosen)
        else:
            out[i] = _module_level(f, guards)
    return out


def _unchecked(findings: list[Finding], which: list[int], bound: str) -> list[Finding]:
    """Round 11: a check the size bound skips is said on each limit it leaves unchecked (``evidence.calls_unchecked``)
    rather than nowhere (lerobot's 807 files skipped the pass silently before)."""
    out = list(findings)
    for i in which:
        out[i] = out[i].with_evidence({**(out[i].evidence or {}), "calls_unchecked": f"{bound}: this limit counts "
                                       "without a check that code which runs calls it"})
    return out


def _module_level(f: Finding, guards: Guards) -> Finding:
    """Round 12: module-level code runs on import, unless a module-level ``if`` decided at the defaults (an option's
    or an environment variable's default) keeps it out: then it is ``behind_flag``, naming what decides it."""
    why = module_guard(guards, f.location.path or "", f.location.line or 0)
    if why is None:
        return f
    text = f"runs only when `{why.test}` ({why.rel}:{why.line}) holds, which it does not at the defaults: " \
           + "; ".join(why.facts)
    return f.with_state(behind_flag=text).with_evidence({**(f.evidence or {}), "calls_guarded": {
        "test": why.test, "path": why.rel, "line": why.line, "facts": list(why.facts), "by": why.by}})


def _judge(f: Finding, u: _Unit, r: Reach, unguarded: Callable[[], Reach], guards: Guards,
           chosen: ConfigValues | None = None) -> Finding:
    """One limit in unit ``u`` judged by the reach ``r``: off the main path (uncalled, or behind a branch a Mac never
    takes), not verified (a decorator or an outside base class may call it), or reached, with its call chain."""
    top = u if u.owner is None else r.units[(u.rel, u.owner)]
    key = (u.rel, u.key)
    ev = dict(f.evidence or {})
    if f.code == "API101" and u.owner is not None and u.name == "cuda":
        # an override of `.cuda()` that passes the call on (`return super().cuda(*args)`): it runs only where some
        # code calls `.cuda()` on the object, and that call is a finding of its own, where the edit belongs
        ev["delegate"] = f"{u.key}() passes a `.cuda()` call on; the calls of it are the limits"
        return f.with_state(reach="off_main_path").with_evidence(ev)
    if key not in r.came_from and key in unguarded().came_from:
        why = explain(r, unguarded(), guards, u)
        if why is None:  # no skipped branch explains it: the limit stays, with the chain that reaches it
            r_u = unguarded()
            return f.with_evidence({**ev, "main_path": {**(ev.get("main_path") or {}), "calls": r_u.chain(u)}})
        side = f"`{why.test}` ({why.rel}:{why.line})"
        facts = "; ".join(why.facts)
        text = (f"a Mac never calls it: only under {side}, decided by {facts}" if why.by == "mac facts" else
                f"called only when {side} holds, which it does not at the defaults" + (f": {facts}" if facts
                                                                                        else ""))
        ev["calls_guarded"] = {"test": why.test, "path": why.rel, "line": why.line, "facts": list(why.facts),
                               "by": why.by}
        return f.with_state(behind_flag=text).with_evidence(ev)
    if key in r.came_from:
        mp = dict(ev.get("main_path") or {})
        mp["calls"] = r.chain(u)
        ev["main_path"] = mp
        off = switch_unreached(u.node, f.location.line or 0, lambda: r.trees, r.reached_at)
        if off:  # a switch only unreached code turns on (model/reached_flags.py)
            return f.with_state(behind_flag=off).with_evidence({**ev, "switch_unreached": off})
        return f.with_evidence(ev)
    if u.registered or top.registered:
        what = u if u.registered else top
        by = chosen.where(registered_names(what.node)) if chosen is not None and (u is top or is_hook(u.name)) \
            else None
        if by:  # round 13: the configuration names the registered component, so the registry selects it
            ev["selected_by"] = (f"{what.key} has a decorator that may register it "
                                 f"({ast.unparse(what.node.decorator_list[0])[:60]}), and the configuration names it: "
                                 f"{by}")
            return f.with_evidence(ev)
        ev["not_verified"] = (f"{what.key} has a decorator that may register it "
                              f"({ast.unparse(what.node.decorator_list[0])[:60]}); nothing on the main path "
                              f"names it, so whether a Mac runs it depends on what selects it")
        return f.with_state(reach="off_main_path").with_evidence(ev)
    if u.owner is not None and top.external_base and (u.rel, u.owner) in r.came_from:
        ev["not_verified"] = (f"{u.key}() is never named on the main path, but {top.key} derives from a class "
                              f"outside the project, which may call it by name")
        return f.with_state(reach="off_main_path").with_evidence(ev)
    ev["uncalled_on_path"] = (f"{u.key}() is in {u.rel}, which the main path imports, but no code the main "
                              f"path runs calls it or names it")
    return f.with_state(reach="off_main_path").with_evidence(ev)
