"""Curated overlays (``mpsready/ops/data/curated/*.yaml``): loading and release selection.

Every entry carries a ``torch`` specifier (a ``packaging`` SpecifierSet over release versions, e.g.
``">=2.3,<2.14"``) and a source, either on the entry or for the whole file.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

CURATED = "mpsready.ops.data.curated"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    """Parse ``data/curated/<name>.yaml`` (libyaml's safe loader where installed: the same documents as the
    pure-Python one on every shipped file, 10x faster; the emulated Mac reads several at start-up)."""
    text = resources.files(CURATED).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=_Loader)


def applies(entry: dict[str, Any], release: str) -> bool:
    """Whether ``entry["torch"]`` (default: every release) admits ``release``."""
    spec = entry.get("torch")
    if not spec:
        return True
    return Version(release) in SpecifierSet(spec)


def for_release(entries: list[dict[str, Any]], release: str) -> list[dict[str, Any]]:
    """The entries that apply to ``release``."""
    return [e for e in entries if applies(e, release)]
