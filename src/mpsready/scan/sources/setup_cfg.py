"""setup.cfg: [options] install_requires and [options.extras_require] (configparser, never executed)."""

from __future__ import annotations

import configparser
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.pep508 import add_requirement
from mpsready.scan.sources.pyproject import find_line


class SetupCfgSource(DependencySource):
    name = "setup.cfg"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "setup.cfg"

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text, source=relpath)
        except configparser.Error as exc:
            line = getattr(exc, "lineno", None)
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, line, f"setup.cfg does not parse: {exc.message if hasattr(exc, 'message') else exc}"))
            return result
        if parser.has_option("options", "install_requires"):
            self._lines(result, text, relpath, parser.get("options", "install_requires"), False, None)
        if parser.has_section("options.extras_require"):
            for extra, value in parser.items("options.extras_require"):
                self._lines(result, text, relpath, value, True, f"extra:{extra}")
        return result

    def _lines(self, result, text, relpath, value, optional, group) -> None:
        for item in value.replace(";\n", "\n").splitlines():
            item = item.split("#")[0].strip()
            if item:
                add_requirement(result, item, relpath, find_line(text, item), optional=optional, group=group)
