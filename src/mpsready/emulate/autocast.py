"""``torch.autocast("mps")`` as the target release has it.

* Before 2.5 PyTorch has no MPS autocast (no AutocastMPS registrations in the 2.3/2.4 binaries, research note
  §2.3): ``torch.autocast(device_type="mps")`` raises ``RuntimeError: User specified an unsupported autocast
  device_type 'mps'`` (torch/amp/autocast_mode.py of those releases).
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
from mpsready.ops.api import _vtuple
from mpsready.ops.judge import Judgement

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
    real_init = _Autocast.__init__
    before_mps_autocast = _vtuple(emu.judge.torch)[:2] < (2, 5)

    def __init__(self, device_type, *args, **kwargs):
        if device_type == "mps":
            emu.autocast_used = True
            if before_mps_autocast:
                j = Judgement(op="torch.autocast", outcome="error", kind="autocast", exception="RuntimeError",
                              message="User specified an unsupported autocast device_type 'mps'", fixed_in="2.5.0",
                              named="torch.autocast", source="torch/amp/autocast_mode.py (2.3, 2.4); no AutocastMPS "
                              "registrations before 2.5 (research note §2.3)")
                exc = emu.fail(j, "torch.autocast")
                if exc is not None:
                    raise exc
                return real_init(self, "cpu", *args, **{**kwargs, "enabled": False})
        return real_init(self, device_type, *args, **kwargs)

    _Autocast.__init__ = __init__

    def undo():
        _Autocast.__init__ = real_init
    return undo
