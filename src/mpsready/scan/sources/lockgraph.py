"""Which packages of a lock file a Mac install leaves out: the lock's dependency graph under the Mac's markers.

A lock lists the packages of every platform. uv.lock's torch entry points at its NVIDIA wheels with
``marker = "platform_machine == 'x86_64' and sys_platform == 'linux'"`` (poetry.lock: ``markers`` in
``[package.dependencies]``; pdm.lock: the PEP 508 marker of a ``dependencies`` string), so ``uv sync`` on
macOS arm64 never installs them. A package is left out when

- its own marker (poetry 2 ``markers``, pdm and PEP 751 ``marker``) is false on the Mac, or
- something points at it and every edge pointing at it carries a marker false on the Mac or comes from a
  package already left out (propagated to a fixed point).

The project itself (uv: ``source = { editable = ... }`` / ``{ virtual = ... }``) and a package nothing
points at (a direct dependency: poetry.lock and pdm.lock do not list the project) always stay. A cycle
among packages keeps them (a package left out never depends on a guess). Linear in packages plus edges:
a package's count of live edges drops once per edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass(frozen=True)
class Edge:
    """One dependency edge of a locked package: ``name`` canonical (PEP 503), ``version`` when the lock names
    which of several locked versions it means (uv), ``marker`` the PEP 508 marker text or ``None``."""

    name: str
    version: str | None = None
    marker: str | None = None


@dataclass
class Locked:
    """One ``[[package]]`` of a lock: canonical ``name``, ``version``, its outgoing ``edges``, ``root`` when
    it is the project itself, ``marker`` its own PEP 508 marker (``None`` when the lock gives none)."""

    name: str
    version: str | None = None
    edges: list[Edge] = field(default_factory=list)
    root: bool = False
    marker: str | None = None


def left_out(packages: Sequence[Locked], on_mac: Callable[[str], bool]) -> dict[int, str]:
    """The index of each package a Mac install leaves out, mapped to one marker of the lock that excludes it
    (the package's own, an edge's, or the one that excludes the package pulling it in).

    ``on_mac(marker)`` says whether a PEP 508 marker holds on the Mac (it is called once per edge)."""
    by_name: dict[str, list[int]] = {}
    for i, pkg in enumerate(packages):
        by_name.setdefault(pkg.name, []).append(i)
    pointed = [False] * len(packages)
    live = [0] * len(packages)  # edges pointing here that a Mac install may follow
    follows: list[list[int]] = [[] for _ in packages]  # per package: the targets of its live edges
    why: dict[int, str] = {}
    for i, pkg in enumerate(packages):
        for edge in pkg.edges:
            candidates = by_name.get(edge.name)
            if not candidates:
                continue
            targets = [t for t in candidates if packages[t].version == edge.version] if edge.version else []
            holds = edge.marker is None or on_mac(edge.marker)
            for t in targets or candidates:
                if t == i:  # torch[extra] naming torch itself would keep torch alive on its own
                    continue
                pointed[t] = True
                if holds:
                    live[t] += 1
                    follows[i].append(t)
                else:
                    why.setdefault(t, edge.marker)  # type: ignore[arg-type]  # not None: holds is False
    out: dict[int, str] = {}
    for i, pkg in enumerate(packages):
        if pkg.root:
            continue
        if pkg.marker is not None and not on_mac(pkg.marker):
            out[i] = pkg.marker
        elif pointed[i] and live[i] == 0:
            out[i] = why[i]
    stack = list(out)
    while stack:
        i = stack.pop()
        for t in follows[i]:
            live[t] -= 1
            if live[t] == 0 and t not in out and not packages[t].root:
                out[t] = why.get(t, out[i])
                stack.append(t)
    return out
