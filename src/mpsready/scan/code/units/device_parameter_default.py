"""API103 ``cuda-device-literal`` for a device-named parameter whose default is a CUDA literal
(``def load(path, device="cuda")``, positional or keyword-only). The evidence names the callee its calls use
(``default_of``: the function, or the class for ``__init__``; ``method`` when calls go through an attribute;
``owner``: the defining class),
the parameter and its position after ``self``/``cls`` (``None`` for keyword-only), so the project model can
lower the finding when every call in the project passes the device (:mod:`mpsready.scan.model.call_sites`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import device_like_name, is_cuda_literal
from mpsready.scan.code.context import FileContext
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


def _owner(v: FileContext, fn: ast.FunctionDef) -> ast.ClassDef | None:
    """The class whose body defines ``fn`` directly, else ``None``: the innermost enclosing class, when ``fn`` is
    one of its statements (a function inside an ``if`` of a class body, or inside a method, has none)."""
    cls = v.classes[-1] if v.classes else None
    return cls if cls is not None and any(st is fn for st in cls.body) else None


def _callee(v, fn: ast.FunctionDef) -> tuple[str, bool, bool, str | None]:
    """(the name calls use, whether it is a method called through an attribute, whether calls pass ``self``,
    the class that defines it)."""
    cls = _owner(v, fn)
    if cls is None:
        return fn.name, False, False, None
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    if fn.name == "__init__":
        return cls.name, False, True, cls.name
    return fn.name, True, not static, cls.name


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg, default in pairs:
        lit = v.literal(default)
        if lit is None and isinstance(default, ast.Call) and (v.q(default.func) or "") == "torch.device" \
                and not default.keywords and (len(default.args) == 1 or (
                    len(default.args) == 2 and isinstance(default.args[1], ast.Constant)
                    and isinstance(default.args[1].value, int))):
            # torch.device("cuda") and torch.device("cuda", 0) (issue 32, round 4: nnUNet's compute_gaussian)
            lit = v.literal(default.args[0])  # compute_device=torch.device("cuda") (sam2's load_video_frames)
            if lit is not None and is_cuda_literal(lit) and device_like_name(arg.arg):
                v.device_defaults.add(id(default))
        if lit is not None and is_cuda_literal(lit) and device_like_name(arg.arg):
            name, method, bound, owner = _callee(v, fn)
            index = next((i for i, a in enumerate(positional) if a is arg), None)
            if index is not None and bound:
                index -= 1
            v.add(A.CUDA_DEVICE_LITERAL, default, f"parameter {arg.arg} defaults to {lit!r}",
                  evidence={"default_of": name, "method": method, "owner": owner, "parameter": arg.arg,
                            "position": index})
