"""The NaN watch's propagation rule (issue 31) and its reading of every dtype and layout (issue 33 item 7), mixed
into :class:`mpsready.numerics.watch.OpWatch`.

A result made non-finite from finite inputs is a :class:`Candidate` until a tensor carrying its values is used by
an op that computes a non-finite result from it (then it is the watch's ``first``, with ``propagated_to``), or
masked (a finite result of where, nan_to_num, indexing, an overwrite: not a finding, counted in ``masked``);
never read again, it is reported at the end. A std/var over no more elements than its correction is NaN by
definition: a note (``degenerate``, NUM305 info), and what it reaches is not reported.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

MAX_CANDIDATES = 16  # non-finite results from finite inputs waiting to be used (propagated) or masked
MAX_NOTES = 10  # degenerate reductions kept (info)
# Reductions with a correction (Bessel's): over N elements per output with correction c, N - c <= 0 degrees of
# freedom give NaN by definition (aten/src/ATen/native/ReduceOps.cpp std_var_kernel: "degrees of freedom is <= 0",
# PyTorch 2.0-2.13): the value of std() of one element, not an op going wrong.
DOF = frozenset({"aten::std.correction", "aten::var.correction", "aten::std_mean.correction",
                  "aten::var_mean.correction", "aten::std.dim", "aten::var.dim", "aten::std", "aten::var",
                  "aten::std_mean.dim", "aten::var_mean.dim", "aten::std_mean", "aten::var_mean"})
# Ops that drop the values they do not select: a non-finite value they leave out is masked, not used
# (where, nan_to_num, masked_fill, indexing, an overwrite).
MASKING = frozenset({"aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther", "aten::where.Scalar",
                      "aten::nan_to_num", "aten::nan_to_num_", "aten::masked_fill.Scalar", "aten::masked_fill_.Scalar",
                      "aten::masked_fill.Tensor", "aten::masked_fill_.Tensor", "aten::index.Tensor",
                      "aten::index_select", "aten::masked_select", "aten::gather", "aten::take", "aten::index_put_",
                      "aten::index_put", "aten::_index_put_impl_", "aten::copy_", "aten::fill_.Scalar",
                      "aten::zero_", "aten::masked_scatter_", "aten::masked_scatter"})
# Ops that read no value of their tensor inputs (shape, dtype and device only): neither a use nor a mask.
SHAPE_ONLY = frozenset({"aten::ones_like", "aten::zeros_like", "aten::empty_like", "aten::full_like",
                         "aten::new_empty", "aten::new_zeros", "aten::new_ones", "aten::new_full",
                         "aten::empty_strided", "aten::rand_like", "aten::randn_like", "aten::randint_like",
                         "aten::_local_scalar_dense", "aten::is_nonzero", "aten::isnan", "aten::isinf",
                         "aten::isfinite", "aten::isposinf", "aten::isneginf"})


class Candidate:
    """A non-finite result made from finite inputs, not yet a finding: it becomes one when a later op uses one of
    the tensors carrying its values and its result is non-finite (propagation), or at the end of the run if
    nothing masked it; it is dropped when it was masked (:data:`MASKING`, or a finite result of an op that read
    it) and never used. ``refs``: id -> weak reference of the tensors carrying its values. ``info``: a degenerate
    reduction (std of one value): its NaN is followed so that what it reaches is not reported either."""

    __slots__ = ("doc", "refs", "masked", "info")

    def __init__(self, doc: dict[str, Any] | None, t: Any, info: bool = False):
        self.doc = doc
        self.refs: dict[int, Any] = {id(t): weakref.ref(t)}
        self.masked = 0
        self.info = info

    def holds(self, x: Any) -> bool:
        r = self.refs.get(id(x))
        return r is not None and r() is x

    def add(self, x: Any) -> None:
        self.refs[id(x)] = weakref.ref(x)


def readable(t: Any, torch: Any, upcast: dict) -> Any:
    """``t`` as a dense tensor whose sum and ``isfinite`` exist: sparse layouts by their stored values (the rest are
    zeros), float8 and complex32 cast up (:attr:`OpWatch._upcast`). Raises when there is no such reading."""
    layout = t.layout
    if layout is not torch.strided:
        if t.is_nested:
            t = t.values()
        elif layout is torch.sparse_coo:
            t = t._values()
        else:  # sparse_csr/csc/bsr/bsc: the stored values
            t = t.values()
    to = upcast.get(t.dtype)
    return t.to(to) if to is not None else t


def tensor_summary(t: Any) -> dict[str, Any]:
    """``{"shape", "dtype", "min", "max", "mean", "nan", "inf"}`` of a tensor (float64 over finite elements;
    min/max/mean ``None`` when no element is finite). One copy to the CPU; no element is returned."""
    import torch

    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        try:
            x = t.detach()
            if x.layout is not torch.strided:
                x = readable(x, torch, {})
            if x.dtype is torch.complex32:
                x = x.to(torch.complex64)
            if x.is_complex():
                x = torch.view_as_real(x)
            x = x.to("cpu").reshape(-1).to(torch.float64)
        except Exception:  # no kernel reads this dtype or layout: shape and dtype only
            return {"shape": [int(s) for s in t.shape], "dtype": str(t.dtype).replace("torch.", ""), "min": None,
                    "max": None, "mean": None, "nan": None, "inf": None, "unreadable": True}
        fin = torch.isfinite(x)
        nan = int(torch.isnan(x).sum())
        inf = int(torch.isinf(x).sum())
        f = x[fin] if (nan or inf) else x
        stats: dict[str, float | None] = {"min": None, "max": None, "mean": None}
        if f.numel():
            stats = {"min": float(f.min()), "max": float(f.max()), "mean": float(f.mean())}
    return {"shape": [int(s) for s in t.shape], "dtype": str(t.dtype).replace("torch.", ""), **stats,
            "nan": nan, "inf": inf}


def all_floating(torch: Any) -> set:
    """Every floating and complex dtype this torch defines (float4 and float8 variants included)."""
    found = set()
    for n in dir(torch):
        d = getattr(torch, n, None)
        if isinstance(d, torch.dtype) and (d.is_floating_point or d.is_complex):
            found.add(d)
    return found


def frame_dict(frame: Any) -> dict[str, Any] | None:
    return frame.to_dict() if frame is not None and hasattr(frame, "to_dict") else None


def has_nan(t: Any) -> bool:
    """Whether ``t`` holds a NaN (an unreadable ``t``: False, it was counted when it was read)."""
    import torch

    try:
        if t.layout is not torch.strided or t.dtype.itemsize == 1 or t.dtype is torch.complex32:
            t = readable(t, torch, {t.dtype: torch.float32 if not t.dtype.is_complex else torch.complex64})
        return bool(torch.isnan(t).any())
    except Exception:
        return False


TENSOR_STR: str | None = None


def printing() -> bool:
    """Whether the current call comes from PyTorch's tensor printing (torch/_tensor_str.py, the loaded module's
    own file): its reads of a NaN are neither a use nor a mask."""
    global TENSOR_STR
    if TENSOR_STR is None:
        import torch._tensor_str as ts

        TENSOR_STR = ts.__file__ or ""
    f: FrameType | None = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename == TENSOR_STR:
            return True
        f = f.f_back
    return False


class Propagation:
    """The candidates' bookkeeping of :class:`~mpsready.numerics.watch.OpWatch` (module docstring); the watch sets
    the attributes declared here."""

    first: dict[str, Any] | None
    notes: list[dict[str, Any]]
    step: int
    locate: Callable[[], Any]
    _cands: list[Candidate]
    _carry: frozenset
    _floats: frozenset
    _guard: tuple
    _Tensor: Any

    if TYPE_CHECKING:  # the host's methods (OpWatch's), declared for the type checker only
        def _finite(self, x: Any) -> bool: ...

        def _stage(self) -> str | None: ...

    def _candidate(self, c: Candidate) -> None:
        cands = self._cands
        if len(cands) >= MAX_CANDIDATES:
            cands[:] = [x for x in cands if not x.masked and not x.info] or cands[1:]
            if len(cands) >= MAX_CANDIDATES:  # none masked: the oldest stands (conservative)
                self.first = cands[0].doc
                cands.clear()
                return
        cands.append(c)

    def _explained(self, floating: list, written: set) -> bool:
        """Whether every non-finite input is carried by a followed candidate (an info one, or one that a use has
        just confirmed): the result adds nothing to report."""
        bad = [x for x in floating if id(x) not in written and not self._finite(x)]
        return bool(bad) and all(any(c.holds(x) for c in self._cands) for x in bad)

    def _follow(self, name: str, args: Any, kwargs: Any, out: Any, inplace: bool, view: bool, frame: Any) -> None:
        """A call while candidates wait: a use of a tensor carrying one either propagates it (a non-finite result
        of an op that computes), carries it on (a non-finite result of a view, copy or selection), or masks it (a
        finite result). Calls that read no value, and tensor printing, are neither."""
        Tensor = self._Tensor
        ins: list[Any] = []
        _flat(args, ins, Tensor)
        if kwargs:
            _flat(kwargs.values(), ins, Tensor)
        hit = [c for c in self._cands if any(c.holds(x) for x in ins)]
        if not hit or name in SHAPE_ONLY or printing():
            return
        if isinstance(out, Tensor):
            outs = [out]
        elif isinstance(out, (tuple, list)):
            outs = [t for t in out if isinstance(t, Tensor)]
        elif inplace and ins:
            outs = [ins[0]]
        else:
            outs = []
        floats = self._floats
        outs = [t for t in outs if t.dtype in floats]
        if not outs:
            return  # a comparison, an index, a scalar read: neither a use of the value nor a mask
        dis, nof = self._guard
        with dis(), nof():
            bad = [t for t in outs if not self._finite(t)]
        carry = view or name in self._carry
        for c in hit:
            if not bad:
                c.masked += 1
            elif c.info or carry:
                for t in bad:
                    c.add(t)
            else:  # used: the first candidate this op reaches is the finding
                self.first = {**(c.doc or {}), "propagated_to": {"op": name,
                                                                 "location": frame_dict(frame or self.locate())}}
                self._cands = [x for x in self._cands if x.info]
                return

    def _degenerate(self, name: str, args: Any, kwargs: Any, t: Any, frame: Any) -> bool:
        """A std/var (or *_mean) over no more elements than its correction: NaN by definition. Kept once per op
        and line as an info note (not a NUM301), and its NaN followed so that what it reaches is not reported."""
        x = args[0] if args and isinstance(args[0], self._Tensor) else None
        if x is None or not t.numel():
            return False
        correction = kwargs.get("correction") if kwargs else None
        unbiased = kwargs.get("unbiased") if kwargs else None
        for a in args[1:]:
            if a.__class__ is bool:
                unbiased = a
        c = float(correction) if correction is not None else (0.0 if unbiased is False else 1.0)
        per = x.numel() / t.numel()
        if per - c > 0:
            return False
        frame = frame or self.locate()
        loc = frame_dict(frame)
        if len(self.notes) < MAX_NOTES and not any(n["op"] == name and n["location"] == loc for n in self.notes):
            self.notes.append({"op": name, "location": loc, "stage": self._stage(), "step": self.step,
                               "elements": int(per), "correction": c,
                               "reason": f"{int(per)} element(s) per result with correction {c:g}: "
                                         f"{per - c:g} degrees of freedom, NaN by definition"})
        self._candidate(Candidate(None, t, info=True))
        return True


def _flat(values: Any, out: list, Tensor: Any) -> None:
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(w for w in v if isinstance(w, Tensor))
