"""What each migrate transform fixes, declared beside it and importable without libcst.

Each module here is the spec of the transform module of the same name in :mod:`mpsready.migrate.transforms`
(which imports it and takes its ``codes`` from it): the rule codes the transform answers, the auto-fix it
documents for each code it fixes (``docs/rules.md`` renders them) and the condition, read from a finding's
evidence and message and the project's PyTorch floor, under which the transform leaves a finding to a person
or keeps it. :mod:`mpsready.migrate.fixability` puts them together for the scan, the report and migrate.

A new transform: one module in :mod:`mpsready.migrate.transforms`, one here with its :class:`Spec`, and its
name in :data:`TRANSFORM_MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mpsready.findings import Finding
from mpsready.rules import AutoFix

Floor = tuple[int, int] | None
Bucket = tuple[str, str]  # ("auto", what) | ("manual", why) | ("kept", why) | ("other", "")
Bucketed = tuple[Finding, str, str]

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


@dataclass(frozen=True)
class Spec:
    """One transform's declaration.

    ``codes``: the rule codes it answers (findings of these codes are handed to it); ``fixes``: the auto-fix
    of each code it fixes (a code only labels edits it finds itself when absent, as EXT102);
    ``decide(finding, floor)``: ``("manual", why)`` or ``("kept", why)`` where the transform leaves this finding
    as it is, ``("auto", what)`` to say what it does, ``None`` for the code's auto-fix summary;
    ``refine(rows)``: a pass over every finding's ``(finding, kind, why)`` for what one edit fixes for two
    findings (changes ``rows`` in place)."""

    codes: tuple[str, ...]
    fixes: Mapping[str, AutoFix] = field(default_factory=dict)
    decide: Callable[[Finding, Floor], Bucket | None] | None = None
    refine: Callable[[list[Bucketed]], None] | None = None


def all_specs() -> list[Spec]:
    """Every transform's spec, in :data:`TRANSFORM_MODULES` order."""
    return [importlib.import_module(f"{__name__}.{name}").SPEC for name in TRANSFORM_MODULES]
