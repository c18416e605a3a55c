"""requirements*.txt / constraints*.txt, following ``-r``/``-c`` includes, markers and index options."""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from mpsready.scan.sources import pip_options
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, SourceError, SourceResult
from mpsready.scan.sources.pep508 import add_requirement
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import RawFinding

_MAX_INCLUDE_DEPTH = 10


def is_requirements_file(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    name = p.name.lower()
    if p.suffix in (".txt", ".in") and ("requirement" in name or name.startswith("constraint")):
        return True
    return p.suffix in (".txt", ".in") and any(part.lower() in ("requirements", "reqs") for part in p.parts[:-1])


class RequirementsSource(DependencySource):
    name = "requirements"

    def matches(self, relpath: str) -> bool:
        return is_requirements_file(relpath)

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        self._collect(relpath, text, files, result, seen={relpath}, depth=0)
        return result

    def _collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult, seen: set[str],
                 depth: int) -> None:
        for lineno, line in _logical_lines(text):
            if line.startswith("-"):
                self._option(relpath, lineno, line, files, result, seen, depth)
            elif "://" in line.split(";")[0] or line.startswith((".", "/")):
                continue  # URL or local path install: nothing to look up
            else:
                add_requirement(result, line.split(" --hash")[0], relpath, lineno)

    def _option(self, relpath, lineno, line, files, result, seen, depth) -> None:
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        opt, value = words[0], words[1] if len(words) > 1 else ""
        if "=" in opt:
            opt, value = opt.split("=", 1)
        if opt in ("-r", "--requirement", "-c", "--constraint"):
            if not value:
                return
            target = ProjectFiles.join(relpath, value)
            if target in seen or depth >= _MAX_INCLUDE_DEPTH:
                return
            seen.add(target)
            try:
                inc = files.read_text(target)
            except SourceError as exc:
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, lineno, f"include {value!r} not read: {exc}"))
                return
            self._collect(target, inc, files, result, seen, depth + 1)
        elif opt in ("-e", "--editable"):
            return
        else:
            pip_options.check_index_option(result, relpath, lineno, opt, value)


def _logical_lines(text: str):
    """(first line number, stripped logical line) with comments removed and ``\\`` continuations joined."""
    buf, start = "", None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw
        if line.lstrip().startswith("#"):
            line = ""
        elif " #" in line or "\t#" in line:
            line = line.split(" #")[0].split("\t#")[0]
        if start is None:
            start = n
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip():
            yield start, buf.strip()
        buf, start = "", None
    if buf.strip():
        yield start, buf.strip()
