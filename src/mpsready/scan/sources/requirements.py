"""requirements*.txt / constraints*.txt, following ``-r``/``-c`` includes, markers and index options."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.sources import pip_options
from mpsready.scan.sources.interface import MAX_LINE, line_guard, long_line_finding
from mpsready.scan.sources.shell import lex_words
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, SourceError, SourceResult
from mpsready.findings import Severity
from mpsready.scan.rules import deps as D
from mpsready.scan.sources.pep508 import add_requirement, add_wheel_url
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import RawFinding

_MAX_INCLUDE_DEPTH = 10


# what may follow the "-" of an option (-r, --hash): a letter or a second dash
_OPTION_START = "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

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
            if len(line) > MAX_LINE:
                long_line_finding(result, relpath, lineno, len(line))
                continue
            with line_guard(result, relpath, lineno):
                if line.startswith("-"):
                    self._option(relpath, lineno, line, files, result, seen, depth)
                else:
                    req, options = split_options(line)
                    for opt, value in options:
                        pip_options.check_index_option(result, relpath, lineno, opt, value)
                    if " @ " in req or not ("://" in req.split(";")[0] or req.startswith((".", "/"))):
                        add_requirement(result, req, relpath, lineno)  # PEP 508, `name @ url` included
                    else:  # a bare URL or local path: a wheel file names its distribution and version
                        add_wheel_url(result, req.split(";")[0].strip(), relpath, lineno)
                        tag = pip_options.cuda_index_tag(req)
                        if tag is not None and "://" in req:
                            result.findings.append(RawFinding(D.CUDA_WHEEL_INDEX, relpath, lineno,
                                                              f"{req.split(';')[0].strip()} is a {tag} wheel URL",
                                                              severity=Severity.BLOCKER, evidence={"url": req, "cuda": tag}))

    def _option(self, relpath, lineno, line, files, result, seen, depth) -> None:
        try:
            words = lex_words(line, punctuation=False, comments=False)
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


def split_options(line: str) -> tuple[str, list[tuple[str, str]]]:
    """A requirement line cut into its requirement and its per-requirement options (``--hash=...``,
    ``--config-settings k=v``, ``--global-option x``, and options pip only accepts on the command line but
    that appear in the wild, ``--no-build-isolation``): ``("flash-attn==2.5.0", [("--no-build-isolation", "")])``.
    Options start at the first word that begins with ``-`` after whitespace."""
    cut = -1
    for i in range(1, len(line)):
        if line[i] == "-" and line[i - 1] in " \t" and (i + 1 < len(line) and line[i + 1] in _OPTION_START):
            cut = i
            break
    if cut < 0:
        return line, []
    req, rest = line[:cut].strip(), line[cut:]
    try:
        words = lex_words(rest, punctuation=False, comments=False)
    except ValueError:
        words = rest.split()
    options, i = [], 0
    while i < len(words):
        opt, _, inline = words[i].partition("=")
        takes_value = opt in ("--hash", "--config-settings", "-C", "--global-option", "--install-option") \
            or opt in pip_options.INDEX_OPTIONS
        value = inline if inline else (words[i + 1] if takes_value and i + 1 < len(words) else "")
        options.append((opt, value))
        i += 1 if (inline or not takes_value) else 2
    return req, options


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
