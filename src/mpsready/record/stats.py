"""Statistics and checksums of one tensor, as stored in ``tensors.jsonl``.

All statistics are computed on a CPU copy in float64 over the finite elements (MPS has no
float64, so nothing is accumulated on the device). ``std`` is the population standard
deviation (``ddof=0``). Complex tensors are summarised over their real and imaginary parts
(``torch.view_as_real``); bool and integer tensors are cast to float64 first.
The checksum is the sha256 of the contiguous CPU bytes of the tensor in its own dtype.
"""

from __future__ import annotations

import hashlib
from typing import Any

from mpsready.record.layout import TensorEntry, TensorStats


def dtype_name(t: Any) -> str:
    """``torch.float32`` -> ``"float32"``."""
    return str(t.dtype).replace("torch.", "")


def cpu_copy(t: Any, own: bool = False) -> Any:
    """A detached, contiguous CPU version of ``t`` (one device-to-host transfer; synchronises the device).

    For a tensor already on the CPU this is the tensor itself unless ``own`` asks for a copy
    that later in-place operations cannot change (needed when the tensor is kept, --save-tensors).
    """
    cpu = t.detach().to("cpu").contiguous()
    if own and cpu.data_ptr() == t.data_ptr():
        cpu = cpu.clone()
    return cpu


def tensor_stats(cpu: Any) -> TensorStats:
    """Statistics of a CPU tensor (see module docstring); ``None`` fields when no element is finite."""
    import torch

    t = cpu
    numel = int(t.numel())  # elements of the tensor itself (a complex element counts once)
    if t.is_complex():
        t = torch.view_as_real(t)
    x = t.reshape(-1).to(torch.float64)
    if numel == 0:
        return TensorStats(0, None, None, None, None, None, 0, 0)
    nan = int(torch.isnan(x).sum())
    inf = int(torch.isinf(x).sum())
    f = x[torch.isfinite(x)] if (nan or inf) else x
    if f.numel() == 0:
        return TensorStats(numel, None, None, None, None, None, nan, inf)
    mean = float(f.mean())
    std = float(f.std(correction=0)) if f.numel() > 1 else 0.0
    return TensorStats(numel=numel, mean=mean, std=std, min=float(f.min()), max=float(f.max()),
                       l2=float(torch.linalg.vector_norm(f)), nan=nan, inf=inf)


def checksum(cpu: Any) -> str:
    """sha256 hex digest of the tensor's contiguous bytes (any dtype, including bfloat16 and bool)."""
    import torch

    flat = cpu.contiguous().reshape(-1)
    if flat.numel() == 0:
        return hashlib.sha256(b"").hexdigest()
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    data = flat.view(torch.uint8)  # reinterpret the bytes; no value conversion
    return hashlib.sha256(data.numpy().tobytes()).hexdigest()


def make_entry(kind: str, name: str, step: int, order: int, tensor: Any,
               module_type: str | None = None, keep: bool = False) -> tuple[TensorEntry, Any]:
    """Summarise ``tensor`` into a :class:`TensorEntry`; returns ``(entry, CPU tensor)``.

    With ``keep`` the returned CPU tensor is a private copy (safe to save later)."""
    cpu = cpu_copy(tensor, own=keep)
    entry = TensorEntry(key=f"{kind}:{name}", kind=kind, name=name, step=step, order=order,
                        shape=tuple(int(s) for s in cpu.shape), dtype=dtype_name(cpu), stats=tensor_stats(cpu),
                        checksum=checksum(cpu), module_type=module_type)
    return entry, cpu
