"""Walk a project tree: which files to read, and a finding for every file or link that cannot be.

Never follows a symbolic link out of the project (INP101) or into a directory already being walked (INP104);
links inside the project are skipped (their targets are walked once, by real path); never reads a file
above the size limit (INP103) or one that is not a regular file (a FIFO would block: INP101), reports
unreadable directories and files (INP101), and skips
version-control, cache and virtual-environment directories, directories more than 256 levels deep (INP112)
and what the project's ``.gitignore`` files ignore, except a file the project's git index tracks (git's own rule:
a ``.gitignore`` applies to untracked files only; the index is read as ``env`` reads it, nothing is executed).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from mpsready.safeio import kind_of
from mpsready.scan.rules import inputs as I
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
    metal: bool = False  # a Metal kernel source (.metal) or its Objective-C++ dispatch (.mm): a Mac build of a kernel
    declaration: bool = False
    config: bool = False  # a YAML file: a possible config surface (Hydra, OmegaConf, plain YAML)


@dataclass
class Walk:
    files: list[ProjectFile] = field(default_factory=list)
    findings: list[RawFinding] = field(default_factory=list)
    # what an exclude pattern or a .gitignore kept out: Python files, notebooks, declarations and folders
    # (not entered, so their contents are not counted), as (relpath, "exclude" | ".gitignore")
    excluded: list[tuple[str, str]] = field(default_factory=list)


_CODE_EXTS = {".py": "python", ".pyw": "python", ".ipynb": "notebook", ".cu": "cuda", ".cuh": "cuda",
              ".metal": "metal", ".mm": "metal"}  # Metal shaders and the Objective-C++ that dispatches them (issue 32)
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
        "metal": kind == "metal",
        "declaration": (name == "setup.py") if ext == ".py" else (
            kind == "notebook" or (maybe_decl and _read_by_a_source(relpath))),
        "config": ext in (".yaml", ".yml"),
    }


def _read_by_a_source(relpath: str) -> bool:
    from mpsready.scan.sources import all_sources  # here: a scan of Python files alone loads no reader

    return any(src.matches(relpath) for src in all_sources())


MAX_DIR_DEPTH = 256  # directory levels below the root; deeper ones become one INP112 finding each
MAX_IGNORE_PATTERNS = 2000  # per .gitignore; matching costs files x patterns


@dataclass
class _Frame:
    dirpath: str
    dirreal: str
    rel: str
    entries: list
    ignores: tuple  # ((base rel, GitIgnoreSpec), ...) from the root down to this directory
    i: int = 0


def walk(root: Path, *, exclude: tuple[str, ...] = (), max_file_size: int, gitignore: bool = True) -> Walk:
    """All interesting files under ``root`` (a directory) in sorted order, plus INP findings.

    Iterative (a tree 1,000 levels deep is walked without recursion); directories more than
    :data:`MAX_DIR_DEPTH` levels down are not entered (INP112). With ``gitignore``, files and directories
    that the project's ``.gitignore`` files ignore (git's rules, through ``pathspec``) are not scanned.

    Long because its small helpers are closures over the walk's state (the findings, the
    real root, the exclude patterns), and the loop over the explicit stack reads best in one piece."""
    out = Walk()
    real_root = os.path.realpath(root)

    def excluded(rel: str) -> bool:
        return any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel + "/", pat) for pat in exclude)

    def listing(dirpath: str, rel: str) -> list | None:
        try:
            with os.scandir(dirpath) as it:
                return sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.findings.append(RawFinding(I.UNREADABLE, rel or ".", None, f"directory not readable: {exc.strerror or exc}"))
            return None

    def frame(dirpath: str, dirreal: str, rel: str, parent_ignores: tuple) -> _Frame | None:
        entries = listing(dirpath, rel)
        if entries is None:
            return None
        ignores = parent_ignores
        if gitignore:
            spec = _gitignore(entries, rel, max_file_size, out.findings)
            if spec is not None:
                ignores = ignores + ((rel, spec),)
        return _Frame(dirpath, dirreal, rel, entries, ignores)

    tracked: list = []  # [(files, folders) the git index tracks, or None]: never gitignored; read at the first need
    first = frame(str(root), real_root, "", ())
    stack: list[_Frame] = [first] if first else []
    active = {real_root}  # real paths of the directories being walked (a link back to one is a loop)
    while stack:
        top = stack[-1]
        if top.i >= len(top.entries):
            stack.pop()
            active.discard(top.dirreal)
            continue
        entry = top.entries[top.i]
        top.i += 1
        rel = top.rel
        child = f"{rel}/{entry.name}" if rel else entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            is_link, is_dir = True, False
        why = "exclude" if excluded(child) else \
            ".gitignore" if top.ignores and _ignored(top.ignores, child, is_dir) \
            and not _tracked(tracked, root, child, is_dir) else None
        if why is not None:
            if (is_dir and entry.name not in SKIP_DIRS) or (not is_dir and any(classify(child).values())):
                out.excluded.append((child, why))
            continue
        if is_link and not os.path.exists(entry.path):
            out.findings.append(RawFinding(I.SYMLINK_LOOP, child, None, "broken symbolic link (or a link loop); not followed"))
            continue
        if is_link and not _inside(os.path.realpath(entry.path), real_root):
            # the scan reads the project and nothing else (a link to /etc or to $HOME is not the project)
            if is_dir or any(classify(child).values()):
                out.findings.append(RawFinding(I.UNREADABLE, child, None,
                                               f"symbolic link to {os.path.realpath(entry.path)}, outside the scanned "
                                               "project; not followed", fix=OUTSIDE_LINK_FIX))
            continue
        if is_dir:
            if entry.name in SKIP_DIRS or entry.name.endswith(".egg-info"):
                continue
            real = os.path.realpath(entry.path) if is_link else os.path.join(top.dirreal, entry.name)
            if real in active:
                out.findings.append(RawFinding(I.SYMLINK_LOOP, child, None,
                                               f"symbolic link loops back to {_rel_to(real, real_root)}; not followed"))
                continue
            if is_link:
                continue  # a link to a directory inside the project: walked once, through its real path
            if os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                continue  # a virtual environment inside the project
            if len(stack) > MAX_DIR_DEPTH:  # the child sits len(stack) levels below the root
                out.findings.append(RawFinding(I.TOO_DEEP, child, None,
                                               f"directory {len(stack)} levels below the project root; "
                                               f"not walked (limit {MAX_DIR_DEPTH})", evidence={"limit": MAX_DIR_DEPTH}))
                continue
            sub = frame(entry.path, real, child, top.ignores)
            if sub is not None:
                stack.append(sub)
                active.add(real)
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
                                           f"not a regular file ({kind_of(st.st_mode)}); not read",
                                           fix=not_regular_fix(kind_of(st.st_mode))))
            continue
        if size > max_file_size:
            out.findings.append(RawFinding(I.TOO_LARGE, child, None,
                                           f"{size} bytes is above the {max_file_size}-byte limit; skipped",
                                           evidence={"bytes": size, "limit": max_file_size}))
            continue
        out.files.append(ProjectFile(child, entry.path, size, mtime, **kinds))
    return out


# INP101's own fix ("Fix the permissions and scan again.") fits a file that could not be opened; these fit what
# was found instead (h40c: a named pipe was told to fix its permissions). The rule code stays INP101.
OUTSIDE_LINK_FIX = ("Nothing to fix if the link's target is not the project's code (the scan reads only the project); "
                    "if it is, scan the target's folder too, or copy the file into the project.")


def not_regular_fix(kind: str) -> str:
    """The fix text of INP101 for a path that is not a regular file (``kind``: ``a named pipe``, ``a socket``,
    ``a device``): the scan skips such a path on purpose; permissions have nothing to do with it."""
    return (f"Nothing to fix if it is meant to be {kind}: the scan skips what is not a regular file (reading {kind} "
            "could block or never end). If it should hold source code, replace it with a regular file and scan again.")


def _gitignore(entries: list, rel: str, max_bytes: int, findings: list[RawFinding]):
    """The compiled ``.gitignore`` among a directory's entries, or ``None``. A pattern pathspec refuses is
    reported (INP111) and skipped; git itself ignores such lines."""
    entry = next((e for e in entries if e.name == ".gitignore"), None)
    if entry is None:
        return None
    where = f"{rel}/.gitignore" if rel else ".gitignore"
    try:
        st = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            findings.append(RawFinding(I.UNREADABLE, where, None, "not a regular file within the size limit; not used",
                                       fix="Nothing to fix if the folder needs no ignore rules; else make .gitignore a "
                                       "regular text file within the size limit and scan again."))
            return None
        with open(entry.path, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        findings.append(RawFinding(I.UNREADABLE, where, None, f"cannot read: {exc.strerror or exc}; not used"))
        return None
    import pathspec  # here: a tree without a .gitignore never loads it

    lines = text.splitlines()
    if len(lines) > MAX_IGNORE_PATTERNS:
        findings.append(RawFinding(I.MALFORMED_CONFIG, where, MAX_IGNORE_PATTERNS + 1,
                                   f"{len(lines)} lines; only the first {MAX_IGNORE_PATTERNS} used"))
        lines = lines[:MAX_IGNORE_PATTERNS]
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec's pattern error: find the bad lines, keep the others
        good = []
        for n, line in enumerate(lines, 1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception as exc:
                findings.append(RawFinding(I.MALFORMED_CONFIG, where, n, f"pattern {line[:80]!r} not understood "
                                           f"({type(exc).__name__}); skipped"))
                continue
            good.append(line)
        return pathspec.GitIgnoreSpec.from_lines(good)


def _tracked(tracked: list, root: Path, child: str, is_dir: bool) -> bool:
    """Whether the git index tracks ``child`` (a folder: a file below it); a ``.gitignore`` applies to untracked
    files only (:func:`mpsready.env.gitfiles.tracked_under`). The index is read once, when a ``.gitignore`` first
    ignores something, into ``tracked`` (a scan that ignores nothing never loads the reader)."""
    if not tracked:
        from mpsready.env.gitfiles import tracked_under

        files = tracked_under(Path(root))
        tracked.append((files, {p.rsplit("/", i)[0] for p in files for i in range(1, p.count("/") + 1)})
                       if files else None)
    found = tracked[0]
    return found is not None and child in (found[1] if is_dir else found[0])


def _ignored(ignores: tuple, child: str, is_dir: bool) -> bool:
    """Whether the ``.gitignore`` files above ``child`` ignore it: the deepest file with a matching pattern
    decides, and within a file the last matching pattern (``!keep.log`` re-includes)."""
    verdict = False
    for base, spec in ignores:
        sub = child[len(base) + 1:] if base else child
        res = spec.check_file(sub + "/" if is_dir else sub)
        if res.include is not None:
            verdict = res.include
    return verdict


def _rel_to(real: str, real_root: str) -> str:
    rel = os.path.relpath(real, real_root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


