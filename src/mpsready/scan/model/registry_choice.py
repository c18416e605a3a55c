"""A registered component that the default configuration selects is on the main path (issue 32, round 13).

The reach by calls (:mod:`mpsready.scan.model.call_reach`) puts a limit in a definition whose decorator may register it
(``@MODELS.register_module()``, ``@register_model("vit_tiny")``) and that nothing on the main path names in *not
verified*: a registry picks it by a string the analysis does not follow, so it never limits the headline. When a value
of the project's own configuration names it, the string is no longer unknown: ``NAME: PointTransformer`` in a YAML file
of the project, or an option's default (``--model`` with ``default="vit_tiny"``), is what the registry looks up, so the
component runs with the defaults and its limits count like any reached code's (``evidence.selected_by`` says which
value). Components no configuration value names stay *not verified*: optional parts, listed apart.

A component is named by its own name (a registry keyed by ``cls.__name__``, mmcv/mmengine's ``register_module()``) or
by a string constant its registering decorator is given (``@register("vit_tiny")``, ``register_module(name="x")``).
Only a limit in the component itself, in its ``__init__``/``forward`` or another method Python or a framework calls
by name (:func:`~mpsready.scan.model.call_reach.is_hook`), is kept: another method of a selected class still needs a
caller. YAML files over the config size bound (256 KiB) are data and are not read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

MAX_CONFIG_BYTES = 256 * 1024


def registered_names(node: ast.AST) -> set[str]:
    """The names a registry may know the definition ``node`` by: its own, and the string constants its decorators are
    given (positional or keyword)."""
    out = {getattr(node, "name", "")} - {""}
    for dec in getattr(node, "decorator_list", ()):
        if isinstance(dec, ast.Call):
            for arg in [*dec.args, *(k.value for k in dec.keywords)]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value:
                    out.add(arg.value)
    return out


class ConfigValues:
    """The string values of the project's configuration (its YAML files and its options' string defaults), read on
    the first question: value -> where it is set (``configs/model.yaml:3 (model.NAME)``, ``train.py:12 (--model)``)."""

    def __init__(self, config_files: Iterable[str], results: Mapping[str, Any], sources: Any) -> None:
        self.files, self.results, self.sources = list(config_files), results, sources
        self._values: dict[str, str] | None = None

    def where(self, names: Iterable[str]) -> str | None:
        """Where a configuration value names one of ``names`` (the first found), or None."""
        if self._values is None:
            self._values = self._read()
        return next((self._values[n] for n in sorted(names) if n in self._values), None)

    def _read(self) -> dict[str, str]:
        from mpsready.scan.model.configs import string_scalars

        out: dict[str, str] = {}
        for rel, (res, _cells) in sorted(self.results.items()):
            for s in getattr(res, "surfaces", ()) or ():
                if isinstance(s.get("default"), str) and s.get("name"):
                    out.setdefault(s["default"], f"{rel}:{s.get('line')} ({s['name']})")
        for rel in self.files:
            text = self.sources.text(rel)
            if text is None or len(text) > MAX_CONFIG_BYTES:
                continue
            for path, n in string_scalars(text, sequences=True):
                if n.value:
                    out.setdefault(n.value, f"{rel}:{n.start_mark.line + 1} ({'.'.join(path) or 'value'})")
        return out
