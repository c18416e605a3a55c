"""The plain facts of one emulated aten call for the judge (:class:`~mpsready.ops.judge.CallFacts`), read from the
call's arguments. Split from :mod:`mpsready.emulate.dispatch` (the module size limit); the dispatch mode calls
:func:`facts` once per judged call that its plans cannot memoise."""

from __future__ import annotations

import torch

from mpsready.emulate.aten import SIZED as _SIZED, OpInfo
from mpsready.ops.envelope import strided_view
from mpsready.ops.judge import CallFacts

_Tensor = torch.Tensor
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}
_STRIDED = torch.strided
_ARGS = ("transposed",)  # schema arguments the shape rules may read (mps_shape_rules.yaml)
# ops whose arguments the shape rules read (mps_shape_rules.yaml); others get only dtypes and the first rank
_SHAPED = frozenset({"aten::convolution", "aten::_convolution", "aten::bmm", "aten::baddbmm"})

_INT_MAX = 2**31 - 1


def facts(info: OpInfo, args, kwargs, ins, judge=None) -> CallFacts:
    """The plain facts of one call (:class:`~mpsready.ops.judge.CallFacts`); ``judge``: the target's judge,
    asked once per op which extra facts its kernel checks read (``Judge.wants``), so that other ops pay
    nothing for them."""
    names = _DTYPE_NAMES
    dtypes = tuple(names.get(t.dtype, "") for t in ins)
    sparse = False
    for t in ins:
        if t.layout is not _STRIDED:
            sparse = True
            break
    if kwargs and not sparse:  # a factory's layout= picks its dispatch key (SparseMPS for a sparse one on MPS)
        lay = kwargs.get("layout")
        sparse = lay is not None and lay is not _STRIDED
    ndims = size0 = argv = None
    empty = False
    if info.name in _SHAPED:
        ndims, size0, argv = {}, {}, {}
        for i, a in enumerate(args):
            if i >= len(info.schema_args):
                break
            n = info.schema_args[i]
            if isinstance(a, _Tensor):
                ndims[n] = a.dim()
                size0[n] = a.shape[0] if a.dim() else 0
                if a.numel() == 0:
                    empty = True
            elif n in _ARGS:
                argv[n] = a
    numel0 = dim_max = bytes_max = 0
    wants = None
    if judge is not None:
        wants = info.wants
        if wants is None:
            wants = info.wants = judge.wants(info.name)
        if wants:
            if "args" in wants:
                argv = dict(argv or {})
                for i, a in enumerate(args[:len(info.schema_args)]):
                    if not isinstance(a, _Tensor):
                        argv[info.schema_args[i]] = a
                for k, v in kwargs.items():
                    if not isinstance(v, _Tensor):
                        argv[k] = v
            if "numel0" in wants and ins:
                numel0 = ins[0].numel()
            if "dim_max" in wants and not info.view:
                # a dimension > INT_MAX implies more than INT_MAX elements: sizes are read only then, unless a
                # check of this op has a lower bound (dim_max_any)
                every = "dim_max_any" in wants
                for t in ins:
                    n = t.numel()
                    if t.dim() and (every or n > _INT_MAX):
                        dim_max = max(dim_max, max(t.shape))
                    if n > _SIZED:  # the size regime's bytes (mps_dtype_checks.yaml bytes_gt)
                        bytes_max = max(bytes_max, n * t.element_size())
    strided = False
    if wants:
        if "empty_input" in wants and not empty:  # a check of this op reads it (Placeholder of an empty tensor)
            empty = any(t.numel() == 0 for t in ins)
        if "input_strided" in wants and ins and ins[0].layout is _STRIDED:
            strided = strided_view(tuple(ins[0].shape), tuple(ins[0].stride()))
    bmm = _bmm_shape(info.name, args)
    return CallFacts(dtypes=dtypes, sparse=sparse, ndims=ndims, size0=size0, args=argv, empty_input=empty,
                     out_numel=bmm[0], out_matrix=bmm[1], input_ndim=ins[0].dim() if ins else -1,
                     numel0=numel0, dim_max=dim_max, bytes_max=bytes_max, input_strided=strided)


_NO_BMM = (0, (0, 0))


def _bmm_shape(name: str, args) -> tuple[int, tuple[int, int]]:
    """``(elements, (rows, cols))`` of a ``bmm``'s result (its whole output and one of its matrices), else zeros."""
    if name == "aten::bmm" and len(args) >= 2 and isinstance(args[0], _Tensor) and isinstance(args[1], _Tensor):
        a, b = args[0], args[1]
        if a.dim() == 3 and b.dim() == 3:
            return a.shape[0] * a.shape[1] * b.shape[2], (a.shape[1], b.shape[2])
    return _NO_BMM
