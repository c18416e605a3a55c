"""Helpers of the dispatch mode (emulate/dispatch.py) for what the emulated device computes or records beyond the
judgement: a call whose dtype the target's MPS kernel has but this CPU's kernel does not dispatch (computed on a
widened dtype), and how Inductor's Metal code generation meets a call of a compiled region (its kind, with the
Welford kinds of ``mpsready.ops.inductor``)."""

from __future__ import annotations

import re

import torch

from mpsready.ops import inductor

_Tensor = torch.Tensor
_REDUCTION = getattr(torch.Tag, "reduction", None)
_ONE_THREADGROUP = 1024  # Metal's max threads per threadgroup: a longer reduction is multistage in Inductor
CPU_DISPATCH_GAP = re.compile(r'^"\w+_cpu" not implemented for \'(Bool|Byte|Char|Short|Int|Long|UInt16|UInt32|UInt64)\'$')


def widened(op, args, kwargs):
    """A call the target's MPS kernel runs on an integer (or bool) dtype that this CPU's kernel does not dispatch
    (AT_DISPATCH: ``"histogram_cpu" not implemented for 'Int'``): computed with those tensors as float64 (exact for
    integers up to 2**53) and float64 results cast back to the first such tensor's dtype (the dtype the kernel
    gives its result: histc returns its input's). Only the values are emulated: the judgement (the kernel exists
    for that dtype on the target) was made before."""
    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        first = []

        def up(a):
            if isinstance(a, _Tensor) and not a.is_floating_point() and not a.is_complex():
                first.append(a.dtype)
                return a.to(torch.float64)
            if isinstance(a, (list, tuple)):
                return type(a)(up(x) for x in a)
            return a
        wargs = tuple(up(a) for a in args)
        wkwargs = {k: up(v) for k, v in kwargs.items()}
        out = op(*wargs, **wkwargs)
        if not first:
            return out

        def down(t):
            if isinstance(t, _Tensor) and t.dtype is torch.float64:
                return t.to(first[0])
            return t
        return type(out)(down(t) for t in out) if isinstance(out, (list, tuple)) else down(out)


def welford_call_kind(name: str, ins, args) -> str | None:
    """The Welford kind of a call of a compiled region (``ops/inductor.py``), or None for other ops (and for a
    batch norm in eval mode, which reduces nothing)."""
    base = name.split(".", 1)[0]
    if base not in inductor.WELFORD_OPS or not ins:
        return None
    geometry = inductor.welford_geometry(base, tuple(ins[0].shape), tuple(args))
    return None if geometry is None else inductor.welford_kind(*geometry)


def compiled_kind(info, func, ins, args=()) -> str:
    """How Inductor's Metal code generation meets a call of a compiled region (Judge.compile_region): ``view``,
    ``pointwise``, a Welford reduction's kind (``ops/inductor.py`` ``welford_kind``: variances, standard deviations,
    layer/group/training batch norms), ``reduction`` (the ``reduction`` tag, over at most one threadgroup's 1024
    elements), ``long_reduction`` (more: a multistage reduction) or ``other``."""
    if info.view:
        return "view"
    if info.pointwise:
        return "pointwise"
    kind = welford_call_kind(info.name, ins, args)
    if kind is not None:
        return kind
    if _REDUCTION is not None and _REDUCTION in func.tags:
        return "reduction" if not ins or ins[0].numel() <= _ONE_THREADGROUP else "long_reduction"
    return "other"


# ops whose MPS kernel allocates a C-contiguous result where this CPU's kernel returns another layout: ``nonzero``
# (aten/src/ATen/native/mps/operations/Indexing.mm: ``resize_output(out_, {total_nonzero, nDim})`` since PR #91616;
# the CPU's nonzero_out_cpu returns it Fortran-contiguous, strides (1, n): TensorAdvancedIndexing.cpp, cited in
# PR #170181). So ``x.nonzero().view(-1)`` works on a Mac where the CPU raises "view size is not compatible"
# (pytorch#170175, 2.10; the fix PRs #170181 (closed) and #193382 (open, 2026-08) ship in no release: every
# shipped release 2.3-2.14 keeps the contiguous result)
_C_CONTIGUOUS_RESULTS = frozenset({"aten::nonzero"})


def mps_layout(name: str, op):
    """The callable the dispatch mode computes ``name`` with: ``op`` itself, or for an op of
    ``_C_CONTIGUOUS_RESULTS`` one whose result is made C-contiguous as MPS's kernel makes it."""
    if name not in _C_CONTIGUOUS_RESULTS:
        return op

    def contiguous(*args, **kwargs):
        out = op(*args, **kwargs)
        if isinstance(out, _Tensor) and not out.is_contiguous():
            with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
                return out.contiguous()
        return out
    return contiguous
