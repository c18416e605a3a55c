"""``torch.autocast("mps")`` as the target release has it.

* Before 2.5 PyTorch has no MPS autocast (no AutocastMPS registrations in the 2.3/2.4 binaries, research note
  §2.3): ``torch.autocast(device_type="mps")`` raises ``RuntimeError: User specified an unsupported autocast
  device_type 'mps'`` (torch/amp/autocast_mode.py of those releases).
* 2.5-2.9 check the region's dtype in Python: one the release does not accept for MPS (2.5: only float16;
  2.6-2.9: bfloat16 and float16, bfloat16 only from macOS 14) gives that release's "Disabling autocast"
  UserWarning and the region is disabled. These rules, with their texts and sources, are the ``autocast``
  section of ``ops/data/curated/python_checks.yaml``, judged by :meth:`mpsready.ops.judge.Judge.autocast`; from
  2.10 the installed code's checks are the release's.
* Where the data ships the release's AutocastMPS list (``autocast_mps.yaml``: 2.5.1), the casts are applied at
  the Python level, above autograd, so gradients stay right: inside an enabled MPS autocast region, a call of
  an op on the ``lower_precision_fp`` list casts its floating-point tensors to the region's dtype, one on the
  ``fp32`` list to float32 (autocast_mode.cpp ``KERNEL_MPS`` policies). The Python function is matched to its
  aten op by name (``F.linear`` -> ``aten::linear``, ``torch.matmul`` -> ``aten::matmul``).
* Elsewhere (2.6+) the list is not shipped: the region runs uncast here and the run document says so
  (``autocast.list_known`` false); nothing is guessed.
"""

from __future__ import annotations

import torch

from mpsready.emulate.session import Emulator

_Autocast = torch.amp.autocast_mode.autocast
_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def policy_for(emu: Emulator, func) -> str | None:
    """The AutocastMPS policy for a Python-level torch function, None when not listed or no region is on."""
    if not emu.judge.autocast_known or not torch.is_autocast_enabled("mps"):
        return None
    name = getattr(func, "__name__", "")
    return emu.judge.autocast_policy(f"aten::{name}")


def cast_args(args, kwargs, dtype):
    def c(v):
        if isinstance(v, torch.Tensor) and v.dtype in _FLOATS and v.dtype != dtype:
            return v.to(dtype)
        if isinstance(v, (list, tuple)):
            return type(v)(c(w) for w in v)
        return v
    return tuple(c(a) for a in args), {k: c(v) for k, v in kwargs.items()}


def install(emu: Emulator):
    """Patch ``torch.autocast.__init__`` so that an MPS region is judged as the target release has it
    (:meth:`mpsready.ops.judge.Judge.autocast`); returns the undo."""
    import inspect
    import warnings

    real_init = _Autocast.__init__
    sig = inspect.signature(real_init)
    checked = emu.judge.autocast_checked

    def __init__(self, *args, **kwargs):
        try:
            bound = sig.bind(self, *args, **kwargs).arguments
        except TypeError:
            return real_init(self, *args, **kwargs)
        if bound.get("device_type") != "mps":
            return real_init(self, *args, **kwargs)
        emu.autocast_used = True
        if not checked:
            return real_init(self, *args, **kwargs)
        bound.pop("self")
        enabled = bool(bound.get("enabled", True))
        dtype = bound.get("dtype") or torch.get_autocast_dtype("mps")
        j = emu.judge.autocast(str(dtype).replace("torch.", ""), enabled)
        if j is None:
            return real_init(self, **bound)
        if j.fails:  # no MPS autocast in this release
            exc = emu.fail(j, "torch.autocast")
            if exc is not None:
                raise exc
            return real_init(self, **{**bound, "device_type": "cpu", "enabled": False})
        warnings.warn(j.message or "", UserWarning, stacklevel=2)  # the release's own warning; the region is disabled
        return real_init(self, **{**bound, "enabled": False})

    setattr(__init__, "__wrapped__", real_init)
    setattr(_Autocast, "__init__", __init__)

    def undo():
        setattr(_Autocast, "__init__", real_init)
    return undo
