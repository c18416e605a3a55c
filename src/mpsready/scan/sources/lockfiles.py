"""Lock files: poetry.lock, uv.lock, pdm.lock, pylock.toml (TOML, ``[[package]]`` tables) and Pipfile.lock (JSON).

A lock file lists every transitive package of every platform; they are reported as locked (optional=False).
A package that an install on macOS arm64 leaves out (the markers of the lock's dependency edges exclude the
Mac: torch's ``nvidia-*-cu12`` and ``triton`` edges in uv.lock and poetry.lock) is still listed, with
``left_out_on_mac`` saying why, and is not judged (:mod:`.lockgraph`). Pipfile.lock has no graph: every
package of a section counts.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from mpsready.scan.markers import mac_python, marker_on_mac
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import tomlfile
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import (Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult,
                                             json_int, short_repr)
from mpsready.scan.sources.lines import LineIndex
from mpsready.scan.sources.lockgraph import Edge, Locked, OnMac, classify

TOML_LOCKS = ("poetry.lock", "uv.lock", "pdm.lock", "pylock.toml")


class LockfileSource(DependencySource):
    name = "lock file"

    def matches(self, relpath: str) -> bool:
        name = PurePosixPath(relpath).name
        return name in TOML_LOCKS or name == "Pipfile.lock" or (name.startswith("pylock.") and name.endswith(".toml"))

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        if PurePosixPath(relpath).name == "Pipfile.lock":
            self._pipfile_lock(relpath, text, result)
            return result
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        index = LineIndex(text)
        key = "package" if "package" in doc else "packages"
        packages = doc.get(key)
        if packages is not None and not isinstance(packages, list):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(key),
                                              f"{key} = {short_repr(packages)} ignored: expected [[{key}]] tables"))
            return result
        tables = [pkg for pkg in packages or [] if isinstance(pkg, dict) and isinstance(pkg.get("name"), str)]
        mac = _on_mac(doc, tables)
        after = 1  # tables come in file order: a second `name = "torch"` (another version) is found below the first
        for i, pkg in enumerate(tables):
            with line_guard(result, relpath, None, f"package {str(pkg.get('name'))[:60]!r}"):
                version = pkg.get("version")
                line = index.find(f'name = "{pkg["name"]}"', after)
                after = line + 1 if line is not None and line >= after else after
                result.dependencies.append(Dependency(
                    name=pkg["name"], path=relpath, line=line, specifier=f"=={version}" if isinstance(version, str) else "",
                    optional=i in mac.optional, group="lock", left_out_on_mac=mac.left_out.get(i)))
        return result

    def _pipfile_lock(self, relpath: str, text: str, result: SourceResult) -> None:
        try:
            doc = json.loads(text, parse_int=json_int)  # a 5,000-digit int would lose the whole file
        except json.JSONDecodeError as exc:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, exc.lineno, f"Pipfile.lock is not JSON: {exc.msg}"))
            return
        except RecursionError:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None, "Pipfile.lock JSON is nested too deeply to read"))
            return
        if not isinstance(doc, dict):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, 1,
                                              f"Pipfile.lock is a JSON {type(doc).__name__}, not an object; not read"))
            return
        index = LineIndex(text)
        for section, optional in (("default", False), ("develop", True)):
            table = doc.get(section)
            if table is None:
                continue
            if not isinstance(table, dict):
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(section),
                                                  f"Pipfile.lock {section!r} is {short_repr(table)}, not an object; ignored"))
                continue
            for name, spec in table.items():
                with line_guard(result, relpath, None, f"{section} {str(name)[:60]!r}"):
                    version = spec.get("version", "") if isinstance(spec, dict) else ""
                    result.dependencies.append(Dependency(name=name, path=relpath, line=index.find(name),
                                                          specifier=version if isinstance(version, str) else "",
                                                          optional=optional, group=f"lock:{section}"))


def _on_mac(doc: dict, tables: list[dict]) -> OnMac:
    """Which package tables a Mac install leaves out (index -> the lock's marker that excludes it) and which
    it installs only for an extra; nothing when some edge cannot be read (then no conclusion is safe and
    every package counts as required)."""
    nodes: list[Locked] = []
    for pkg in tables:
        edges: list[Edge] = []
        readable = _edges(pkg.get("dependencies"), edges)
        for key in ("optional-dependencies", "dev-dependencies"):  # uv: extras, and dev groups (installed by default)
            groups = pkg.get(key)
            if isinstance(groups, dict):
                readable = all([readable] + [_edges(items, edges, key == "optional-dependencies")
                                             for items in groups.values()])
            elif groups is not None:
                readable = False
        if not readable:
            return OnMac({}, set())
        source = pkg.get("source")
        version = pkg.get("version")
        nodes.append(Locked(name=canonicalize_name(pkg["name"]), version=version if isinstance(version, str) else None,
                            edges=edges, root=isinstance(source, dict) and ("editable" in source or "virtual" in source),
                            marker=_own_marker(pkg)))
    meta = doc.get("metadata")
    requires = doc.get("requires-python") or (meta.get("requires_python") or meta.get("python-versions")
                                              if isinstance(meta, dict) else None)
    python = mac_python(requires)
    return classify(nodes, lambda marker: marker_on_mac(marker, python))


def _edges(items: Any, edges: list[Edge], optional: bool = False) -> bool:
    """Append the edges of one ``dependencies`` value; False when part of it cannot be read.

    uv and PEP 751: ``[{ name = "x", version = "1", marker = "..." }]``; pdm: PEP 508 strings
    (``"x>=1; sys_platform == 'linux'"``); poetry: a table ``x = ">=1"`` / ``x = {version = ">=1",
    markers = "..."}`` / ``x = [{version = ..., markers = ...}, ...]``."""
    if items is None:
        return True
    if isinstance(items, dict):  # poetry
        for name, spec in items.items():
            for one in spec if isinstance(spec, list) else [spec]:
                marker = one.get("markers") if isinstance(one, dict) else None
                if not isinstance(one, (str, dict)) or not (marker is None or isinstance(marker, str)):
                    return False
                edges.append(Edge(canonicalize_name(name), None, marker, optional))
        return True
    if not isinstance(items, list):
        return False
    for item in items:
        if isinstance(item, str):  # pdm
            try:
                req = Requirement(item)
            except InvalidRequirement:
                return False
            edges.append(Edge(canonicalize_name(req.name), None, str(req.marker) if req.marker else None, optional))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return False
        version, marker = item.get("version"), item.get("marker")
        if not (marker is None or isinstance(marker, str)):
            return False
        edges.append(Edge(canonicalize_name(item["name"]), version if isinstance(version, str) else None, marker,
                          optional))
    return True


def _own_marker(pkg: dict) -> str | None:
    """A package's own PEP 508 marker: pdm / PEP 751 ``marker``, poetry 2 ``markers`` (a string, or one per
    dependency group, any of which installs it: a group of ``groups`` without a marker installs it anywhere);
    ``None`` when there is none or it is not text."""
    marker = pkg.get("marker", pkg.get("markers"))
    if isinstance(marker, dict):
        groups = pkg.get("groups")
        if isinstance(groups, list) and any(not isinstance(g, str) or g not in marker for g in groups):
            return None
        parts = [m for m in marker.values() if isinstance(m, str)]
        return " or ".join(f"({m})" for m in parts) if parts and len(parts) == len(marker) else None
    return marker if isinstance(marker, str) else None
