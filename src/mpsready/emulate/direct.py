"""The direct path of the emulated device: a two-tensor call whose plan is known runs below the dispatch mode.

The device function mode (:mod:`~mpsready.emulate.device`) hands each call of two resident tensors, positional
(``x + y``, ``torch.add(x, y)``, ``x.mul(y)``), to :func:`binary`. On a first call per (torch function, dtypes,
grad mode) it learns whether the function's only aten call is the aten op of its own name on the same two tensors
and took the dispatch mode's plan that only counts (:attr:`~mpsready.emulate.aten.Plan.quick`). Once learnt, the
call runs with the Python key off (``torch._C._DisableTorchDispatch``: no dispatch mode sees it, autograd above it
records the graph as before) and what the dispatch mode's inline path would have done is done here: the count and
time on the plan's record and the result's residence mark (docs/emulation.md, "The direct path"). The learnt
entries live on the dispatch mode (``MPSDispatch.direct``, ``MPSDispatch.indirect``), dropped with its plans.
"""

from __future__ import annotations

import time
from types import BuiltinFunctionType, MethodDescriptorType, WrapperDescriptorType
from typing import Any

import torch

from mpsready.emulate import residence
from mpsready.emulate.aten import SIZED as _SIZED  # the inline path's size guard (emulate/dispatch.py)

_Tensor = torch.Tensor
_STRIDED = torch.strided
_MARKS = residence._MARKS
_REFS = _MARKS._refs
_ref = residence._ref
_perf = time.perf_counter
_grad_enabled = torch.is_grad_enabled
_stack_len = torch._C._len_torch_dispatch_stack
_no_python_dispatch = torch._C._DisableTorchDispatch  # the Python key off for one call: no dispatch mode sees it
# torch functions written in C++ (torch.add, Tensor.add, Tensor.__add__): the binding calls its one aten op, which
# reaches the modes as itself unless it is composite-implicit (then as its callees, of other names); a function
# written in Python (Tensor.__floordiv__) makes calls of its own that this module does not see
_C_FUNCTIONS = (BuiltinFunctionType, MethodDescriptorType, WrapperDescriptorType)
# the tensor classes whose calls may run with the Python key off (a subclass may have a __torch_dispatch__ of its
# own, which the Python key serves)
_PLAIN = frozenset({torch.Tensor, torch.nn.Parameter})
# Tensor operators whose C++ method calls the aten op of another name (python_variable_methods.cpp, 2.0-2.13)
_OPERATOR_OPS = {"__add__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_", "__mul__": "mul",
                 "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_"}
_TRIES = 3  # first calls that learnt nothing (a plan that does more than count) before the modes take it for good


def hinted(func, a, b):
    """``func(a, b)`` with ``a`` named resident in the hint for the call (``residence._Marks.hint``): the dispatch
    mode's resident check of the aten call reads it instead of the residence map."""
    _MARKS.hint = a
    try:
        return func(a, b)
    finally:
        _MARKS.hint = None


def learnt(mode, handle, func, args, ins):
    """An aten call of two tensors, the first the hinted one, made while :func:`binary` learns: ``mode``'s own
    handling of it (``handle``: its ``__torch_dispatch__`` as written; the learning off meanwhile, so that nothing
    is noted twice), noted with the plan it took where that is a plan of the inline path that only counts."""
    learn = _MARKS.learn
    _MARKS.learn = None
    try:
        out = handle(mode, func, None, args, None)
    finally:
        _MARKS.learn = learn
    if learn is not None:
        q = mode.quick.get(id(func))
        t, u = ins
        plan = None
        if q is not None and t.layout is _STRIDED and u.layout is _STRIDED:
            plan = q[1].get((t.dtype, u.dtype, _grad_enabled()))
        learn.append((plan, q[0], u, out) if plan is not None and plan.quick else None)
    return out


def binary(mode, func, a, b) -> Any:
    """``func(a, b)`` of two resident tensors on ``mode`` (the installed ``MPSDispatch``; see the module
    docstring). Only for plain tensors and parameters, with no other dispatch mode on the stack, and none of what
    the inline path leaves to ``MPSDispatch._dispatch`` (a factory, an MPS kernel, a compiled region, a deadline,
    CPU operands); the sparse and size (``aten.SIZED``) guards as the inline path's. Anything else runs as
    before, with ``a`` named in the hint. The numerics watch (``emu.numerics``, ``mpsready run``'s NaN check and
    shapes per line) is handed the call as the inline path hands it: same op name, arguments, result and depth,
    with the Python key off, so that no mode sees its reduction (the dispatch mode is on its stack here)."""
    emu = mode.emu
    if (func in mode.indirect or a.__class__ not in _PLAIN or b.__class__ not in _PLAIN or _stack_len() != 1
            or emu.creating or emu.cpu_operands or emu.inside_kernel or emu.compiling or emu.deadline is not None):
        return hinted(func, a, b)
    key = (func, a.dtype, b.dtype, _grad_enabled())
    entry = mode.direct.get(key)
    if entry.__class__ is tuple:
        plan, info, sized = entry
        if a.layout is not _STRIDED or b.layout is not _STRIDED or (
                sized and (a.numel() > _SIZED or b.numel() > _SIZED)):
            return hinted(func, a, b)
        with _no_python_dispatch():
            t0 = _perf()
            out = func(a, b)
            seconds = _perf() - t0
            rec = plan.record
            rec.calls += 1
            rec.seconds += seconds
            if isinstance(out, _Tensor) and not mode.refused.get(out.dtype, True):
                refs = _REFS
                refs[id(out)] = _ref(out)  # residence._Marks.__setitem__, inline
                if len(refs) > _MARKS._limit:
                    _MARKS._sweep()
                watch = emu.numerics
                if watch is not None:  # the numerics watch, as the inline path hands it the call (dispatch.py),
                    # with the Python key still off: no mode sees its reduction, and it needs no guards (watch.py)
                    watch.observe(info.name, info.inplace, (a, b), {}, out, mode.depth, info.view, (a, b))
                return out
        from mpsready.emulate.dispatch import land

        land(emu, out, info.name, (a, b), 0, mode.refused)
        watch = emu.numerics
        if watch is not None:
            with _no_python_dispatch():
                watch.observe(info.name, info.inplace, (a, b), {}, out, mode.depth, info.view, (a, b))
        return out
    tries = entry or 0
    if tries >= _TRIES:
        return hinted(func, a, b)
    learn: list = []
    _MARKS.learn = learn
    _MARKS.hint = a
    try:
        out = func(a, b)
    finally:
        _MARKS.hint = _MARKS.learn = None
    if len(learn) != 1 or learn[0] is None:
        if len(learn) > 1 or any(n is not None for n in learn):
            mode.indirect.add(func)  # more than one aten call, or a call of another kind
        else:
            mode.direct[key] = tries + 1
        return out
    plan, info, u, res = learn[0]
    name = info.name[6:].split(".", 1)[0]  # aten::add.Tensor -> add
    fname = getattr(func, "__name__", "")
    if u is b and res is out and isinstance(out, _Tensor) and isinstance(func, _C_FUNCTIONS) and \
            name == _OPERATOR_OPS.get(fname, fname):
        mode.direct[key] = (plan, info, info.sized)
    else:
        mode.indirect.add(func)
    return out
