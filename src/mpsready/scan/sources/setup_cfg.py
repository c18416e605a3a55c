"""setup.cfg: [options] install_requires and [options.extras_require] (configparser, never executed)."""

from __future__ import annotations

import ast
import configparser
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceError, SourceResult
from mpsready.scan.sources.lines import LineIndex
from mpsready.scan.sources.pep508 import add_requirement


class SetupCfgSource(DependencySource):
    name = "setup.cfg"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).name == "setup.cfg"

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        parser = _parse(result, relpath, text)
        index = LineIndex(text)
        if parser.has_option("options", "install_requires"):
            self._lines(result, index, relpath, parser.get("options", "install_requires"), False, None, files)
        if parser.has_section("options.extras_require"):
            for extra, value in parser.items("options.extras_require"):
                self._lines(result, index, relpath, value, True, f"extra:{extra}", files)
        return result

    def _lines(self, result, index: LineIndex, relpath, value, optional, group, files: ProjectFiles) -> None:
        if value.strip().startswith("file:"):
            # setuptools' `file:` directive (>= 62.6): requirements come from files next to setup.cfg; read them
            # as the project's files (an include that leaves the project is refused, never read)
            for name in value.strip()[len("file:"):].split(","):
                self._file(result, relpath, name.strip(), optional, group, files, index.find(value.strip()))
            return
        for item in value.replace(";\n", "\n").splitlines():
            item = item.split("#")[0].strip()
            if item:
                add_requirement(result, item, relpath, index.find(item), optional=optional, group=group)

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


def _parser(strict: bool) -> configparser.ConfigParser:
    return configparser.ConfigParser(interpolation=None, strict=strict)


def _parse(result: SourceResult, relpath: str, text: str) -> configparser.ConfigParser:
    """The sections configparser can read, with an INP111 finding per problem. configparser stops at a
    missing first section header and at a duplicate section or option, and collects other bad lines until
    the end: lines before the first ``[section]`` are then skipped (line numbers kept) and duplicates
    merged, so one bad line does not hide the rest of the file."""
    lines = text.splitlines()
    strict = True
    for _attempt in range(3):
        parser = _parser(strict)
        try:
            parser.read_string("\n".join(lines), source=relpath)
            return parser
        except configparser.MissingSectionHeaderError as exc:
            first = next((n for n, line in enumerate(lines) if parser.SECTCRE.match(line.strip())), len(lines))
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, exc.lineno,
                                              f"setup.cfg: line {exc.lineno}: {_shown(exc.line)} comes before any "
                                              f"[section]; {'line 1' if first == 1 else f'lines 1-{first}'} not read"))
            lines = [""] * first + lines[first:]
        except (configparser.DuplicateSectionError, configparser.DuplicateOptionError) as exc:
            what = (f"option {exc.option!r} in section {exc.section!r}"
                    if isinstance(exc, configparser.DuplicateOptionError) else f"section {exc.section!r}")
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, getattr(exc, "lineno", None),
                                              f"setup.cfg: line {exc.lineno}: {what} repeated; the later value is used"))
            strict = False
        except configparser.ParsingError as exc:  # raised at the end: the sections it could read are in parser
            for line, bad in exc.errors[:20]:
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, line,
                                                  f"setup.cfg: line {line}: {_shown(bad, quoted=True)} is neither 'key = value' "
                                                  "nor a [section]; ignored"))
            return parser
        except configparser.Error as exc:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, getattr(exc, "lineno", None),
                                              f"setup.cfg does not parse: {str(exc).splitlines()[0][:200]}"))
            return _parser(False)
    return parser


def _shown(line: object, quoted: bool = False) -> str:
    """An offending line, stripped and bounded; ``quoted`` when configparser kept it as its repr()."""
    text = str(line)
    if quoted and len(text) < 1000:
        try:
            text = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    text = str(text).strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")
