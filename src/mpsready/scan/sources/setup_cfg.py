"""setup.cfg: [options] install_requires and [options.extras_require] (configparser, never executed)."""

from __future__ import annotations

import ast
import configparser
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import MAX_LINE, line_guard
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
            with line_guard(result, relpath, None, "requirement"):
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
    for n, why in prefilter(lines):
        result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, n, f"setup.cfg: line {n}: {why}; ignored"))
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


MAX_BLANK_RUN = 16  # blanks in a row inside an option name before its "=" or ":"


def prefilter(lines: list[str]) -> list[tuple[int, str]]:
    """Blank (in place) the lines configparser would reject only after a regex super-linear in them, and
    return ``(line number, why)`` for each; one linear pass. configparser matches an option line with
    ``(?P<option>.*?)\\s*(?P<vi>=|:)...`` (Lib/configparser.py, ``_OPT_TMPL``): on a line without ``=`` or ``:``,
    or with a long run of blanks inside the option name, each start of the lazy group rescans the blanks
    (a 20,000-character line took 2 s, one of 1 MB hours). Such a line is neither an option nor a section, so
    configparser would reject it anyway; a line over :data:`MAX_LINE` characters is blanked too. Lines
    configparser reads as a continuation of the option above (indented deeper) never meet that regex and are
    kept, as are section headers and comments; its own rules are followed (``RawConfigParser._read``)."""
    out: list[tuple[int, str]] = []
    in_section = has_option = False
    indent_level = 0
    for n, line in enumerate(lines, 1):
        value = line.strip()
        if len(line) > MAX_LINE:
            lines[n - 1] = ""
            out.append((n, f"{len(line):,} characters, over the {MAX_LINE:,} a line may have"))
            continue
        if not value or value.startswith(("#", ";")):
            continue
        indent = len(line) - len(line.lstrip())
        if in_section and has_option and indent > indent_level:
            continue  # a continuation line: appended to the value, no regex
        indent_level = indent
        if value.startswith("[") and value.rfind("]") >= 2:
            in_section, has_option = True, False
            continue
        if not in_section:
            continue  # configparser's MissingSectionHeaderError (a linear regex); handled by _parse
        cut = min((i for i in (value.find("="), value.find(":")) if i >= 0), default=-1)
        if cut < 0:
            lines[n - 1] = ""
            out.append((n, f"{_shown(value)} is neither 'key = value' nor a [section]"))
            continue
        name = value[:cut].rstrip()
        if _longest_blank_run(name) > MAX_BLANK_RUN:
            lines[n - 1] = ""
            out.append((n, f"option name {_shown(name)} has more than {MAX_BLANK_RUN} blanks in a row"))
            continue
        has_option = True
    return out


def _longest_blank_run(text: str) -> int:
    if "  " not in text and "\t" not in text:
        return 1 if " " in text else 0
    best = run = 0
    for ch in text:
        run = run + 1 if ch in " \t" else 0
        best = max(best, run)
    return best


def read_config(text: str) -> configparser.ConfigParser:
    """``text`` read by configparser after :func:`prefilter` (for callers that need no findings: the console
    scripts of :mod:`mpsready.scan.model.entries`); never raises."""
    lines = text.splitlines()
    prefilter(lines)
    parser = _parser(False)
    try:
        parser.read_string("\n".join(lines))
    except configparser.Error:
        pass
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
