"""The transform registry: one module per rule code (or family), each exporting one Transform subclass.

A new rule code plugs in with one module here, its spec in :mod:`mpsready.migrate.specs` (what it fixes,
importable without libcst) and one line in ``TRANSFORM_MODULES`` there.
Edits on nested nodes compose in any order; the selection plans first because the device variables it
registers on the file context are what the other transforms move tensors to.
"""

from __future__ import annotations

import importlib
import inspect

from mpsready.migrate.interface import Transform
from mpsready.migrate.specs import TRANSFORM_MODULES  # the order the transforms plan in, beside their specs


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
