"""Checks of one aten call of the emulated device beside its plan, called by :mod:`mpsready.emulate.dispatch`:
the tensor operands of a call for the placement check, the generator-device check of a random op, and a copy
off MPS that casts (kept apart so that the dispatch mode's module stays within the size limit)."""

from __future__ import annotations

import torch

from mpsready.emulate.session import Emulator
from mpsready.ops.advisories import AdvisoryFacts

_Tensor = torch.Tensor
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}


def operands(names, args, kwargs, cpu, inplace: bool = False) -> list:
    """The tensor arguments of a call as :class:`mpsready.ops.placement.Operand` values, in schema order
    (``names``: the schema's argument names); only the tensors in ``cpu`` (ids) count as CPU tensors."""
    from mpsready.ops.placement import Operand

    out = []
    for i, a in enumerate(args):
        n = names[i] if i < len(names) else f"arg{i}"
        output = i == 0 and inplace
        if isinstance(a, _Tensor):
            out.append(Operand(n, id(a) not in cpu, a.dim(), output, _DTYPE_NAMES.get(a.dtype, "")))
        elif isinstance(a, (list, tuple)):
            for w in a:
                if isinstance(w, _Tensor):
                    out.append(Operand(n, id(w) not in cpu, w.dim(), output, _DTYPE_NAMES.get(w.dtype, "")))
    for k, v in (kwargs or {}).items():
        if isinstance(v, _Tensor):
            out.append(Operand(k, id(v) not in cpu, v.dim(), k == "out", _DTYPE_NAMES.get(v.dtype, "")))
    return out


def check_generator(emu: Emulator, name: str, on: bool) -> None:
    """The generator-device check of a random op (Judge.generator): raised unless ``--keep-going``. The
    generator's device is the program's object's (device.py sets ``emu.generator_mps`` around the torch call)."""
    j = emu.judge.generator(name, on, emu.generator_mps)
    if j is not None:
        exc = emu.fail(j, name)
        if exc is not None:
            raise exc


def copy_back(emu: Emulator, src, dtype) -> None:
    """An MPS tensor ``src`` copied to the CPU as ``dtype`` in one call: MPS's refusal (raised unless
    ``--keep-going``), or the predicted wrong result of a release that writes nothing (Judge.copy_off_device)."""
    names = _DTYPE_NAMES
    j = emu.judge.copy_off_device(names.get(src.dtype, ""), names.get(dtype, ""))
    if j is None:
        return
    if j == "wrong":
        facts = AdvisoryFacts(dtypes=(names.get(src.dtype, ""),), shapes=(tuple(src.shape),),
                              contiguous=(src.is_contiguous(),), args={"dtype": names.get(dtype, "")})
        adv = emu.advisories.match("aten::_to_copy", facts)
        if adv is not None:
            emu.note_wrong_result(adv, emu.frames.locate(3))
        return
    exc = emu.fail(j, "aten::_to_copy")  # type: ignore[arg-type]
    if exc is not None:
        raise exc
