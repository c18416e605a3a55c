"""pyproject.toml: PEP 621 (dependencies, optional-dependencies), PEP 735 groups, Poetry, uv indexes."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import pip_options, tomlfile
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import (Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult,
                                             short_repr)
from mpsready.scan.sources.lines import LineIndex
from mpsready.scan.sources.pep508 import add_requirement


class PyprojectSource(DependencySource):
    name = "pyproject"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "pyproject.toml"

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        index = LineIndex(text)  # TOML keeps no positions: one index of the file's lines places every finding
        project = _table(result, index, relpath, doc, "project", "[project]")
        self._strings(result, index, relpath, project.get("dependencies"), optional=False, group=None,
                      where="[project] dependencies")
        # an extra or group repeating a main requirement must be placed on its own line, not on the main one
        # (one line for both would merge them and relabel the required dependency optional)
        extras_at = index.find("optional-dependencies")
        for extra, reqs in _items(_table(result, index, relpath, project, "optional-dependencies",
                                         "[project] optional-dependencies")):
            self._strings(result, index, relpath, reqs, optional=True, group=f"extra:{extra}",
                          where=f"[project.optional-dependencies] {extra}", start=index.key_line(extra, extras_at))
        groups_at = index.find("dependency-groups")
        for group, reqs in _items(doc.get("dependency-groups")):
            # PEP 735 entries may also be {include-group = "..."} tables: only strings are requirements
            self._strings(result, index, relpath, [r for r in _list(reqs) if isinstance(r, str)], optional=True,
                          group=f"group:{group}", where=f"[dependency-groups] {group}",
                          start=index.key_line(group, groups_at))
        tool = _dict(doc.get("tool"))
        poetry = _dict(tool.get("poetry"))
        self._poetry(result, index, relpath, poetry.get("dependencies"), optional=False, group=None)
        self._poetry(result, index, relpath, poetry.get("dev-dependencies"), optional=True, group="group:dev")
        for group, body in _items(poetry.get("group")):
            if isinstance(body, dict):
                self._poetry(result, index, relpath, body.get("dependencies"), optional=bool(body.get("optional", True)),
                             group=f"group:{group}")
        for src in _list(poetry.get("source")) + _list((tool.get("uv") or {}).get("index") if isinstance(tool.get("uv"), dict) else []):
            if isinstance(src, dict) and isinstance(src.get("url"), str):
                pip_options.check_index_option(result, relpath, index.find(src["url"]), "--extra-index-url", src["url"])
        return result

    def _strings(self, result, index, relpath, reqs, *, optional, group, where, start=None) -> None:
        """Check each PEP 508 string; a value of the wrong type is an INP111 finding (pip refuses such a
        pyproject), and a lone string is still checked as one requirement so its dependency is not lost."""
        if reqs is None:
            return
        if isinstance(reqs, str):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(reqs, start),
                                              f"{where} is a string, not a list of requirements; checked as one"))
            reqs = [reqs]
        elif not isinstance(reqs, list):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None,
                                              f"{where} = {short_repr(reqs)} ignored: expected a list of requirement strings"))
            return
        for req in reqs:
            with line_guard(result, relpath, None, f"{where} entry"):
                if isinstance(req, str):
                    add_requirement(result, req, relpath, index.find(req, start), optional=optional, group=group)
                else:
                    result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None,
                                                      f"{where}: {short_repr(req)} ignored: a requirement must be a string"))

    def _poetry(self, result, index, relpath, deps, *, optional, group) -> None:
        for name, spec in _items(deps):
            with line_guard(result, relpath, None, f"poetry dependency {str(name)[:60]!r}"):
                if name.lower() == "python":
                    continue
                opt = optional or (isinstance(spec, dict) and bool(spec.get("optional")))
                version = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
                result.dependencies.append(Dependency(name=name, path=relpath, line=index.find(name),
                                                      specifier=version if isinstance(version, str) else "",
                                                      optional=opt, group=group, raw=f"{name} = {short_repr(spec)}"))


def _table(result: SourceResult, index: LineIndex, relpath: str, parent: dict, key: str, where: str) -> dict:
    """``parent[key]`` when it is a table; otherwise ``{}``, with an INP111 finding if it is something else."""
    value = parent.get(key)
    if value is None or isinstance(value, dict):
        return value or {}
    result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None,
                                      f"{where} = {short_repr(value)} ignored: expected a table"))
    return {}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value) -> list[tuple[str, object]]:
    return list(value.items()) if isinstance(value, dict) else []


def _list(value) -> list:
    return value if isinstance(value, list) else []
