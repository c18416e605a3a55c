"""Walk a project tree: which files to read, and a finding for every file or link that cannot be.

Never follows a symbolic link out of the project (INP101) or into a directory already being walked (INP104);
links inside the project are skipped (their targets are walked once, by real path); never reads a file
above the size limit (INP103) or one that is not a regular file (a FIFO would block: INP101), reports
unreadable directories and files (INP101), and skips
version-control, cache and virtual-environment directories.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import ALL_SOURCES
from mpsready.scan.sources.interface import RawFinding

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
             ".ruff_cache", ".venv", "venv", ".eggs", ".ipynb_checkpoints", ".idea", ".vscode", ".cache"}


@dataclass(frozen=True)
class ProjectFile:
    relpath: str  # POSIX, relative to the scan root
    abspath: str  # absolute, for reading

    @property
    def path(self) -> Path:
        return Path(self.abspath)
    size: int
    mtime_ns: int = 0
    python: bool = False
    notebook: bool = False
    cuda: bool = False
    declaration: bool = False
    config: bool = False  # a YAML file: a possible config surface (Hydra, OmegaConf, plain YAML)


@dataclass
class Walk:
    files: list[ProjectFile] = field(default_factory=list)
    findings: list[RawFinding] = field(default_factory=list)


_CODE_EXTS = {".py": "python", ".pyw": "python", ".ipynb": "notebook", ".cu": "cuda", ".cuh": "cuda"}
# extensions (and bare names) a declaration source may read; anything else skips the source checks
_DECL_EXTS = {".txt", ".in", ".toml", ".cfg", ".yml", ".yaml", ".lock", ".sh", ".bash", ".ipynb", ".py", ".dockerfile"}


def classify(relpath: str) -> dict[str, bool]:
    name = relpath.rsplit("/", 1)[-1]
    ext = os.path.splitext(name)[1].lower()
    kind = _CODE_EXTS.get(ext)
    maybe_decl = ext in _DECL_EXTS or ext == "" or name.startswith(("Dockerfile", "Containerfile", "Pipfile"))
    return {
        "python": kind == "python",
        "notebook": kind == "notebook",
        "cuda": kind == "cuda",
        "declaration": (name == "setup.py") if ext == ".py" else (
            kind == "notebook" or (maybe_decl and any(src.matches(relpath) for src in ALL_SOURCES))),
        "config": ext in (".yaml", ".yml"),
    }


def walk(root: Path, *, exclude: tuple[str, ...] = (), max_file_size: int) -> Walk:
    """All interesting files under ``root`` (a directory) in sorted order, plus INP findings."""
    out = Walk()
    real_root = os.path.realpath(root)

    def excluded(rel: str) -> bool:
        return any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel + "/", pat) for pat in exclude)

    def visit(dirpath: str, dirreal: str, rel: str, ancestors: frozenset[str]) -> None:
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.findings.append(RawFinding(I.UNREADABLE, rel or ".", None, f"directory not readable: {exc.strerror or exc}"))
            return
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            if excluded(child):
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_link, is_dir = True, False
            if is_link and not os.path.exists(entry.path):
                out.findings.append(RawFinding(I.SYMLINK_LOOP, child, None, "broken symbolic link (or a link loop); not followed"))
                continue
            if is_link and not _inside(os.path.realpath(entry.path), real_root):
                # the scan reads the project and nothing else (a link to /etc or to $HOME is not the project)
                if is_dir or any(classify(child).values()):
                    out.findings.append(RawFinding(I.UNREADABLE, child, None,
                                                   f"symbolic link to {os.path.realpath(entry.path)}, outside the scanned "
                                                   "project; not followed"))
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or entry.name.endswith(".egg-info"):
                    continue
                real = os.path.realpath(entry.path) if is_link else os.path.join(dirreal, entry.name)
                if real in ancestors:
                    out.findings.append(RawFinding(I.SYMLINK_LOOP, child, None,
                                                   f"symbolic link loops back to {_rel_to(real, real_root)}; not followed"))
                    continue
                if is_link:
                    continue  # a link to a directory inside the project: walked once, through its real path
                if os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                    continue  # a virtual environment inside the project
                visit(entry.path, real, child, ancestors | {real})
                continue
            kinds = classify(child)
            if not any(kinds.values()):
                continue
            if is_link:  # links out of the project were refused above: the target is scanned through its real path
                continue
            try:
                st = entry.stat(follow_symlinks=True)
                size, mtime = st.st_size, st.st_mtime_ns
            except OSError as exc:
                out.findings.append(RawFinding(I.UNREADABLE, child, None, f"cannot stat: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                # a FIFO would block the read forever; sockets and devices are not source files either
                out.findings.append(RawFinding(I.UNREADABLE, child, None,
                                               f"not a regular file ({_file_kind(st.st_mode)}); not read"))
                continue
            if size > max_file_size:
                out.findings.append(RawFinding(I.TOO_LARGE, child, None,
                                               f"{size} bytes is above the {max_file_size}-byte limit; skipped",
                                               evidence={"bytes": size, "limit": max_file_size}))
                continue
            out.files.append(ProjectFile(child, entry.path, size, mtime, **kinds))

    visit(str(root), real_root, "", frozenset({real_root}))
    return out


def _rel_to(real: str, real_root: str) -> str:
    rel = os.path.relpath(real, real_root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"
