"""``mpsready trace ENTRY``: record the aten ops of a representative step on the machine at hand
(CPU or CUDA) and predict what would fail, fall back to the CPU or be refused on MPS.

``trace_entry(spec, torch=..., macos=..., device=...) -> TraceResult`` is the library call;
importing this package does not import torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["trace_entry", "TraceResult"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mpsready.trace import api

        return getattr(api, name)
    raise AttributeError(name)
