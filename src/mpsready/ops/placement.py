"""Device placement as MPS enforces it: which CPU tensors an op dispatched to MPS refuses, and with what text.

No torch import: a call is described by :class:`Operand` values. The rules and every exception to them, each
with its PyTorch source, are in ``data/curated/mps_placement.yaml`` (the same in every release 2.3-2.14):

* an op built on TensorIterator (the ``pointwise`` tag) refuses a CPU tensor of one or more dimensions with
  ``RuntimeError: Expected all tensors to be on the same device, but found at least two devices, mps:0 and
  cpu!``; a 0-dim CPU tensor is a scalar there and allowed;
* a kernel that checks its tensors' devices itself (``mm``, ``addmm``: ATen's ``checkAllSameGPU``) refuses with
  ``RuntimeError: Tensor for argument #2 'mat2' is on CPU, but expected it to be on GPU (while checking arguments
  for mm)``;
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
    dtype: str = ""  # "float32" (read by the type checks of convolutions)


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
    same_gpu: dict[str, dict[str, Any]] = {}
    for entry in raw.get("same_gpu_checks") or ():
        for op in entry["ops"]:
            same_gpu["aten::" + op] = entry
    types: dict[str, dict[str, Any]] = {}
    for entry in raw.get("type_checks") or ():
        for op in entry["ops"]:
            types["aten::" + op] = entry
    checks: dict[str, dict[str, Any]] = {}
    for entry in raw.get("device_checks") or ():
        for op in entry["ops"]:
            checks["aten::" + op] = entry
    return {"text": raw["rules"], "any": frozenset("aten::" + o for o in raw["any_device"]["ops"]), "types": types,
            "checks": checks,
            "prefixes": tuple("aten::" + p["prefix"] for p in raw["any_device_prefixes"]),
            "cpu_args": per_op_any, "cpu_scalar_args": per_op_scalar, "same_gpu": same_gpu}


def _type_name(o: Operand) -> str:
    """``Tensor::toString()`` of the operand as the message prints it: ``MPSFloatType``, ``torch.FloatTensor``."""
    from mpsready.ops.judge_dtypes import C10_NAMES

    scalar = C10_NAMES.get(o.dtype, o.dtype)
    return f"MPS{scalar}Type" if o.on_mps else f"torch.{scalar}Tensor"


def _type_check(entry: dict[str, Any], operands: Sequence[Operand]) -> Refusal | None:
    """A convolution of an MPS input whose weight or bias is a CPU tensor (``type_checks`` of the yaml), else None."""
    first = next((o for o in operands if o.name in entry["input"]), None)
    if first is None or not first.on_mps:
        return None
    for arg in entry["args"]:
        o = next((g for g in operands if g.name == arg), None)
        if o is not None and not o.on_mps:
            text = entry["message"].format(input_type=_type_name(first), arg=arg, arg_type=_type_name(o))
            return Refusal("RuntimeError", text, "type", arg, " ".join(entry["source"].split()))
    return None


def _same_gpu(entry: dict[str, Any], operands: Sequence[Operand]) -> Refusal | None:
    """ATen's ``checkAllSameGPU`` as an MPS kernel calls it (``same_gpu_checks`` of the yaml): the first tensor of
    the kernel's list against each next one; the first pair with a CPU tensor raises."""
    given = {o.name: o for o in operands}
    listed = []
    for schema_name, (label, pos) in entry["args"].items():
        o = given.get(schema_name)
        if o is None and schema_name == "out":
            o = next((g for g in operands if g.output), None)  # an in-place op writes its own self
            on_mps = True if o is None else o.on_mps  # else the structured kernel allocates it on MPS
        elif o is None:
            continue
        else:
            on_mps = o.on_mps
        listed.append((label, pos, on_mps, schema_name))

    def arg(label: str, pos: int) -> str:
        return f"'{label}'" if pos == 0 else f"argument #{pos} '{label}'"

    first = listed[0] if listed else None
    for t in listed[1:]:
        assert first is not None
        if first[2] and t[2]:
            continue
        text = "".join(f"Tensor for {arg(x[0], x[1])} is on CPU, " for x in (first, t) if not x[2])
        text += f"but expected it to be on GPU (while checking arguments for {entry['checked_from']})"
        return Refusal("RuntimeError", text, "same_gpu", t[3] if not t[2] else first[3],
                       "aten/src/ATen/TensorUtils.cpp checkSameGPU; " + " ".join(entry["source"].split()))
    return None


def exempt(op: str) -> bool:
    """True when ``op`` (``"aten::copy_"``) may take tensors on several devices."""
    r = _rules()
    return op in r["any"] or op.startswith(r["prefixes"])


def _device_check(entry: dict[str, Any], operands: Sequence[Operand], torch: str | None) -> Refusal | None:
    """A kernel's own device check (``device_checks`` of the yaml) from the release that has it, else None."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    if torch is None or Version(torch) not in SpecifierSet(entry["torch"]):
        return None
    for arg in entry["args"]:
        o = next((g for g in operands if g.name == arg), None)
        if o is not None and not o.on_mps:
            return Refusal("RuntimeError", entry["message"].format(arg=arg, device="cpu"), "device_check", arg,
                           " ".join(entry["source"].split()))
    return None


def judge(op: str, operands: Sequence[Operand], pointwise: bool, torch: str | None = None) -> Refusal | None:
    """The refusal MPS raises for ``op`` (an aten overload that reaches its MPS kernel, ``"aten::add.Tensor"``)
    called with ``operands`` in schema order (outputs first), or None when the placement is allowed.
    ``pointwise``: the op carries the ``pointwise`` tag (a TensorIterator op); ``torch``: the target release (the
    kernels' own device checks depend on it)."""
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
    own = r["checks"].get(op)
    if own is not None:
        hit = _device_check(own, operands, torch)
        if hit is not None:
            return hit
    typed = r["types"].get(op)
    if typed is not None:
        hit = _type_check(typed, operands)
        if hit is not None:
            return hit
    same_gpu = r["same_gpu"].get(op)
    if same_gpu is not None:
        return _same_gpu(same_gpu, operands)
    for o in operands:
        if o.on_mps or o.name in free or (o.ndim == 0 and o.name in scalar_ok):
            continue
        return Refusal("RuntimeError", text["placeholder"], "placeholder", o.name, text["placeholder_source"])
    return None
