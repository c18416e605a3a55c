"""A command-line group is several programs (issue 32, round 9): each sub-command is an entry of its own.

A console script whose module registers the project's modules as sub-commands (click's ``cli.add_command(infer.main,
name="infer")``, typer's ``app.add_typer(train.app, name="train")``) reaches every sub-command's module by import, so
the selection-first verdict (:mod:`mpsready.scan.model.selection`) read the group as one program: a Gradio demo
sub-command hard-coded to CUDA, or an evaluation sub-command, limited ``moge infer --device mps``. Here such a
*dispatcher* is replaced, among the entries, by its sub-command modules; the sub-commands the README runs (``moge
infer ...``: the console script's name followed by the sub-command's) are main entries, the others programs of their
own. Without a README command naming one, every sub-command is a main entry.

**Limits.** Only registrations whose command is an attribute of a module the dispatcher imports from the project by
name (``from pkg.scripts import infer``, at module level or inside a function) or a function imported from one;
argparse sub-parsers (``set_defaults(func=...)``) are not read. The README is read as words: a line holding the
console script's name followed by the sub-command's name runs it.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from typing import Any

_REGISTER = ("add_command", "add_typer")
READMES = ("README.md", "README.rst", "README.txt", "README")


def sub_commands(rel: str, tree: ast.Module | None, py: Collection[str]) -> dict[str, str]:
    """Sub-command name -> the project module holding it, for a dispatcher module ``rel`` (empty when it is none)."""
    if tree is None:
        return {}
    modules: dict[str, str] = {}  # local name -> project file (a module imported by name, or a function's module)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                for cand in (f"{node.module}.{a.name}", node.module):
                    found = _file(cand, py)
                    if found:
                        modules[a.asname or a.name] = found
                        break
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REGISTER
                and node.args):
            continue
        target = node.args[0]
        root = target.value if isinstance(target, ast.Attribute) else target
        if not isinstance(root, ast.Name) or root.id not in modules or modules[root.id] == rel:
            continue
        name = next((k.value.value for k in node.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)
                     and isinstance(k.value.value, str)), None)
        name = name or (target.attr if isinstance(target, ast.Attribute) and target.attr != "main"
                        else root.id).replace("_", "-")
        out[name] = modules[root.id]
    return out


def _file(module: str, py: Collection[str]) -> str | None:
    base = module.replace(".", "/")
    return next((c for c in (f"{base}.py", f"src/{base}.py") if c in py), None)


def readme_runs(texts: list[str], commands: Collection[str], names: Collection[str]) -> set[str]:
    """The sub-command ``names`` a README line runs after one of the console ``commands`` (``moge infer -i x``)."""
    out: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            words = line.replace("`", " ").split()
            for i, w in enumerate(words[:-1]):
                if w in commands and words[i + 1] in names:
                    out.add(words[i + 1])
    return out


def split_dispatchers(mains: list[str], programs: list[str], results: Mapping[str, Any], sources: Any,
                      console: Mapping[str, list[tuple[str, str]]]) -> tuple[list[str], list[str], dict[str, str]]:
    """(mains, programs, {sub-command module: its command line, ``moge infer``, or ``""`` when no console script
    runs the group}) with each dispatcher among the main entries replaced by its sub-command modules, in both lists
    (see the module doc)."""
    py = [rel for rel in results if rel.endswith(".py")]
    texts = [t for name in READMES if (t := sources.text(name)) is not None]
    new_mains: list[str] = []
    extra: list[str] = []
    split: dict[str, str] = {}
    dispatchers: set[str] = set()
    for rel in mains:
        subs = sub_commands(rel, sources.tree(rel), py) if any(w in (sources.text(rel) or "") for w in _REGISTER) \
            else {}
        if len(set(subs.values())) < 2:
            new_mains.append(rel)
            continue
        dispatchers.add(rel)
        names = [cmd for cmd, _func in console.get(rel, [])]
        ran = readme_runs(texts, names, subs) if names else set()
        for name, mod in subs.items():
            split[mod] = f"{names[0]} {name}" if names else ""
            (new_mains if not ran or name in ran else extra).append(mod)
    keep = [rel for rel in dict.fromkeys(new_mains) if rel not in dispatchers]
    return keep, [rel for rel in dict.fromkeys([*extra, *programs]) if rel not in dispatchers and rel not in keep], split
