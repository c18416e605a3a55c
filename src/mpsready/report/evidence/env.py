"""Adapter for ``mpsready env --format json`` (schema ``mpsready.env`` v1).

Keeps apart the facts the checklist needs: where it ran (OS, macOS version, chip),
the PyTorch version, ``torch.backends.mps.is_built()`` and ``is_available()`` as two
separate facts (checklist item 3), the CPU-fallback switch ``PYTORCH_ENABLE_MPS_FALLBACK``
(item 6), the memory of the machine, and the project's git state (item 7).
An unknown field stays ``None``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Finding
from mpsready.report.evidence._util import (as_bool, as_int, check_schema, dig, findings_of, first_str,
                                            load_json)

SCHEMA = "mpsready.env"


@dataclass
class EnvEvidence:
    source: str | None
    system: str | None  # platform.system(): "Darwin", "Linux", "Windows"
    macos: str | None  # e.g. "14.4.1", only on a Mac
    machine: str | None  # "arm64", "x86_64"
    chip: str | None
    python: str | None
    torch: str | None
    mps_built: bool | None
    mps_available: bool | None
    cuda_available: bool | None
    memory_bytes: int | None  # physical (unified, on a Mac) memory
    fallback_enabled: bool | None  # PYTORCH_ENABLE_MPS_FALLBACK=1
    git_commit: str | None
    git_dirty: bool | None
    findings: list[Finding] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_mac(self) -> bool:
        return (self.system or "").lower() == "darwin"

    def describe(self) -> str:
        """One line: ``Linux x86_64, Python 3.12.3, torch 2.13.0``."""
        parts = [p for p in (
            (f"macOS {self.macos}" if self.macos else self.system),
            self.chip or self.machine,
            f"Python {self.python}" if self.python else None,
            f"torch {self.torch}" if self.torch else "torch not installed",
        ) if p]
        return ", ".join(parts)


def from_doc(doc: dict[str, Any], source: str | None = None) -> EnvEvidence:
    check_schema(doc, SCHEMA, source or "env output")
    fallback_raw = dig(doc, "env_vars.PYTORCH_ENABLE_MPS_FALLBACK", "environment.PYTORCH_ENABLE_MPS_FALLBACK",
                       "env.PYTORCH_ENABLE_MPS_FALLBACK", "variables.PYTORCH_ENABLE_MPS_FALLBACK",
                       "mps.fallback_enabled")
    if isinstance(fallback_raw, dict):
        fallback_raw = fallback_raw.get("value")
    fallback = as_bool(fallback_raw)
    if fallback is None and isinstance(doc, dict):
        fallback = False if _env_vars_recorded(doc) else None
    return EnvEvidence(
        source=source,
        system=first_str([dig(doc, "os.system", "platform.system", "system", "os.name")]),
        macos=first_str([dig(doc, "os.macos_version", "os.macos", "os.mac_ver", "macos.version", "macos")]),
        machine=first_str([dig(doc, "machine.arch", "os.machine", "platform.machine", "python.arch")]),
        chip=first_str([dig(doc, "machine.chip", "hardware.chip", "chip", "os.chip")]),
        python=first_str([dig(doc, "python.version", "python")]),
        torch=first_str([dig(doc, "torch.version", "pytorch.version", "torch")]),
        mps_built=as_bool(dig(doc, "torch.mps.built", "torch.mps.is_built", "mps.is_built", "mps.built")),
        mps_available=as_bool(dig(doc, "torch.mps.available", "torch.mps.is_available", "mps.is_available",
                                  "mps.available")),
        cuda_available=as_bool(dig(doc, "torch.cuda.available", "torch.cuda.is_available", "cuda.is_available",
                                   "cuda.available")),
        memory_bytes=as_int(dig(doc, "machine.memory_bytes", "memory.unified_bytes", "memory.total_bytes",
                                "hardware.memory_bytes", "memory_bytes")),
        fallback_enabled=fallback,
        git_commit=first_str([dig(doc, "project.git.commit", "git.commit", "project.commit")]),
        git_dirty=as_bool(dig(doc, "project.git.dirty", "git.dirty", "project.dirty")),
        findings=findings_of(doc),
        raw=doc,
    )


def _env_vars_recorded(doc: dict[str, Any]) -> bool:
    """True when the record lists MPS environment variables at all (then an absent one is unset)."""
    for key in ("env_vars", "environment", "env", "variables"):
        if isinstance(doc.get(key), dict):
            return True
    return False


def load(path: str | os.PathLike[str]) -> EnvEvidence:
    return from_doc(load_json(path, SCHEMA), source=str(path))
