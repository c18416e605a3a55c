"""The declaration-source interface: one small class per kind of file that declares dependencies.

A source says which files it reads (:meth:`DependencySource.matches`) and turns one file into
declared :class:`Dependency` records plus findings about the file itself
(:meth:`DependencySource.collect`). Sources never execute anything and never write.
"""

from __future__ import annotations

import abc
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mpsready.findings import Severity


@dataclass(frozen=True)
class Dependency:
    """One declared dependency.

    ``name`` as written (normalise with :func:`mpsready.scan.knowledge.canonical_name`); ``specifier``
    such as ``==2.1.0+cu121``; ``marker`` the PEP 508 marker text; ``optional`` True for extras,
    optional groups and dev groups; ``ecosystem`` ``pip`` or ``conda``; ``path``/``line`` where declared.
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

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root.resolve()
        self.max_bytes = max_bytes

    def read_text(self, relpath: str) -> str:
        """Text of a file under the root; raises :class:`SourceError` (missing, outside, too large, not UTF-8)."""
        target = (self.root / relpath).resolve()
        if target != self.root and self.root not in target.parents:
            raise SourceError(f"{relpath} is outside the scanned project")
        try:
            st = target.stat()
            if not stat.S_ISREG(st.st_mode):  # an include naming a FIFO would block the read forever
                raise SourceError(f"{relpath or '.'} is not a regular file")
            if st.st_size > self.max_bytes:
                raise SourceError(f"{relpath} is larger than {self.max_bytes} bytes")
            data = target.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read {relpath}: {exc.strerror or exc}") from None
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
    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        """Dependencies and file findings from one file's text. Never raises on malformed content."""
