"""What the emulated device's dispatch mode keeps per aten op and per kind of call (:mod:`mpsready.emulate.dispatch`):
the op's facts read once from its schema and tags (:class:`OpInfo`), the memoised plan of one kind of call
(:class:`Plan`), the dtypes key of a call and the results' residence marks. Kept apart from the mode itself, as
PyTorch's FakeTensorMode keeps its dispatch cache keys apart (torch/_subclasses/fake_tensor.py)."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from mpsready.emulate import residence
from mpsready.emulate.widen import mps_layout

_Tensor = torch.Tensor
_MARKS = residence._MARKS
_STRIDED = torch.strided
_INT_MAX = 2**31 - 1
# a call with a tensor of more than this many elements is judged afresh where the judge reads sizes (``sized``):
# past it a tensor may take more than 2**32 bytes (16-byte elements), the bound of the size regime and of
# INT_MAX dimensions (mps_dtype_checks.yaml ``bytes_gt``, ``dim_gt``)
SIZED = 2**28
# aten ops that move data off the device when given device=cpu (Tensor.cpu(), .to("cpu"))
_COPY_OPS = frozenset({"aten::_to_copy", "aten::to.device", "aten::to.dtype_layout"})
_POINTWISE = getattr(torch.Tag, "pointwise", None)


def op_name(func) -> str:
    """``aten::add.Tensor``; an overload named ``default`` goes without its suffix (``aten::relu``)."""
    name = func._schema.name
    ov = func._overloadname
    return name if ov == "default" else f"{name}.{ov}"


def is_view(func) -> bool:
    """Whether every result of ``func`` aliases an input without writing it (its schema's alias annotations)."""
    rets = func._schema.returns
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


class OpInfo:
    """One aten overload as the dispatch mode reads it on every call, computed on its first call (its name,
    C++ callable, schema facts and tags) and filled in as the judge is first asked about it (``wants``,
    ``dtype_only``, ``sized``); ``plans``: its memoised :class:`Plan` per kind of call."""

    __slots__ = ("name", "view", "schema_args", "pointwise", "inplace", "wants", "dtype_only", "plans", "copy",
                 "sized", "op")

    def __init__(self, func):
        self.name = op_name(func)
        # the overload's C++ callable (OpOverload.__call__ forwards to it); a result layout of MPS's own (widen.py)
        self.op = mps_layout(self.name, getattr(func, "_op", func))
        self.view = is_view(func)
        self.schema_args = [a.name for a in func._schema.arguments]
        # the installed release's tags (native_functions.yaml): the pointwise set is the same in 2.3-2.14
        self.pointwise = _POINTWISE is not None and _POINTWISE in func.tags
        self.inplace = bool(func._schema.arguments) and func._schema.arguments[0].alias_info is not None \
            and func._schema.arguments[0].alias_info.is_write
        self.copy = self.name in _COPY_OPS
        self.wants: frozenset[str] | None = None  # the extra facts the judge's kernel checks read (first call)
        self.dtype_only: bool | None = None  # the judge reads only dtypes of this op (Judge.reads_only_dtypes)
        self.sized = False  # a memoised call must also have no tensor of more than INT_MAX elements (dim_max)
        # per (grad mode, inside a composite): dtype or tuple of dtypes of the tensor arguments -> Plan
        self.plans: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})


class Plan:
    """What one kind of call (op, argument dtypes, grad mode, depth) was judged, and what carrying it out
    needs, computed on its first call: the judgement ``j``, the first dtype's name, whether the call is run as
    an expanded composite, the op to match against the wrong-result advisories (or None) and the emulator's
    record of it (``record``: filled on the first call that completes)."""

    __slots__ = ("j", "dtype", "expand", "advise", "record", "fails", "fallback", "unknown", "memo", "quick")

    def __init__(self, j, dtype, expand: bool, advise: str | None, memo: bool = True):
        self.j, self.dtype, self.expand, self.advise = j, dtype, expand, advise
        self.fails, self.fallback, self.unknown = j.fails, j.outcome == "fallback", j.outcome == "unknown"
        self.record: Any = None  # the OpRecord of its completed calls (session.py)
        self.memo = memo  # False: the judgement depends on the composite that made the call (Judge.own_variant)
        # a call of this kind only counts on ``record`` and marks its results (MPSDispatch.__torch_dispatch__'s
        # inline path): set on the first completed call of a plan that neither fails, falls back, expands, nor
        # is matched with a wrong-result advisory
        self.quick = False


def dtype_key(ins: Sequence, sized: bool) -> tuple | None:
    """The memo key of a call with several tensor arguments: their dtypes in order; None when one is not
    strided (sparse) or, where the judge reads ``dim_max`` (``sized``), has more than ``SIZED`` elements."""
    for t in ins:
        if t.layout is not _STRIDED or (sized and t.numel() > SIZED):
            return None
    return tuple([t.dtype for t in ins])


def mark_all(out) -> None:
    if isinstance(out, _Tensor):
        _MARKS[out] = True
    elif isinstance(out, (list, tuple)):
        for t in out:
            if isinstance(t, _Tensor):
                _MARKS[t] = True
