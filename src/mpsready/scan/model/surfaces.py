"""Configuration surfaces of one Python source: where a device, dtype or compile switch can be set without
editing code.

A surface is a plain dict (it crosses the process pool and the cache)::

    {"kind": "argparse" | "click" | "typer" | "globals" | "trainer" | "absl",
     "name": "--device" (option) or "device" (global / Trainer keyword),
     "dest": "device" (the attribute or variable the value lands in),
     "default": "cuda" | True | None | ..., "choices": ["cpu", "cuda"] or None, "line": 12}

``globals`` are module-level assignments in a script that runs a configurator over its globals
(``exec(open("configurator.py").read())``, nanoGPT's "poor man's configurator", which turns
``--device=mps`` into ``device = "mps"``). Only literal defaults are recorded.
"""

from __future__ import annotations

import ast
from typing import Any

from mpsready.scan.code.astutil import walk_spanning
from mpsready.scan.code.triggers import name_lines, substring_lines

# option names that choose a device, a dtype or compilation (the switches the outlook may print)
DEVICE_WORDS = ("device", "accelerator")
SWITCH_WORDS = ("device", "accelerator", "compile", "dtype", "precision", "cuda", "gpu", "amp", "half", "fp16",
                "bf16", "triton", "flash", "fused", "backend", "use_")


