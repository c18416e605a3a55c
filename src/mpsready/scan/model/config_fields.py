"""A configuration object spread into a call passes its fields (issue 32, round 11: device values chosen through
config objects).

``Model(**config.dict())`` in ``def get_model(self, config: ModelConfig)``, where the project's ``ModelConfig`` (a
pydantic model or a dataclass) declares ``device: str = ...``, passes ``device`` to ``Model`` whatever its value: a
``device="cuda"`` default of the function the call reaches is then not what runs (the config's own value is, and
that value is judged where the config class declares it). :mod:`mpsready.scan.model.call_sites` asks this module
whether such a ``**`` argument passes a parameter.

What counts as spreading an object's fields into keywords: ``**x.dict()`` and ``**x.model_dump()`` (pydantic v1 and
v2: https://docs.pydantic.dev/latest/concepts/serialization/, ``model_dump`` "generates a dictionary representation of
the model"), ``**dataclasses.asdict(x)`` / ``**asdict(x)`` (Python 3 ``dataclasses.asdict``: "the dataclass ``obj``
converted to a dict ... each dataclass is converted to a dict of its fields") and ``**vars(x)`` / ``**x.__dict__``
(an instance's attributes). ``x`` must be a parameter of the function around the call annotated with a class the
project defines (``config: ModelConfig``, ``Optional[ModelConfig]``, ``"ModelConfig"``), and that class must declare
the field in its own body as an annotated assignment (``device: str = "cpu"`` or ``device: Literal[...]``; a base
class's fields are not followed). Anything else (an unannotated parameter, a dict built at run time, a class defined
outside the project) passes nothing, so the finding stays.
"""

from __future__ import annotations

import ast
from typing import Any

# `**x.<method>()` calls that return the object's fields as a dict (pydantic v1 `.dict()`, v2 `.model_dump()`)
_DUMPS = frozenset({"dict", "model_dump", "to_dict", "asdict"})
# `**<function>(x)` calls that do the same (dataclasses.asdict, vars)
_DUMP_FUNCTIONS = frozenset({"asdict", "vars"})
MAX_FILES = 400  # Python files searched for a class definition (bounded work on large trees)


class ConfigFields:
    """The fields a project class declares in its body, looked up by class name across the project's Python files
    (read once per name, only when a spread call needs it)."""

    def __init__(self, rels: list[str], sources: Any) -> None:
        self.rels = rels if sources is not None and len(rels) <= MAX_FILES else []
        self.sources = sources
        self._known: dict[str, frozenset[str] | None] = {}

    def of(self, name: str) -> frozenset[str] | None:
        """The annotated fields of the project's class ``name`` (None when the project defines no class of that name,
        or more than one)."""
        if name not in self._known:
            found: list[frozenset[str]] = []
            needle = f"class {name}"
            for rel in self.rels:
                text = self.sources.text(rel)
                if text is None or needle not in text:
                    continue
                tree = self.sources.tree(rel)
                for node in ast.walk(tree) if tree is not None else ():
                    if isinstance(node, ast.ClassDef) and node.name == name:
                        found.append(frozenset(st.target.id for st in node.body if isinstance(st, ast.AnnAssign)
                                               and isinstance(st.target, ast.Name)))
            self._known[name] = found[0] if len(found) == 1 else None
        return self._known[name]


def _spread_object(value: ast.expr) -> str | None:
    """The name whose fields ``**value`` spreads (``config`` in ``**config.dict()``, ``**asdict(config)``,
    ``**vars(config)``, ``**config.__dict__``), or None."""
    if isinstance(value, ast.Call) and not value.keywords:
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr in _DUMPS and not value.args and isinstance(f.value, ast.Name):
            return f.value.id
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _DUMP_FUNCTIONS and len(value.args) == 1 and isinstance(value.args[0], ast.Name):
            return value.args[0].id
    if isinstance(value, ast.Attribute) and value.attr == "__dict__" and isinstance(value.value, ast.Name):
        return value.value.id
    return None


def _annotation_class(node: ast.expr | None) -> str | None:
    """The class an annotation names: ``ModelConfig``, ``cfg.ModelConfig``, ``"ModelConfig"``,
    ``Optional[ModelConfig]`` and ``ModelConfig | None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and _annotation_class(node.value) == "Optional":
        return _annotation_class(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and right.value is None:
            return _annotation_class(left)
        if isinstance(left, ast.Constant) and left.value is None:
            return _annotation_class(right)
    return None


def _enclosing(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or n.lineno >= best.lineno:
                best = n
    return best


def expands_field(tree: ast.AST, call: ast.Call, parameter: str, fields: ConfigFields) -> bool:
    """Whether ``call`` passes ``parameter`` by spreading a configuration object that declares it (see the module
    doc). Only calls with a ``**`` argument are looked at."""
    spreads = [k.value for k in call.keywords if k.arg is None]
    objs = [o for o in map(_spread_object, spreads) if o is not None]
    if not objs or not fields.rels:
        return False
    fn = _enclosing(tree, call.lineno)
    if fn is None:
        return False
    params = {a.arg: a.annotation for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    for obj in objs:
        cls = _annotation_class(params.get(obj))
        declared = fields.of(cls) if cls else None
        if declared is not None and parameter in declared:
            return True
    return False
