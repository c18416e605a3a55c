"""The transform registry: one module per rule code (or family), each exporting one Transform subclass.

A new rule code plugs in with one module here and one line in ``TRANSFORM_MODULES``.
Edits on nested nodes compose in any order; the selection plans first because the device variables it
registers on the file context are what the other transforms move tensors to.
"""

from __future__ import annotations

import importlib
import inspect

from mpsready.migrate.interface import Transform

TRANSFORM_MODULES = (
    "selection",  # API104 (first: the device variables it registers are what the others move tensors to)
    "dot_cuda",  # API101
    "torch_cuda_api",  # API102
    "device_literal",  # API103
    "device_string_test",  # API115
    "cpu_keyed_fallback",  # EXT108 (a fallback keyed on device.type == "cpu"; also detected here)
    "nccl",  # API107
    "amp",  # API108, API109
    "pin_memory",  # API113
    "default_tensor_type",  # API119 (and the API102 finding on its torch.cuda.FloatTensor argument)
    "torch_load",  # API103 (torch.load without map_location: detected here)
    "numpy_float64",  # DTY102
    "guarded_import",  # DEP107, EXT102 (a hard import whose file already falls back on None: detected here)
)


def all_transforms() -> list[Transform]:
    out: list[Transform] = []
    for name in TRANSFORM_MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, Transform) and obj is not Transform \
                    and obj.__module__ == mod.__name__:
                out.append(obj())
    return out


def select_transforms(codes: set[str] | None) -> list[Transform]:
    """Transforms answering at least one of ``codes`` (``None``: all)."""
    return [t for t in all_transforms() if codes is None or set(t.codes) & codes]