def _literal(node: ast.AST | None) -> tuple[bool, Any]:
    if node is None:
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _kw(call: ast.Call, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _option_names(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def _dest(names: list[str], call: ast.Call) -> str | None:
    ok, dest = _literal(_kw(call, "dest"))
    if ok and isinstance(dest, str):
        return dest
    longs = [n for n in names if n.startswith("--")] or [n for n in names if n.startswith("-")] or names
    if not longs:
        return None
    return longs[0].lstrip("-").replace("-", "_")


def _is_switch(dest: str | None) -> bool:
    if not dest:
        return False
    return any(w in dest.lower() for w in SWITCH_WORDS)


def _argparse(call: ast.Call) -> dict[str, Any] | None:
    names = _option_names(call)
    dest = _dest(names, call)
    ok, default = _literal(_kw(call, "default"))
    ok_action, action = _literal(_kw(call, "action"))
    # every on/off switch counts (code behind an off switch is off the main path), an option with a literal
    # string default too (code under `if 'fused' in args.opt:` is off the path when the default is 'adamw'), other
    # options only when they choose a device, a dtype or compilation
    if not dest or not (_is_switch(dest) or isinstance(default, (bool, str)) or action in ("store_true", "store_false")):
        return None
    if not ok and ok_action and action in ("store_true", "store_false"):
        default, ok = action == "store_false", True
    ok_c, choices = _literal(_kw(call, "choices"))
    flag = next((n for n in names if n.startswith("--")), names[0] if names else f"--{dest}")
    out = {"kind": "argparse", "name": flag, "dest": dest, "default": default if ok else None,
           "choices": list(choices) if ok_c and isinstance(choices, (list, tuple, set)) else None,
           "line": call.lineno, "computed": not ok and _kw(call, "default") is not None}
    if (call.end_lineno or call.lineno) > call.lineno:
        out["last"] = call.end_lineno  # a call written over several lines: a finding on any of them is at the option
    if ok_action and action in ("store_true", "store_false"):
        out["action"] = action
    return out


def _click(call: ast.Call) -> dict[str, Any] | None:
    names = [n for n in _option_names(call) if n.startswith("-")]
    if not names:
        return None
    dest = names[0].lstrip("-").split("/")[0].replace("-", "_")
    if not _is_switch(dest):
        return None
    ok, default = _literal(_kw(call, "default"))
    return {"kind": "click", "name": names[0].split("/")[0], "dest": dest, "default": default if ok else None,
            "choices": None, "line": call.lineno, "computed": False}


_ABSL = {"DEFINE_string": 1, "DEFINE_enum": 1, "DEFINE_bool": 1, "DEFINE_boolean": 1}


def _absl(call: ast.Call, attr: str) -> dict[str, Any] | None:
    """``flags.DEFINE_string("device", "cpu", ...)`` / ``DEFINE_enum(name, default, enum_values, ...)`` (absl-py's
    flags, absl/flags/_defines.py): the option ``--device``, its default and, for an enum, its allowed values."""
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return None
    dest = call.args[0].value
    ok, default = _literal(call.args[1] if len(call.args) > 1 else _kw(call, "default"))
    if not (_is_switch(dest) or isinstance(default, (bool, str))):
        return None
    choices = None
    if attr == "DEFINE_enum":
        ok_c, values = _literal(call.args[2] if len(call.args) > 2 else _kw(call, "enum_values"))
        choices = list(values) if ok_c and isinstance(values, (list, tuple)) else None
    return {"kind": "absl", "name": f"--{dest}", "dest": dest, "default": default if ok else None,
            "choices": choices, "line": call.lineno, "computed": not ok}


def _const_strings(node: ast.AST | None, names: dict[str, ast.AST]) -> list[str] | None:
    """The strings of a literal list/tuple/set, or of a module-level name bound to one (``_VALID = ['cpu', 'cuda']``)."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    ok, value = _literal(node)
    if ok and isinstance(value, (list, tuple, set, frozenset)) and value and all(isinstance(v, str) for v in value):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    return None


def _validated_choices(tree: ast.Module, text: str) -> dict[str, list[str]]:
    """Options whose value the program checks against a fixed list and rejects otherwise: ``if FLAGS.device not in
    _VALID: raise ...`` (the destination is the attribute's or the name's last word), or a validator function
    registered for an option (``flags.register_validator("device", check)``, absl-py) whose body raises when its
    parameter is not in such a list (or returns the membership test). Destination -> the allowed values: the
    option's real ``choices`` though argparse/absl never see them."""
    names: dict[str, ast.AST] = {}
    defs: dict[str, ast.FunctionDef] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            names[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.FunctionDef):
            defs[stmt.name] = stmt

    def rejected(test: ast.expr) -> tuple[str, list[str]] | None:
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn):
            left = test.left
            dest = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else None
            allowed = _const_strings(test.comparators[0], names)
            if dest and allowed:
                return dest, allowed
        return None

    out: dict[str, list[str]] = {}
    fn_checks: dict[str, list[str]] = {}  # validator function -> the list its parameter must be in
    # only the statements on lines holding `not in` can hold the check, and `register_validator` its registration
    needles = ("not in", "register_validator") if "register_validator" in text else ("not in",)
    for node in walk_spanning(tree, substring_lines(text, needles)):
        if isinstance(node, ast.If) and any(isinstance(b, ast.Raise) for b in node.body):
            found = rejected(node.test)
            if found:
                out.setdefault(found[0], found[1])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "register_validator" and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and isinstance(node.args[1], ast.Name) and node.args[1].id in defs:
            fn = defs[node.args[1].id]
            params = [a.arg for a in fn.args.args]
            for inner in ast.walk(fn):
                test = inner.test if isinstance(inner, ast.If) and any(isinstance(b, ast.Raise) for b in inner.body) \
                    else None
                found = rejected(test) if test is not None else None
                if found and params and found[0] == params[0]:
                    fn_checks[node.args[0].value] = found[1]
    out.update(fn_checks)
    return out


def _typer_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, Any]]:
    out = []
    args = fn.args.args + fn.args.kwonlyargs
    defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults) + list(fn.args.kw_defaults)
    for arg, default in zip(args, defaults):
        if not (isinstance(default, ast.Call) and isinstance(default.func, ast.Attribute)
                and default.func.attr in ("Option", "Argument")):
            continue
        if not _is_switch(arg.arg):
            continue
        ok, value = _literal(default.args[0] if default.args else _kw(default, "default"))
        names = [n for n in _option_names(default)[1 if default.args else 0:] if n.startswith("--")]
        out.append({"kind": "typer", "name": names[0] if names else "--" + arg.arg.replace("_", "-"), "dest": arg.arg,
                    "default": value if ok else None, "choices": None, "line": default.lineno, "computed": False})
    return out


