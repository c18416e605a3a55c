"""Functions nothing calls (issue 32, round 5): a limit inside a module-level function that no file of the project
names is not on the main path.

A script folder's helper whose only call was commented out (``utils/utils.py: print_gpu_stats``, a
``# print_gpu_stats()`` in ``run.py``) runs on no command of the project, so its ``torch.cuda.current_device()``
limits nothing. The function must be defined at module level with no decorator (a decorator may register it: a
route, a command, a hook), in a folder that is no regular package (no ``__init__.py``: the project's own scripts and
their helpers, not an installed package whose users call its functions), in a module another file of the project
imports (its users are the project's own files; a module nothing imports may be used from outside), and no file of
the project may name it: no name, attribute, import or string constant equal to it in any Python file (tests and
demos included), no mention in a notebook, a packaging file (``setup.py``/``setup.cfg``/``pyproject.toml`` entry
points) or the README. Such a finding gets ``reach: off_main_path`` and ``evidence.uncalled``; the outlook lists it
apart, never in the headline. Projects of more than :data:`MAX_FILES` Python files are not searched (nothing is marked)."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Collection, Mapping
from typing import Any

from mpsready.findings import Finding
from mpsready.scan.model.graph import module_of
from mpsready.scan.model.remedy import limits

MAX_FILES = 400  # Python files searched for a name; a larger project keeps its findings as they are
_MENTIONS = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "README.rst", "README.txt", "README")


def uncalled_functions(findings: list[Finding], results: Mapping[str, Any], sources: Any,
                       api_names: Collection[str] = ()) -> list[Finding]:
    """``findings`` with the limits inside functions nothing names marked off the main path (see the module doc).
    ``results`` maps a relative path to (CodeResult, cells); ``sources`` is the project's
    :class:`~mpsready.scan.model.reread.SourceTrees`; ``api_names`` the names the README's code imports."""
    py = [rel for rel in results if rel.endswith(".py")]
    if len(py) > MAX_FILES:
        return findings
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
