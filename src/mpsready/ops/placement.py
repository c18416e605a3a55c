"""Device placement as MPS enforces it: which CPU tensors an op dispatched to MPS refuses, and with what text.

No torch import: a call is described by :class:`Operand` values. The rules and every exception to them, each
with its PyTorch source, are in ``data/curated/mps_placement.yaml`` (the same in every release 2.3-2.14):

* an op built on TensorIterator (the ``pointwise`` tag) refuses a CPU tensor of one or more dimensions with
  ``RuntimeError: Expected all tensors to be on the same device, but found at least two devices, mps:0 and
  cpu!``; a 0-dim CPU tensor is a scalar there and allowed;
* any other MPS kernel refuses every CPU tensor with ``RuntimeError: Placeholder storage has not been
  allocated on MPS device!``;
* copies, metadata reads, the foreach ops (per-tensor slow path), CPU index tensors and 0-dim CPU values of
  ``masked_fill_``/``fill_``/``index_put_`` are allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Operand:
    """One tensor argument of a call: its schema ``name`` (``"self"``, ``"indices"``, ``"out"``), whether it
    lives on the (emulated) MPS device, its number of dimensions, and whether it is an output (``out=``, or
    ``self`` of an in-place op)."""

    name: str
    on_mps: bool
    ndim: int
    output: bool = False


@dataclass(frozen=True)
class Refusal:
    """What MPS raises: ``exception`` (always ``RuntimeError``), ``message``, the ``check`` that raises it
    (``same_device`` or ``placeholder``), the offending argument and the PyTorch ``source``."""

    exception: str
    message: str
    check: str
    argument: str
    source: str


@cache
def _rules() -> dict[str, Any]:
    from mpsready.ops.build import curated

    raw = curated.load("mps_placement")
    per_op_any: dict[str, set[str]] = {}
    per_op_scalar: dict[str, set[str]] = {}
    for entry in raw["cpu_args"]:
        for op in entry["ops"]:
            per_op_any.setdefault("aten::" + op, set()).update(entry["args"])
    for entry in raw["cpu_scalar_args"]:
        for op in entry["ops"]:
            per_op_scalar.setdefault("aten::" + op, set()).update(entry["args"])
    return {"text": raw["rules"], "any": frozenset("aten::" + o for o in raw["any_device"]["ops"]),
            "prefixes": tuple("aten::" + p["prefix"] for p in raw["any_device_prefixes"]),
            "cpu_args": per_op_any, "cpu_scalar_args": per_op_scalar}


def exempt(op: str) -> bool:
    """True when ``op`` (``"aten::copy_"``) may take tensors on several devices."""
    r = _rules()
    return op in r["any"] or op.startswith(r["prefixes"])


def judge(op: str, operands: Sequence[Operand], pointwise: bool) -> Refusal | None:
    """The refusal MPS raises for ``op`` (an aten overload that reaches its MPS kernel, ``"aten::add.Tensor"``)
    called with ``operands`` in schema order (outputs first), or None when the placement is allowed.
    ``pointwise``: the op carries the ``pointwise`` tag (a TensorIterator op)."""
    if exempt(op):
        return None
    r = _rules()
    free = r["cpu_args"].get(op, ())
    scalar_ok = r["cpu_scalar_args"].get(op, ())
    text = r["text"]
    if pointwise:
        ordered = [o for o in operands if o.output] + [o for o in operands if not o.output]
        first = None
        for o in ordered:
            if o.name in free or (not o.on_mps and (o.ndim == 0 or o.name in scalar_ok)):
                continue  # a CPU scalar, skipped when TensorIterator picks the common device
            dev = "mps:0" if o.on_mps else "cpu"
            if first is None:
                first = dev
            elif dev != first:
                return Refusal("RuntimeError", text["same_device"].format(first=first, second=dev), "same_device",
                               o.name, text["same_device_source"])
        return None
    for o in operands:
        if o.on_mps or o.name in free or (o.ndim == 0 and o.name in scalar_ok):
            continue
        return Refusal("RuntimeError", text["placeholder"], "placeholder", o.name, text["placeholder_source"])
    return None