def _runs_configurator(tree: ast.Module) -> bool:
    """``exec(open("configurator.py").read())`` (or any ``exec(open(...).read())``) at module level."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) \
                and stmt.value.func.id == "exec" and stmt.value.args:
            inner = stmt.value.args[0]
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "read":
                return True
    return False


def _trainer(call: ast.Call) -> list[dict[str, Any]]:
    out = []
    for k in call.keywords:
        if k.arg in ("accelerator", "gpus", "devices", "precision", "strategy"):
            ok, value = _literal(k.value)
            out.append({"kind": "trainer", "name": k.arg, "dest": k.arg, "default": value if ok else None,
                        "choices": None, "line": k.value.lineno, "computed": not ok})
    return out


_DEVICE_NAMES = {"cpu", "cuda", "mps", "auto", "gpu", "xpu", "cuda:0"}
_DEVICE_SINKS = {"device", "accelerator", "map_location"}


def is_device_option(surface: dict[str, Any]) -> bool:
    """Whether an option chooses the device (issue 23): its ``choices`` name a device (``{cuda,cpu,mps}``), or its
    destination's last word is ``device``/``accelerator`` (``--device``, ``--train_device``, ``--device_type``),
    or its value flows in the same file into ``torch.device(...)``, ``.to(...)`` or a ``device=``/``accelerator=``
    keyword (``flows``, filled by :func:`collect`). Never an option whose default is a number, nor one whose
    name only starts with ``device`` (``--device-batch-size``, ``--devices``: a count)."""
    choices = surface.get("choices")
    if choices:
        return any(isinstance(c, str) and c.lower() in _DEVICE_NAMES for c in choices)
    default = surface.get("default")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return False
    words = [w for w in str(surface.get("dest") or "").lower().replace("-", "_").split("_") if w]
    if words and (words[-1] in ("device", "accelerator") or words[-2:] == ["device", "type"]):
        return True
    return bool(surface.get("flows")) and (default is None or isinstance(default, str))


def _device_sinks(tree: ast.Module, text: str) -> set[str]:
    """Names and attribute names (``args.dev`` -> ``dev``) given to ``torch.device(...)``, ``.to(...)`` or a
    ``device=``/``accelerator=``/``map_location=`` keyword anywhere in the module: where option values flow
    (only the statements on lines naming a sink are entered)."""
    out: set[str] = set()

    def note(node: ast.AST) -> None:
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Name):
            out.add(node.id)

    for node in walk_spanning(tree, name_lines(text, ("device", "to", *sorted(_DEVICE_SINKS)))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("device", "to") and node.args:
            note(node.args[0])
        for k in node.keywords:
            if k.arg in _DEVICE_SINKS:
                note(k.value)
    return out


def collect(tree: ast.Module, text: str) -> list[dict[str, Any]]:
    """Every configuration surface of one module (see the module doc), in source order. An argparse option whose
    value the module passes to a device sink carries ``"flows": True`` (:func:`is_device_option`)."""
    if not any(w in text for w in ("add_argument", "click", "typer", "exec(", "Trainer", "DEFINE_")):
        return []
    out: list[dict[str, Any]] = []
    if "exec(" in text and _runs_configurator(tree):
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                ok, value = _literal(stmt.value)
                if (not ok or isinstance(value, (str, bool, int, float))) and _is_switch(stmt.targets[0].id):
                    name = stmt.targets[0].id
                    out.append({"kind": "globals", "name": name, "dest": name, "default": value if ok else None,
                                "choices": None, "line": stmt.lineno, "computed": not ok})
    if not any(w in text for w in ("add_argument", "click", "typer", "Trainer", "DEFINE_")):
        return out
    # a walk over the statements naming a call it looks for; every function definition when typer is named
    lines = None if "typer" in text else name_lines(text, ("add_argument", "option", "Trainer", *_ABSL))
    for node in walk_spanning(tree, lines):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr == "add_argument":
                s = _argparse(node)
                if s:
                    out.append(s)
            elif attr == "option" and isinstance(node.func.value, ast.Name) and node.func.value.id == "click":
                s = _click(node)
                if s:
                    out.append(s)
            elif attr == "Trainer":
                out += _trainer(node)
            elif attr in _ABSL:
                s = _absl(node, attr)
                if s:
                    out.append(s)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Trainer":
            out += _trainer(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "typer" in text:
            out += _typer_params(node)
    out.sort(key=lambda s: s["line"])
    if out and "not in" in text and "raise" in text:
        validated = _validated_choices(tree, text)
        for s in out:
            if s["kind"] in ("argparse", "absl") and s["dest"] in validated and not s.get("choices"):
                s["choices"] = validated[s["dest"]]
                s["validated"] = True
    if any(s["kind"] in ("argparse", "absl") for s in out):
        sinks = _device_sinks(tree, text)
        for s in out:
            if s["kind"] in ("argparse", "absl") and s["dest"] in sinks:
                s["flows"] = True
    return out


def flag_text(surface: dict[str, Any], value: Any) -> str:
    """How a user sets ``surface`` to ``value`` on the command line: ``--device mps``, ``--device=mps`` for
    configurator globals, ``--no-compile``-style flags are not invented (a store_true is left off)."""
    shown = value if isinstance(value, str) else repr(value)
    if surface["kind"] in ("globals", "absl"):
        return f"--{surface['name'].lstrip('-')}={shown}"
    if surface["kind"] == "trainer":
        return f"Trainer({surface['name']}={value!r})"
    return f"{surface['name']} {shown}"
