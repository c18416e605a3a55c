"""The declaration-source interface: one small class per kind of file that declares dependencies.

A source says which files it reads (:meth:`DependencySource.matches`) and turns one file into
declared :class:`Dependency` records plus findings about the file itself
(:meth:`DependencySource.collect`). Sources never execute anything and never write.
"""

from __future__ import annotations

import abc
import reprlib
import stat
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mpsready.findings import Severity


@dataclass(frozen=True)
class Dependency:
    """One declared dependency.

    ``name`` as written (normalise with :func:`mpsready.scan.knowledge.canonical_name`); ``specifier``
    such as ``==2.1.0+cu121``; ``marker`` the PEP 508 marker text; ``optional`` True for extras,
    optional groups and dev groups; ``ecosystem`` ``pip`` or ``conda``; ``path``/``line`` where declared;
    ``left_out_on_mac`` when the source knows a Mac install skips the package although no marker sits on
    its own line (a lock file's graph, :mod:`.lockgraph`): the marker of the lock that excludes it.
    """

    name: str
    path: str
    line: int | None = None
    specifier: str = ""
    marker: str | None = None
    optional: bool = False
    group: str | None = None
    ecosystem: str = "pip"
    raw: str = ""
    left_out_on_mac: str | None = None


@dataclass(frozen=True)
class RawFinding:
    """A finding about a declaration file, before the engine adds scope and suppression."""

    rule: Any  # mpsready.rules.Rule
    path: str
    line: int | None
    message: str
    severity: Severity | None = None
    fix: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class SourceResult:
    dependencies: list[Dependency] = field(default_factory=list)
    findings: list[RawFinding] = field(default_factory=list)


class SourceError(Exception):
    """A declaration file that cannot be read at all (the engine turns it into an INP finding)."""


