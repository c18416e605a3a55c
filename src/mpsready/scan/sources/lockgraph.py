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

When the lock lists the project itself (uv), a package that stays but is reached from it only through an
extra (``[package.optional-dependencies]``: the ``gpu = [torch+cu128]`` of a cpu/gpu pair) is *optional*:
a plain ``uv sync`` does not install it. Dev groups count as required (``uv sync`` installs ``dev``).

uv's ``resolution-markers`` (top level and per package, for forked resolutions) are not needed: uv writes
each fork's marker on the edges too (``{ name = "torch", version = "2.5.1+cu124", marker = "sys_platform !=
'darwin'" }``), and an edge's ``version`` picks which of the same-named packages it means. Markers are
evaluated with ``extra`` empty, so uv's conflict markers (``extra == 'extra-8-proj-gpu'``) hold for no extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edge:
    """One dependency edge of a locked package: ``name`` canonical (PEP 503), ``version`` when the lock names
    which of several locked versions it means (uv), ``marker`` the PEP 508 marker text or ``None``."""

    name: str
    version: str | None = None
    marker: str | None = None
    optional: bool = False  # from an extra (uv ``optional-dependencies``)


@dataclass
class Locked:
    """One ``[[package]]`` of a lock: canonical ``name``, ``version``, its outgoing ``edges``, ``root`` when
    it is the project itself, ``marker`` its own PEP 508 marker (``None`` when the lock gives none)."""

    name: str
    version: str | None = None
    edges: list[Edge] = field(default_factory=list)
    root: bool = False
    marker: str | None = None


@dataclass
class OnMac:
    """What a Mac install does with a lock's packages (indices into the list given to :func:`classify`)."""

    left_out: dict[int, str]  # never installed -> one marker of the lock that excludes it
    optional: set[int]  # installed only when an extra is chosen


def left_out(packages: Sequence[Locked], on_mac: Callable[[str], bool]) -> dict[int, str]:
    """:attr:`OnMac.left_out` of :func:`classify`."""
    return classify(packages, on_mac).left_out


def classify(packages: Sequence[Locked], on_mac: Callable[[str], bool]) -> OnMac:
    """Which packages a Mac install leaves out, each mapped to one marker of the lock that excludes it (the
    package's own, an edge's, or the one that excludes the package pulling it in), and which it installs only
    for an extra (only when the lock lists a root). ``on_mac(marker)``: whether a PEP 508 marker holds on the
    Mac (called once per edge)."""
    by_name: dict[str, list[int]] = {}
    for i, pkg in enumerate(packages):
        by_name.setdefault(pkg.name, []).append(i)
    pointed = [False] * len(packages)
    live = [0] * len(packages)  # edges pointing here that a Mac install may follow
    follows: list[list[tuple[int, bool]]] = [[] for _ in packages]  # per package: (target, optional) of its live edges
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
                    follows[i].append((t, edge.optional))
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
        for t, _ in follows[i]:
            live[t] -= 1
            if live[t] == 0 and t not in out and not packages[t].root:
                out[t] = why.get(t, out[i])
                stack.append(t)
    return OnMac(out, _optional_only(packages, follows, out))


def _optional_only(packages: Sequence[Locked], follows: list[list[tuple[int, bool]]], out: dict[int, str]) -> set[int]:
    """Packages kept but not reached from a root through required live edges; none when no root is listed
    (poetry, pdm: their direct dependencies are only known as the packages nothing points at)."""
    roots = [i for i, pkg in enumerate(packages) if pkg.root]
    if not roots:
        return set()
    required = set(roots)
    stack = list(roots)
    while stack:
        i = stack.pop()
        for t, optional in follows[i]:
            if not optional and t not in required and t not in out:
                required.add(t)
                stack.append(t)
    return {i for i in range(len(packages)) if i not in required and i not in out}
