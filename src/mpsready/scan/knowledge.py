"""The knowledge base of CUDA-only and CUDA-first packages (data in ``data/packages.yaml``).

Lookups accept a distribution name in any spelling (normalised per PEP 503: ``Flash_Attn`` ==
``flash-attn``) or a top-level import name. Nothing here knows about files or findings.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from mpsready.findings import Severity

_NORMALISE = re.compile(r"[-_.]+")  # PEP 503 name normalisation (over a package name, not Python source)


def load_shipped_yaml(name: str):
    """``mpsready/scan/data/NAME`` parsed with the safe YAML constructors (C loader when available): plain
    dicts, lists, strings, numbers, booleans and ``None``. Raises ``FileNotFoundError`` for a missing file and
    ``yaml.YAMLError`` for a malformed one (a packaging bug). Each caller caches its result once per process.
    The file is read beside this module when it is there (an installed or checked-out package), through
    ``importlib.resources`` otherwise (a zipped install): importing those two costs a 1-file scan a tenth of
    its time, as does importing yaml itself, so neither happens at import time."""
    import yaml

    beside = Path(__file__).with_name("data") / name
    if beside.is_file():
        text = beside.read_text(encoding="utf-8")
    else:
        from importlib import resources

        text = resources.files("mpsready.scan").joinpath(f"data/{name}").read_text(encoding="utf-8")
    # libyaml's loader when PyYAML was built with it (about 10x the pure-Python SafeLoader on these files); the
    # same safe constructors either way, so the tables read identically
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def preload() -> None:
    """Read and index every shipped table now (each is cached for the process): the scan calls this before it
    forks its process pool, so the workers inherit the tables instead of parsing them again each."""
    _index()
    cuda_api_table()


@functools.lru_cache(maxsize=4096)  # a project names the same packages again and again (files, extras, locks)
def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name: lower case, runs of ``-_.`` become ``-``."""
    return _NORMALISE.sub("-", name).lower().strip()


@dataclass(frozen=True)
class PackageEntry:
    name: str
    status: str  # no_macos_build | cuda_paths_fail | mps_since | cuda_first | cpu_build
    severity: Severity
    alternative: str | None
    source: str
    mps_since: str | None = None
    # a runtime the project's code is written against (a serving/rollout engine), not an op a drop-in replaces:
    # its unconditional use anywhere on the main path is the project's core (model/core.py), not only in a model file
    engine: bool = False
    # (cpu_build) names the package implements in plain PyTorch ops, which run on MPS tensors too (model/package_uses.py)
    pure_ops: tuple[str, ...] = ()
    # the import is harmless on macOS; a call of the package's names in code the main path runs is the limit
    uses_limit: bool = False

    @property
    def status_text(self) -> str:
        return {
            "no_macos_build": "has no macOS build (the source build needs CUDA)",
            "cuda_paths_fail": "installs on macOS, but its CUDA kernels do not run on MPS",
            "cuda_first": "CUDA-first (installs on macOS; GPU features absent)",
            "cpu_build": "installs on macOS with CPU kernels only (its compiled ops take CPU tensors, not MPS ones)",
            "mps_since": f"supports MPS since {self.mps_since}",
        }.get(self.status, self.status)

    @property
    def has_alternative(self) -> bool:
        return bool(self.alternative)


@dataclass(frozen=True)
class _Index:
    by_name: dict[str, PackageEntry]
    prefixes: tuple[tuple[str, PackageEntry], ...]
    by_import: dict[str, PackageEntry]
    entries: tuple[PackageEntry, ...]


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    raw = load_shipped_yaml("packages.yaml")["packages"]
    by_name: dict[str, PackageEntry] = {}
    prefixes: list[tuple[str, PackageEntry]] = []
    by_import: dict[str, PackageEntry] = {}
    entries = []
    for item in raw:
        entry = PackageEntry(
            name=canonical_name(item["name"]),
            status=item["status"],
            severity=Severity(item["severity"]),
            alternative=item.get("alternative"),
            source=item["source"],
            mps_since=item.get("mps_since"),
            engine=bool(item.get("engine")),
            pure_ops=tuple(item.get("pure_ops") or ()),
            uses_limit=bool(item.get("uses_limit")),
        )
        entries.append(entry)
        for n in [item["name"], *(item.get("aliases") or [])]:
            by_name[canonical_name(n)] = entry
        for p in item.get("prefixes") or []:
            prefixes.append((canonical_name(p), entry))
        for imp in item.get("imports") or []:
            by_import[imp] = entry
    return _Index(by_name, tuple(prefixes), by_import, tuple(entries))


def entries() -> tuple[PackageEntry, ...]:
    """Every entry of the knowledge base, in file order."""
    return _index().entries


@functools.lru_cache(maxsize=4096)
def lookup(name: str) -> PackageEntry | None:
    """The entry for a distribution name (exact, alias or prefix match), or ``None``."""
    idx = _index()
    key = canonical_name(name)
    hit = idx.by_name.get(key)
    if hit is not None:
        return hit
    for prefix, entry in idx.prefixes:
        if key.startswith(prefix):
            return entry
    return None


def import_names() -> tuple[str, ...]:
    """Every import name of the knowledge base (``flash_attn``, ``nvidia.dali``, ...), sorted."""
    return tuple(sorted(_index().by_import))


def lookup_import(module: str) -> PackageEntry | None:
    """The entry for an imported module (``flash_attn.flash_attn_interface`` -> flash-attn), or ``None``."""
    idx = _index()
    parts = module.split(".")
    for i in range(len(parts), 0, -1):  # longest dotted prefix first, so nvidia.dali beats nvidia
        hit = idx.by_import.get(".".join(parts[:i]))
        if hit is not None:
            return hit
    return None


@functools.lru_cache(maxsize=1)
def cuda_api_table() -> dict:
    """``data/cuda_api.yaml``: ``{"source", "default", "names": {name: {severity, mps, accelerator, code?}}}``."""
    return load_shipped_yaml("cuda_api.yaml")