class ProjectFiles:
    """Read-only access to files under the scan root, for sources that follow includes.

    Paths are POSIX paths relative to ``root``; reads outside the root are refused so an include
    such as ``-r ../../etc/passwd`` cannot escape the project.
    """

    def __init__(self, root: Path, max_bytes: int, overlay: Mapping[str, bytes] | None = None) -> None:
        self.root = root.resolve()
        self.max_bytes = max_bytes
        self.overlay = overlay or {}  # relpath -> bytes read instead of the disk's (migrate's later rounds)

    def read_text(self, relpath: str) -> str:
        """Text of a file under the root; raises :class:`SourceError` (missing, outside, too large, not UTF-8)."""
        if relpath in self.overlay:
            try:
                return self.overlay[relpath].decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise SourceError(f"{relpath} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        try:
            target = (self.root / relpath).resolve()
        except (ValueError, UnicodeError, OSError) as exc:  # a NUL byte or a lone surrogate in a name from setup.py
            raise SourceError(f"{relpath!r} is not a usable file name ({type(exc).__name__})") from None
        if target != self.root and self.root not in target.parents:
            raise SourceError(f"{relpath} is outside the scanned project")
        try:
            st = target.stat()
            if not stat.S_ISREG(st.st_mode):  # an include naming a FIFO would block the read forever
                raise SourceError(f"{relpath or '.'} is not a regular file")
            if st.st_size > self.max_bytes:
                raise SourceError(f"{relpath} is larger than {self.max_bytes} bytes")
            data = target.read_bytes()
        except (OSError, ValueError, UnicodeError) as exc:
            raise SourceError(f"cannot read {relpath}: {getattr(exc, 'strerror', None) or exc}") from None
        if b"\0" in data:
            raise SourceError(f"{relpath} is binary")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceError(f"{relpath} is not UTF-8 ({exc.reason} at byte {exc.start})") from None

    @staticmethod
    def join(relpath: str, other: str) -> str:
        """``other`` relative to the directory of ``relpath``, normalised (``a/b.txt`` + ``../c.txt`` -> ``c.txt``).

        A path that climbs above the root keeps its leading ``..`` (and an absolute path stays absolute) so
        that :meth:`read_text` refuses it as outside the project instead of reading a look-alike inside it."""
        if PurePosixPath(other).is_absolute():
            return other
        parts: list[str] = []
        for part in (PurePosixPath(relpath).parent / other).parts:
            if part == "..":
                if parts and parts[-1] != "..":
                    parts.pop()
                else:
                    parts.append("..")
            elif part != ".":
                parts.append(part)
        return "/".join(parts)


class DependencySource(abc.ABC):
    """One kind of declaration file."""

    name: str = "?"

    @abc.abstractmethod
    def matches(self, relpath: str) -> bool:
        """Whether this source reads the file at ``relpath`` (POSIX, relative to the scan root)."""

    @abc.abstractmethod
    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        """Dependencies and file findings from one file's text, added to ``result`` (a new one when
        ``None``) and returned. Never raises on malformed content; call it through :func:`read_source`,
        which also keeps what was read when a reader bug raises half-way."""


# CPU seconds one declaration file may take (this thread's CPU time, not wall time, so a busy machine does not
# trip it). The readers are linear (the 4 MB inputs of benchmarks/hostile_bench.py take under 10 s); this is
# the last guard against a parser that is not: the reader stops at its next line and says so (INP116).
FILE_TIME_BUDGET = 30.0
# characters of one (logical) line a reader hands to a parser or a regex; longer lines are a finding (INP115)
MAX_LINE = 20_000


class BudgetSpent(BaseException):
    """Raised by :func:`line_guard` once the file's :data:`FILE_TIME_BUDGET` is spent; caught by
    :func:`read_source` (a ``BaseException``, so that a reader's own ``except Exception`` lets it through)."""

    def __init__(self, line: int | None):
        super().__init__(line)
        self.line = line


_budget = threading.local()  # .deadline: this thread's time.thread_time() at which the file's budget is spent


def _deadline() -> float:
    return getattr(_budget, "deadline", float("inf"))


class line_guard:
    """``with line_guard(result, relpath, line, what):`` around the reading of one line or one entry: an
    exception there becomes one INP115 finding (the line, the reader's error) and the reader goes on with the
    next line; the file's time budget is checked on entry (:class:`BudgetSpent`)."""

    __slots__ = ("result", "relpath", "line", "what")

    def __init__(self, result: "SourceResult", relpath: str, line: int | None, what: str = "line"):
        self.result, self.relpath, self.line, self.what = result, relpath, line, what

    def __enter__(self) -> None:
        if time.thread_time() > _deadline():
            raise BudgetSpent(self.line)

    def __exit__(self, kind, exc, _tb) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        from mpsready.scan.rules import inputs as I

        why = str(exc).splitlines()[0][:200] if str(exc) else ""
        where = f"line {self.line}" if self.line else self.what
        self.result.findings.append(RawFinding(
            I.LINE_NOT_READ, self.relpath, self.line,
            f"{where} not read: {type(exc).__name__}{': ' + why if why else ''}; the rest of the file was read",
            evidence={"error": type(exc).__name__}))
        return True


def long_line_finding(result: "SourceResult", relpath: str, line: int | None, length: int) -> None:
    """The INP115 finding for a line over :data:`MAX_LINE` characters that a reader skips."""
    from mpsready.scan.rules import inputs as I

    result.findings.append(RawFinding(I.LINE_NOT_READ, relpath, line,
                                      f"line {line} not read: {length:,} characters, over the {MAX_LINE:,} a "
                                      "declaration line may have; the rest of the file was read",
                                      evidence={"error": "line too long", "characters": length}))


def read_source(source: DependencySource, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
    """``source.collect`` made total: whatever it raises (a bug in the reader, ``RecursionError`` or
    ``MemoryError`` from a parser on absurd input) becomes one INP113 finding naming the file and the
    reason, and the dependencies and findings read before that point are kept. A reader that spends the
    file's :data:`FILE_TIME_BUDGET` is stopped at its next :func:`line_guard` (one INP116 finding)."""
    from mpsready.scan.rules import inputs as I

    result = SourceResult()
    outer = _deadline()
    _budget.deadline = min(outer, time.thread_time() + FILE_TIME_BUDGET)
    try:
        source.collect(relpath, text, files, result)
    except BudgetSpent as spent:
        at = f" at line {spent.line}" if spent.line else ""
        result.findings.append(RawFinding(
            I.READER_TIME_BUDGET, relpath, spent.line,
            f"{source.name} reader stopped{at}: the file's time budget of {FILE_TIME_BUDGET:g} s CPU was spent; "
            f"{len(result.dependencies)} dependencies read before that are kept",
            evidence={"reader": source.name, "budget_seconds": FILE_TIME_BUDGET}))
    except Exception as exc:  # includes RecursionError and MemoryError
        why = str(exc).splitlines()[0][:200] if str(exc) else ""
        result.findings.append(RawFinding(
            I.READER_FAILED, relpath, None,
            f"{source.name} reader stopped: {type(exc).__name__}{': ' + why if why else ''}; "
            f"{len(result.dependencies)} dependencies read before that are kept",
            evidence={"reader": source.name, "error": type(exc).__name__}))
    finally:
        _budget.deadline = outer
    return result


def json_int(digits: str) -> int | float:
    """``json.loads(parse_int=...)``: an int, or ``inf`` past 4,000 digits, where ``int()`` would raise
    (Python's int-to-str digit limit, 4,300) and the whole document would be lost."""
    return int(digits) if len(digits) <= 4000 else float("inf")


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxtuple = 3, 6, 6, 6
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 80, 80, 40


def short_repr(value: Any) -> str:
    """``repr`` bounded in depth and length, for messages: a parsed file may hold values nested 10**5 deep
    (``repr`` would raise ``RecursionError``) or shared 10**12 times through YAML aliases."""
    try:
        return _SHORT.repr(value)
    except (RecursionError, ValueError):  # ValueError: an int past the int-to-str digit limit
        return f"<{type(value).__name__}>"
