"""The unverified size regime of the judge (issue 33's honest default): which ops' sizes the regime leaves to facts
of their own. Split from :mod:`mpsready.ops.judge` (the module size limit); the judge imports it.

A call check of ``mps_dtype_checks.yaml`` with ``effect: unverified`` (a tensor argument past 2**32 bytes on every
MPS kernel, a convolution size above 65536 before 2.5's guard) judges a call ``unknown`` (kind ``size_regime``):
not a predicted failure, not a pass. Ops with a size fact of their own in the release, and copies and fills, are
left to those facts."""

from __future__ import annotations

from typing import Any, Iterable

# the call-check conditions that read a size of the call's tensors or result
SIZE_TESTS = ("numel_gt", "out_numel_gt", "out_matrix_numel_gt")

# copies and fills (blits: a 32 GiB torch.empty works on MPS, pytorch#143859) are not judged by the size regime
EXEMPT = frozenset({"aten::fill_.Scalar", "aten::zero_", "aten::fill_.Tensor", "aten::_to_copy", "aten::copy_",
                    "aten::empty.memory_format", "aten::empty_strided", "aten::clone", "aten::_copy_from",
                    "aten::_copy_from_and_resize"})


def size_fact_ops(entries: Iterable[dict[str, Any]]) -> set[str]:
    """The aten ops of ``entries`` (the call checks of one release, any macOS) whose own checks read a size: ``bmm``
    tiles past 2**32 entries from macOS 15 (and refuses before), ``masked_fill`` and ``nonzero`` refuse past
    2**32 / INT_MAX elements. The size regime leaves their sizes to those facts."""
    return {"aten::" + op for e in entries if any(k in SIZE_TESTS for k in e.get("when") or {})
            for op in e["ops"] if op != "*"}


def judgement(cls: Any, target: str, message: str, dtypes: tuple[str, ...], entry: dict[str, Any]) -> Any:
    """A call of ``target`` in a size regime the data cannot vouch for (``entry``: its check): a ``cls``
    (:class:`mpsready.ops.judge.Judgement`) with outcome ``unknown``, kind ``size_regime``, no exception."""
    return cls(target, "unknown", "size_regime", None, message, (dtypes[:1] or (None,))[0], None, target,
               entry["source"])
