"""DTY102 ``numpy-float64-to-tensor``: a tensor made from a NumPy float64 array (NumPy's default dtype) that lands on a
device before any cast: ``torch.from_numpy(a).to(device)`` (through any chain of calls without a cast) and
``torch.tensor(a, device=...)`` without ``dtype=``. When the array is the result of a project function or a
parameter of the enclosing function, the place is recorded (``f64_sinks``, ``param_sinks``) for the project
model to join across files (:mod:`mpsready.scan.model`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import CAST_METHODS, TENSOR_FROM_ARRAY, kwarg, project_callee, receiver
from mpsready.scan.code.result import F64Sink, ParamSink
from mpsready.scan.code.units import on
from mpsready.scan.rules import dtypes as T


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr in CAST_METHODS and not node.args:
        moved = receiver(node)
        if isinstance(moved, ast.Call):
            # `X.to(dev).float()`: the visitor meets the cast before the move it follows (outer calls first); the
            # move's finding says so, since migrate can then move the cast before it
            v.casts_after.add(id(moved))
    if attr == "to":
        has_dtype = any(_dtype_like(v, a) for a in node.args) or any(k.arg == "dtype" for k in node.keywords)
        if not has_dtype:
            _check_chain(v, node)
    elif name in TENSOR_FROM_ARRAY and node.args and kwarg(node, "dtype") is None \
            and kwarg(node, "device") is not None:
        _check_source(v, node.args[0], name, node)


def _dtype_like(v, arg: ast.expr) -> bool:
    """A ``.to()`` argument that is a dtype: a ``torch`` dtype, or a name or attribute whose last word is ``dtype``
    (``self.torch_dtype``, ``weight_dtype``, ``cfg.dtype``): ``.to(self.torch_dtype).to(device)`` casts before it
    moves (issue 32, round 9; before, the cast was read as a second move and both were DTY102)."""
    if v.is_dtype(arg):
        return True
    name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else ""
    return name.lower().endswith("dtype")


def _check_chain(v, to_call: ast.Call) -> None:
    """torch.from_numpy(<float64 array>)....to(device) with no cast before the move."""
    recv = receiver(to_call)
    while isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute):
        if (v.q(recv.func) or "") in TENSOR_FROM_ARRAY:
            break
        if recv.func.attr in CAST_METHODS or (recv.func.attr == "to" and (
                any(_dtype_like(v, a) for a in recv.args) or any(k.arg == "dtype" for k in recv.keywords))):
            return
        recv = recv.func.value
    if not isinstance(recv, ast.Call):
        return
    name = v.q(recv.func) or ""
    if name not in TENSOR_FROM_ARRAY or not recv.args or kwarg(recv, "dtype") is not None:
        return
    _check_source(v, recv.args[0], name, to_call)


def _check_source(v, src: ast.expr, name: str, at: ast.Call) -> None:
    """The array a tensor is made from, where the tensor then lands on a device before any cast: a NumPy
    float64 array here is DTY102 now; the result of a project function, or a parameter, is recorded for the
    engine to join across files (the function returns float64 / a caller passes float64)."""
    if (isinstance(src, ast.Name) and src.id in v.np_f64_vars) or v.is_numpy_f64(src):
        label = src.id if isinstance(src, ast.Name) else "a NumPy array"
        cast = id(at) in v.casts_after
        v.add(T.NUMPY_FLOAT64, at, f"{name}({label}) is float64 (NumPy's default) and is moved to a device "
              "before any cast: MPS refuses float64", evidence={"cast_after_move": True} if cast else None)
        return
    if (v.mps_excluded or v.branches and v.mps_excluded_by_name()) and not v.mac_enters_mps_excluded():
        # issue 32, round 7: a branch an MPS tensor never takes (the `else:` of `if get_device() == "mps":`) puts no
        # float64 on MPS, as for the finding above (context.add: `mps_excluded`); nothing to join across files
        return
    if not isinstance(src, ast.Name):
        callee = project_callee(src)
        if callee is not None:
            v.result.f64_sinks.append(F64Sink(callee, at.lineno, at.col_offset + 1, name))
        return
    if src.id in v.call_vars:
        v.result.f64_sinks.append(F64Sink(v.call_vars[src.id], at.lineno, at.col_offset + 1, name))
        return
    if v.functions:
        fn = v.functions[-1]
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        if src.id in params:
            v.result.param_sinks.append(ParamSink(fn.name, params.index(src.id), at.lineno, at.col_offset + 1, name))
