"""setup.cfg: [options] install_requires and [options.extras_require] (configparser, never executed)."""

from __future__ import annotations

import ast
import configparser
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceError, SourceResult
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
            why = str(exc).splitlines()[0]
            if isinstance(exc, configparser.ParsingError) and exc.errors:  # one line, not configparser's dump
                line, bad = exc.errors[0]
                try:  # configparser keeps the offending line as its repr()
                    bad = ast.literal_eval(bad)
                except (ValueError, SyntaxError):
                    pass
                why = f"line {line}: {bad.strip()!r} is neither 'key = value' nor a [section]"
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, line, f"setup.cfg does not parse: {why}"))
            return result
        if parser.has_option("options", "install_requires"):
            self._lines(result, text, relpath, parser.get("options", "install_requires"), False, None, files)
        if parser.has_section("options.extras_require"):
            for extra, value in parser.items("options.extras_require"):
                self._lines(result, text, relpath, value, True, f"extra:{extra}", files)
        return result

    def _lines(self, result, text, relpath, value, optional, group, files: ProjectFiles) -> None:
        if value.strip().startswith("file:"):
            # setuptools' `file:` directive (>= 62.6): requirements come from files next to setup.cfg; read them
            # as the project's files (an include that leaves the project is refused, never read)
            for name in value.strip()[len("file:"):].split(","):
                self._file(result, relpath, name.strip(), optional, group, files, find_line(text, value.strip()))
            return
        for item in value.replace(";\n", "\n").splitlines():
            item = item.split("#")[0].strip()
            if item:
                add_requirement(result, item, relpath, find_line(text, item), optional=optional, group=group)

    def _file(self, result, relpath, name, optional, group, files: ProjectFiles, line) -> None:
        if not name:
            return
        target = ProjectFiles.join(relpath, name)
        try:
            body = files.read_text(target)
        except SourceError as exc:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, line, f"file: {name!r} not read: {exc}"))
            return
        for n, item in enumerate(body.splitlines(), 1):
            item = item.split("#")[0].strip()
            if item and not item.startswith("-"):  # setuptools reads plain requirement lines, no pip options
                add_requirement(result, item, target, n, optional=optional, group=group)
