"""Pipfile: [packages] (required) and [dev-packages] (optional), plus [[source]] indexes."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import pip_options, tomlfile
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import (Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult,
                                             short_repr)
from mpsready.scan.sources.lines import LineIndex


class PipfileSource(DependencySource):
    name = "Pipfile"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "Pipfile"

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        index = LineIndex(text)
        for section, optional in (("packages", False), ("dev-packages", True)):
            table = doc.get(section)
            if table is None:
                continue
            if not isinstance(table, dict):
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(section),
                                                  f"[{section}] = {short_repr(table)} ignored: expected a table"))
                continue
            for name, spec in table.items():
                with line_guard(result, relpath, None, f"[{section}] {str(name)[:60]!r}"):
                    version = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
                    version = version if isinstance(version, str) else ""
                    result.dependencies.append(Dependency(name=name, path=relpath, line=index.find(name),
                                                          specifier="" if version == "*" else version,
                                                          optional=optional, group=section,
                                                          raw=f"{name} = {short_repr(spec)}"))
        sources = doc.get("source")
        if sources is not None and not isinstance(sources, list):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find("source"),
                                              f"source = {short_repr(sources)} ignored: expected [[source]] tables"))
            sources = []
        for src in sources or []:
            if isinstance(src, dict) and isinstance(src.get("url"), str):
                pip_options.check_index_option(result, relpath, index.find(src["url"]), "--extra-index-url", src["url"])
        return result
