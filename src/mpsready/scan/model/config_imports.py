"""Modules a configuration file names for ``importlib.import_module`` (issue 32, round 13).

A framework that builds its parts from a configuration loads them by name: ``importlib.import_module(cfg.trainer.type)``
with ``trainer: {type: projects.app.trainer}`` in a YAML file of the project (an imaginaire-style trainer, model and
dataset). Round 5 (:mod:`mpsready.scan.code.dynamic_imports`) read a constant prefix (``"models." + name``); a name
taken whole from a configuration reached nothing, so the trainer and the model that the default configuration selects,
with their CUDA-only kernels, were off the main path and the project read better than its files.

Here the argument of such a call is read as a key path (``cfg.trainer.type``, ``cfg["trainer"]["type"]``,
``cfg.get("type")`` after ``cfg.trainer``; the root name is dropped) and the project's YAML files are read with PyYAML's
composer (nothing is executed): every string value at a key path ending with the argument's last two keys
(``trainer.type``) that names a module of the project (``projects.app.trainer`` -> ``projects/app/trainer.py`` or
``.../__init__.py``) becomes an import of that module at the call's line, so the import graph reaches it from the file
that loads it, and only when the main path reaches that file. When several files give several values (one per variant
of the method) each is a candidate and each is reached: which one a run uses depends on the configuration file passed
at run time, and a limit is not dropped because another configuration file would avoid it.

**Limits.** A value composed at run time (``f"{cfg.root}.model"``) or read from an environment variable, a key path of
one key (``import_module(name)``: any YAML value would do), and JSON or Python configuration files are not read; YAML
files over the config size bound (256 KiB) are data, not configuration, and are not read either.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from mpsready.scan.code.result import ImportRecord

MAX_KEYS = 2  # the last keys of the argument matched against a YAML key path


def key_path(arg: ast.expr) -> tuple[str, ...] | None:
    """The keys an argument reads below its root name (``cfg.trainer.type`` -> ``("trainer", "type")``,
    ``cfg["model"].get("type")`` -> ``("model", "type")``), or None for anything else (a constant, a call, a
    formatted string, a bare name)."""
    keys: list[str] = []
    node = arg
    while True:
        if isinstance(node, ast.Attribute):
            keys.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            keys.append(node.slice.value)
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            keys.append(node.args[0].value)
            node = node.func.value
        elif isinstance(node, ast.Name):
            return tuple(reversed(keys)) if len(keys) >= MAX_KEYS else None
        else:
            return None


def _import_module_args(tree: ast.Module) -> list[tuple[tuple[str, ...], int]]:
    """(key path, line) of each ``import_module(<config value>)`` / ``importlib.import_module(...)`` call."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
                or isinstance(node.func, ast.Name) and node.func.id == "import_module"):
            keys = key_path(node.args[0])
            if keys:
                out.append((keys[-MAX_KEYS:], node.lineno))
    return out


def yaml_values(texts: Mapping[str, str]) -> dict[tuple[str, ...], set[str]]:
    """Every string scalar of the YAML ``texts`` by the last :data:`MAX_KEYS` keys of its path (a file that does not
    compose is left out: a broken YAML file is no configuration)."""
    from mpsready.scan.model.configs import string_scalars

    out: dict[tuple[str, ...], set[str]] = {}
    for text in texts.values():
        if "." not in text:
            continue  # no dotted module name in it
        for path, n in string_scalars(text, sequences=False):
            if len(path) >= MAX_KEYS:
                out.setdefault(path[-MAX_KEYS:], set()).add(n.value.strip())
    return out


def with_config_imports(results: Mapping[str, Any], sources: Any,
                        config_texts: Callable[[], Mapping[str, str]]) -> Mapping[str, Any]:
    """``results`` with, for each file that loads a module named by a configuration value, an import of every module
    of the project that the YAML files give for that key (see the module doc); ``results`` itself when none does.
    ``config_texts()`` gives the YAML files' texts (read only when some file needs them)."""
    calls: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    for rel in results:
        if not rel.endswith(".py"):
            continue
        text = sources.text(rel)
        if text is None or "import_module" not in text:
            continue
        tree = sources.tree(rel)
        found = _import_module_args(tree) if tree is not None else []
        if found:
            calls[rel] = found
    if not calls:
        return results
    values = yaml_values(config_texts())
    modules = _modules(results)
    out = dict(results)
    for rel, found in calls.items():
        extra = [ImportRecord(0, value, (), line, False) for keys, line in found
                 for value in sorted(values.get(keys, ())) if value in modules]
        if extra:
            res, cells = results[rel]
            out[rel] = (replace(res, imports=[*res.imports, *extra]), cells)
    return out


def _modules(results: Iterable[str]) -> set[str]:
    from mpsready.scan.model.graph import module_of

    out = set()
    for rel in results:
        if rel.endswith(".py"):
            mod = module_of(rel)
            out.add(mod)
            if mod.startswith("src."):
                out.add(mod[4:])
    return out
