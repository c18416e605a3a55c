"""Where a finding points in the repository, for outputs that annotate files (SARIF, GitHub annotations).

Code scanning resolves a result's path against the repository's root, not against the folder that was
scanned: scanning ``repo/src`` must report ``src/pkg/train.py``, never ``pkg/train.py``. The repository
root is found by reading the file system only (a ``.git`` directory, or a ``.git`` file holding
``gitdir: ...`` as in worktrees and submodules); git itself is never run. Without a repository the
scanned folder is the root.

Findings on a directory (``EXT101`` on ``csrc/``, ``DEP110`` on ``.``) or on a file without a line
point at line 1 of a real file, because an annotation needs a file that exists.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

# A directory-level finding is shown on the file that best stands for the folder.
PREFERRED_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "environment.yml",
                   "README.md", "README.rst", "README")


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git`` (a git directory with ``HEAD``, or a
    ``gitdir:`` file), or ``None``. Reads the file system only."""
    here = start.resolve()
    for d in (here, *here.parents):
        dot = d / ".git"
        try:
            if dot.is_dir() and (dot / "HEAD").is_file():
                return d
            if dot.is_file():
                with open(dot, encoding="utf-8", errors="replace") as fh:
                    if fh.readline(200).startswith("gitdir:"):
                        return d
        except OSError:
            continue
    return None


class Locator:
    """Maps a scan's relative paths to repository-relative POSIX paths and reads the lines they name.

    ``scanned`` is the path given to ``scan`` (a directory or a single file); finding paths are relative
    to it (to its parent for a single file).
    """

    def __init__(self, scanned: str | os.PathLike[str]) -> None:
        target = Path(scanned)
        self.scan_dir = (target if target.is_dir() else target.parent).resolve()
        self.repo = git_root(self.scan_dir)
        self.base = self.repo or self.scan_dir
        rel = self.scan_dir.relative_to(self.base).as_posix()
        self.prefix = "" if rel == "." else rel
        self._lines: dict[str, list[bytes] | None] = {}

    def repo_path(self, rel: str) -> str:
        """``rel`` (relative to the scanned folder) as a POSIX path relative to the repository root."""
        joined = PurePosixPath(self.prefix, rel) if self.prefix else PurePosixPath(rel)
        text = os.path.normpath(str(joined)).replace(os.sep, "/")
        return "" if text == "." else text

    def file_for(self, rel: str | None) -> str | None:
        """A real file for a finding at ``rel``: ``rel`` itself when it is a file, else a file in the
        directory it names (directly in it first: a declaration or README, then the first by name; else the
        first file of its first non-hidden subfolder, by name); ``None`` when the directory holds no file."""
        path = self.scan_dir / (rel or ".")
        if path.is_file():
            return rel
        if path.is_symlink() or not path.is_dir():
            return rel  # a link (INP104 loops), vanished or unreadable: keep what the finding says
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            names = sorted(n for n in names if os.path.isfile(os.path.join(folder, n))
                           and not os.path.islink(os.path.join(folder, n)))
            if names:
                pick = next((n for n in PREFERRED_FILES if n in names), None) or next(
                    (n for n in names if not n.startswith(".")), names[0])
                found = Path(folder, pick).relative_to(self.scan_dir).as_posix()
                return found
        return None

    def line_bytes(self, rel: str, line: int) -> bytes | None:
        """Line ``line`` (1-based) of the file at ``rel`` without its line ending, or ``None``."""
        if rel not in self._lines:
            try:
                self._lines[rel] = (self.scan_dir / rel).read_bytes().split(b"\n")
            except OSError:
                self._lines[rel] = None
        lines = self._lines[rel]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1].rstrip(b"\r")

    def code_point_column(self, rel: str, line: int, byte_column: int) -> int:
        """Python's ``ast`` columns count UTF-8 bytes; SARIF counts Unicode code points (its default
        ``columnKind``). Converts a 1-based byte column on ``line``; unchanged when the line is unknown."""
        text = self.line_bytes(rel, line)
        if text is None or byte_column < 1:
            return byte_column
        return len(text[: byte_column - 1].decode("utf-8", errors="replace")) + 1
