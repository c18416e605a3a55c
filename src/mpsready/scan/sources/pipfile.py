"""Pipfile: [packages] (required) and [dev-packages] (optional), plus [[source]] indexes."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.sources import pip_options, tomlfile
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, SourceResult
from mpsready.scan.sources.pyproject import find_line


class PipfileSource(DependencySource):
    name = "Pipfile"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "Pipfile"

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        for section, optional in (("packages", False), ("dev-packages", True)):
            table = doc.get(section)
            if not isinstance(table, dict):
                continue
            for name, spec in table.items():
                version = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
                result.dependencies.append(Dependency(name=name, path=relpath, line=find_line(text, name),
                                                      specifier="" if version == "*" else str(version),
                                                      optional=optional, group=section, raw=f"{name} = {spec!r}"))
        for src in doc.get("source") or []:
            if isinstance(src, dict) and isinstance(src.get("url"), str):
                pip_options.check_index_option(result, relpath, find_line(text, src["url"]), "--extra-index-url", src["url"])
        return result
