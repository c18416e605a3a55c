"""pyproject.toml: PEP 621 (dependencies, optional-dependencies), PEP 735 groups, Poetry, uv indexes."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import pip_options, tomlfile
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.pep508 import add_requirement


def find_line(text: str, needle: str) -> int | None:
    """First line containing ``needle`` as written (TOML keeps no positions; this places findings)."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    return None


class PyprojectSource(DependencySource):
    name = "pyproject"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "pyproject.toml"

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        try:
            doc = tomlfile.loads(text)
        except tomlfile.TOMLDecodeError as exc:
            result.findings.append(RawFinding(I.BROKEN_TOML, relpath, tomlfile.error_line(exc, text), f"TOML does not parse: {exc}"))
            return result
        project = doc.get("project") if isinstance(doc.get("project"), dict) else {}
        self._strings(result, text, relpath, project.get("dependencies"), optional=False, group=None)
        for extra, reqs in _items(project.get("optional-dependencies")):
            self._strings(result, text, relpath, reqs, optional=True, group=f"extra:{extra}")
        for group, reqs in _items(doc.get("dependency-groups")):
            self._strings(result, text, relpath, [r for r in _list(reqs) if isinstance(r, str)], optional=True,
                          group=f"group:{group}")
        tool = doc.get("tool") if isinstance(doc.get("tool"), dict) else {}
        poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
        self._poetry(result, text, relpath, poetry.get("dependencies"), optional=False, group=None)
        self._poetry(result, text, relpath, poetry.get("dev-dependencies"), optional=True, group="group:dev")
        for group, body in _items(poetry.get("group")):
            if isinstance(body, dict):
                self._poetry(result, text, relpath, body.get("dependencies"), optional=bool(body.get("optional", True)),
                             group=f"group:{group}")
        for src in _list(poetry.get("source")) + _list((tool.get("uv") or {}).get("index") if isinstance(tool.get("uv"), dict) else []):
            if isinstance(src, dict) and isinstance(src.get("url"), str):
                pip_options.check_index_option(result, relpath, find_line(text, src["url"]), "--extra-index-url", src["url"])
        return result

    def _strings(self, result, text, relpath, reqs, *, optional, group) -> None:
        for req in _list(reqs):
            if isinstance(req, str):
                add_requirement(result, req, relpath, find_line(text, req), optional=optional, group=group)

    def _poetry(self, result, text, relpath, deps, *, optional, group) -> None:
        for name, spec in _items(deps):
            if name.lower() == "python":
                continue
            opt = optional or (isinstance(spec, dict) and bool(spec.get("optional")))
            version = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
            result.dependencies.append(Dependency(name=name, path=relpath, line=find_line(text, name), specifier=str(version),
                                                  optional=opt, group=group, raw=f"{name} = {spec!r}"))


def _items(value) -> list[tuple[str, object]]:
    return list(value.items()) if isinstance(value, dict) else []


def _list(value) -> list:
    return value if isinstance(value, list) else []
