"""A call the CPU refuses where MPS's kernel may not (issue 33: the Mac accepts what the CPU refuses).

The emulated Mac computes every MPS call on this CPU, so an exception raised by the CPU kernel itself ends the
program here. Whether the Mac raises too depends on where the check lives: a check of the op's shared meta
(structured) function or of its Python wrapper runs on every device, one inside the CPU kernel does not (MPS has
its own kernel with its own checks). Public reports of the second kind, each a program that completes on a Mac:
``ConvTranspose2d`` with ``output_padding`` not smaller than stride or dilation (pytorch#169236: the CPU's
``slow_conv_transpose2d`` checks it, MPS returns a wider result), ``torch.bernoulli`` with ``p`` outside [0, 1], a
singular ``linalg.lu_factor`` (the CPU's info check), ``F.fold`` with an inconsistent ``output_size``, and
dtypes the CPU kernel lacks (``mm`` of bool, ``searchsorted`` of complex64: the Mac raises another error there).

So when the CPU kernel of a call on the emulated device raises, the call is run again on the meta device (shapes,
dtypes and strides only: the checks every backend shares). If the meta kernel accepts it, the refusal is the CPU
kernel's own, and what the Mac does at that call is not known: the run ends ``unverified`` (kind ``cpu_refusal``,
at the user's line), never ``inconclusive`` blaming the program, and never ``completed``. If the meta kernel
refuses it too (a shape error of the program, every backend raises), or has no kernel for it, nothing changes."""

from __future__ import annotations

from typing import Any

import torch

ATTR = "_mpsready_cpu_refusal"  # set on the exception: (op, location dict or None)


def _meta(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        if v.layout is not torch.strided:
            raise TypeError("not a strided tensor")
        return torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device="meta")
    if isinstance(v, (list, tuple)):
        return type(v)(_meta(w) for w in v) if not hasattr(v, "_fields") else v
    return v


def meta_accepts(func: Any, args: tuple, kwargs: dict) -> bool:
    """Whether ``func`` (an aten overload) accepts the call's arguments on the meta device: every tensor replaced
    by a meta tensor of its shape, stride and dtype, with the emulator's modes off. False where the meta kernel
    raises (the check is shared) or is missing."""
    try:
        margs = tuple(_meta(a) for a in args)
        mkwargs = {k: _meta(v) for k, v in kwargs.items()}
        if "device" in mkwargs:
            mkwargs["device"] = "meta"
        with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
            func(*margs, **mkwargs)
    except Exception:  # noqa: BLE001 - any refusal of the meta kernel means the check is shared (or unknown)
        return False
    return True


def note(emu: Any, exc: BaseException, op: str, func: Any, args: tuple, kwargs: dict, depth: int) -> None:
    """Mark ``exc`` (raised by the CPU kernel of ``op`` on the emulated device) as a CPU refusal when the meta
    kernel accepts the call; the innermost call marks it (a composite's outer calls see it again)."""
    from mpsready.emulate.session import mac_error_kind

    if getattr(exc, ATTR, None) is not None or mac_error_kind(exc) is not None:
        return
    if not meta_accepts(func, args, kwargs or {}):
        return
    frame = emu.frames.locate(depth)
    try:
        setattr(exc, ATTR, (op, frame.to_dict() if frame else None))
    except (AttributeError, TypeError):
        pass


def refusal_of(exc: BaseException | None) -> tuple[str, Any] | None:
    """The (op, location) a CPU refusal mark carries on ``exc`` or its chain (up to 8 links), or None."""
    for _ in range(8):
        if exc is None:
            return None
        got = getattr(exc, ATTR, None)
        if got is not None:
            return got
        exc = exc.__cause__ or exc.__context__
    return None


def entry(exc: BaseException, op: str, location: Any, torch_release: str) -> dict[str, Any]:
    """The run document's ``unverified`` entry for a CPU refusal the program ended on."""
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return {"kind": "cpu_refusal", "op": op, "location": location, "calls": 1, "basis": "predicted",
            "reason": (f"the CPU kernel of {op} refused this call ({type(exc).__name__}: {text}), but the meta "
                       f"kernel accepts it: the check is the CPU kernel's own, MPS's kernel has its own, and what "
                       f"torch {torch_release} on a Mac does here is not known (the run stopped at this call): "
                       "not verified")}
