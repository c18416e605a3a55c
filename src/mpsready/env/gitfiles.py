"""A project's git state read from its files, never by running ``git`` in it (issue 34).

``git status`` in a project runs what the project's own ``.git/config`` names: ``core.fsmonitor`` (a command
run on every status), clean/smudge ``filter.*`` drivers (run when a file's stat data changed), hooks. A
project is data (an archive, a shared folder, a CI workspace keeps ``.git/config``), so ``env --project`` and
``check`` read what they need themselves and execute nothing:

* **commit and branch**: ``HEAD`` (``ref: refs/heads/NAME`` or a detached commit id), then the ref as a loose
  file or a line of ``packed-refs``, in the repository's common folder (``commondir``, for a linked work tree;
  a ``.git`` *file* ``gitdir: PATH`` is followed, as git does for work trees and submodules). Git's layout:
  ``Documentation/gitrepository-layout.txt`` (git 2.x).
* **changed files**: the index (``Documentation/gitformat-index.txt``, versions 2, 3 and 4) lists each
  tracked file with the size and modification time git last saw; a tracked file whose size, mtime or
  executable bit differs, or that is gone, counts as changed (git would re-read it; a file touched but not
  changed counts too, and an edit keeping size and mtime to the nanosecond does not). Untracked files count
  as ``git status --porcelain`` lists them: every file not in the index and not matched by a ``.gitignore``
  on its way down or by ``.git/info/exclude`` (a folder of untracked files counts once, as git prints it).

Everything read is bounded (an index of at most :data:`MAX_INDEX` bytes, at most :data:`MAX_WALK` entries
walked for untracked files); what cannot be read becomes ``{"error": ...}``, never an exception.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import Any

MAX_INDEX = 256 * 1024 * 1024  # bytes
MAX_REF = 4096  # bytes of HEAD, a loose ref or a .git file
MAX_PACKED = 64 * 1024 * 1024  # bytes of packed-refs
MAX_WALK = 200_000  # folder entries looked at for untracked files
MAX_IGNORE = 1024 * 1024  # bytes of one .gitignore


class GitReadError(Exception):
    """The repository's files cannot be read as git writes them; the message is one line."""


def _read(path: str, limit: int) -> bytes:
    """A regular file's bytes (no link followed at the last component, no pipe waited on), at most ``limit``
    (:func:`mpsready.safeio.read_bounded`); :class:`GitReadError` for another kind of file or a larger one."""
    from mpsready.safeio import BadArtifact, read_bounded

    try:
        return read_bounded(path, limit)
    except BadArtifact as exc:
        name = os.path.basename(path)
        raise GitReadError(f"{name} is larger than {limit} bytes" if "larger than" in str(exc)
                           else f"{name} is not a regular file") from None


def find_repository(path: Path) -> tuple[Path, Path] | None:
    """``(work tree root, git folder)`` for ``path`` or its nearest parent holding ``.git``; ``None`` if none."""
    here = path.resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        try:
            mode = os.lstat(dot).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            return folder, dot
        if stat.S_ISREG(mode):
            text = _read(str(dot), MAX_REF).decode("utf-8", "replace").strip()
            if not text.startswith("gitdir:"):
                raise GitReadError(".git is a file without a gitdir: line")
            target = Path(text[len("gitdir:"):].strip())
            return folder, (target if target.is_absolute() else folder / target)
        return None
    return None


def _common(gitdir: Path) -> Path:
    try:
        rel = _read(str(gitdir / "commondir"), MAX_REF).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        return gitdir
    p = Path(rel)
    return p if p.is_absolute() else gitdir / p


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _resolve(gitdir: Path, common: Path, ref: str, depth: int = 0) -> str | None:
    """The commit id ``ref`` (``refs/heads/main``) names, following symbolic refs a few levels; ``None``: unborn."""
    if depth > 5 or ".." in ref.split("/"):
        raise GitReadError(f"cannot follow the ref {ref[:80]}")
    for base in (gitdir, common):
        try:
            text = _read(str(base / ref), MAX_REF).decode("ascii", "replace").strip()
        except (FileNotFoundError, NotADirectoryError):
            continue
        if text.startswith("ref:"):
            return _resolve(gitdir, common, text[4:].strip(), depth + 1)
        if _is_sha(text):
            return text
        raise GitReadError(f"{ref} does not hold a commit id")
    try:
        packed = _read(str(common / "packed-refs"), MAX_PACKED).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == ref and _is_sha(parts[0]):
            return parts[0]
    return None


def _index_entries(data: bytes, hash_len: int = 20) -> dict[str, tuple[int, int, int, int]]:
    """``{path: (mode, size, mtime seconds, mtime nanoseconds)}`` of the index's stage-0 entries that git
    checks in the work tree (not skip-worktree); a conflicted path maps to mode 0 (always changed)."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise GitReadError("the index is not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise GitReadError(f"index version {version} is not one this reader knows")
    out: dict[str, tuple[int, int, int, int]] = {}
    pos, previous = 12, b""
    for _ in range(count):
        head = 40 + hash_len + 2
        if pos + head > len(data):
            raise GitReadError("the index is truncated")
        (_cs, _cn, ms, mn, _dev, _ino, mode, _uid, _gid, size) = struct.unpack(">10I", data[pos:pos + 40])
        flags = struct.unpack(">H", data[pos + 40 + hash_len:pos + head])[0]
        p = pos + head
        extra = 0
        if flags & 0x4000:
            if version < 3 or p + 2 > len(data):
                raise GitReadError("the index has an extended entry it cannot hold")
            extra = struct.unpack(">H", data[p:p + 2])[0]
            p += 2
        if version == 4:
            strip, p = _varint(data, p)
            end = data.find(b"\0", p)
            if end < 0 or strip > len(previous):
                raise GitReadError("the index is truncated")
            name = previous[:len(previous) - strip] + data[p:end]
            pos = end + 1
        else:
            end = data.find(b"\0", p)
            if end < 0:
                raise GitReadError("the index is truncated")
            name = data[p:end]
            pos = pos + ((end - pos) // 8 + 1) * 8  # 1 to 8 NULs pad each entry to a multiple of 8 bytes
        previous = name
        text = name.decode("utf-8", "surrogateescape")
        if extra & 0x4000:  # skip-worktree (sparse checkout): git does not look at the file
            continue
        if (flags >> 12) & 3:  # a merge stage: the path is conflicted
            out[text] = (0, 0, 0, 0)
            continue
        out[text] = (mode, size, ms, mn)
    return out


def _sha256(common: Path) -> bool:
    """Whether the repository stores SHA-256 ids (``extensions.objectFormat = sha256`` in its config, read as
    text: nothing in the config is acted on), so index entries carry 32-byte ids, not 20."""
    try:
        text = _read(str(common / "config"), MAX_REF * 64).decode("utf-8", "replace")
    except (OSError, GitReadError):
        return False
    return any(line.replace(" ", "").replace("\t", "").lower() == "objectformat=sha256" for line in text.splitlines())


def _varint(data: bytes, p: int) -> tuple[int, int]:
    """Git's offset varint (``varint.c``: each continuation adds one before shifting)."""
    if p >= len(data):
        raise GitReadError("the index is truncated")
    c = data[p]
    p += 1
    value = c & 127
    while c & 128:
        if p >= len(data):
            raise GitReadError("the index is truncated")
        c = data[p]
        p += 1
        value = ((value + 1) << 7) | (c & 127)
    return value, p


def _changed_tracked(root: Path, entries: dict[str, tuple[int, int, int, int]]) -> int:
    n = 0
    for rel, (mode, size, ms, mn) in entries.items():
        if mode == 0:
            n += 1
            continue
        if stat.S_IFMT(mode) == 0o160000:  # a submodule: its own repository
            continue
        try:
            st = os.lstat(os.path.join(root, rel))
        except OSError:
            n += 1
            continue
        same = (st.st_size & 0xFFFFFFFF) == size and int(st.st_mtime) & 0xFFFFFFFF == ms and \
            (mn == 0 or st.st_mtime_ns % 1_000_000_000 == mn) and \
            stat.S_ISLNK(st.st_mode) == (stat.S_IFMT(mode) == stat.S_IFLNK) and \
            (stat.S_ISLNK(st.st_mode) or bool(st.st_mode & 0o100) == bool(mode & 0o100))
        n += not same
    return n


def _ignore_spec(path: str, limit: int = MAX_IGNORE) -> Any:
    try:
        text = _read(path, limit).decode("utf-8", "replace")
    except (OSError, GitReadError):
        return None
    import pathspec

    good = []
    for line in text.splitlines()[:10_000]:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except Exception:
            continue  # git ignores a pattern it cannot use
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good) if good else None


def _untracked(root: Path, gitdir: Path, common: Path, tracked: set[str]) -> int | None:
    """How many lines ``git status --porcelain`` would print for untracked paths (a wholly untracked folder is
    one); ``None`` when the tree is larger than :data:`MAX_WALK` entries."""
    tracked_dirs = {"/".join(t.split("/")[:i]) for t in tracked for i in range(1, t.count("/") + 1)}
    base = _ignore_spec(str(common / "info" / "exclude"))
    seen = 0

    def ignored(rel: str, is_dir: bool, specs: list[tuple[str, Any]]) -> bool:
        hit = False
        for folder, spec in specs:
            sub = rel[len(folder) + 1:] if folder else rel
            res = spec.check_file(sub + ("/" if is_dir else ""))
            if res.include is not None:
                hit = bool(res.include)
        return hit

    def walk(folder: str, specs: list[tuple[str, Any]]) -> int:
        nonlocal seen
        full = os.path.join(root, folder) if folder else str(root)
        spec = _ignore_spec(os.path.join(full, ".gitignore"))
        if spec is not None:
            specs = [*specs, (folder, spec)]
        count = 0
        try:
            with os.scandir(full) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return 0
        for e in items:
            seen += 1
            if seen > MAX_WALK:
                raise OverflowError
            if e.name == ".git" and not folder:
                continue
            rel = f"{folder}/{e.name}" if folder else e.name
            is_dir = e.is_dir(follow_symlinks=False)
            if rel in tracked or ignored(rel, is_dir, specs):
                continue
            if is_dir:
                if os.path.lexists(os.path.join(e.path, ".git")):
                    count += 0 if rel in tracked else 1  # a nested repository: one line, as git prints it
                elif rel in tracked_dirs:
                    count += walk(rel, specs)
                else:
                    count += 1 if _has_file(e.path, rel, specs, ignored) else 0
            else:
                count += 1
        return count

    try:
        return walk("", [("", base)] if base is not None else [])
    except (OverflowError, RecursionError):
        return None


def _has_file(path: str, rel: str, specs: list[tuple[str, Any]], ignored: Any, depth: int = 0) -> bool:
    """Whether an untracked folder holds a file git would list (it prints the folder only then)."""
    if depth > 100:
        return True
    try:
        with os.scandir(path) as it:
            items = list(it)
    except OSError:
        return False
    for e in items:
        sub = f"{rel}/{e.name}"
        is_dir = e.is_dir(follow_symlinks=False)
        if ignored(sub, is_dir, specs):
            continue
        if not is_dir or _has_file(e.path, sub, specs, ignored, depth + 1):
            return True
    return False


def git_state(path: Path) -> dict[str, Any]:
    """``{commit, branch, dirty, changed_files}`` of the git work tree holding ``path``, read from its files
    (module docstring), or ``{"error": ...}``; nothing is executed."""
    try:
        found = find_repository(path)
        if found is None:
            return {"error": "not a git repository (no .git in this folder or above it)"}
        root, gitdir = found
        common = _common(gitdir)
        head = _read(str(gitdir / "HEAD"), MAX_REF).decode("utf-8", "replace").strip()
        if head.startswith("ref:"):
            ref = head[4:].strip()
            branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
            commit = _resolve(gitdir, common, ref)
            if commit is None:
                return {"error": f"the branch {branch} has no commit yet"}
        elif _is_sha(head):
            commit, branch = head, "HEAD"
        else:
            return {"error": "HEAD holds neither a ref nor a commit id"}
    except (OSError, GitReadError) as exc:
        return {"error": f"cannot read the repository: {getattr(exc, 'strerror', None) or exc}"}
    try:
        try:
            entries = _index_entries(_read(str(gitdir / "index"), MAX_INDEX), 32 if _sha256(common) else 20)
        except FileNotFoundError:
            entries = {}
        changed = _changed_tracked(root, entries)
        untracked = _untracked(root, gitdir, common, set(entries))
    except (OSError, GitReadError, struct.error) as exc:
        return {"commit": commit, "branch": branch,
                "error": f"cannot read the index: {getattr(exc, 'strerror', None) or exc}"}
    if untracked is None:
        return {"commit": commit, "branch": branch, "dirty": changed > 0 or None, "changed_files": changed,
                "error": f"untracked files not counted (more than {MAX_WALK} entries)"}
    total = changed + untracked
    return {"commit": commit, "branch": branch, "dirty": bool(total), "changed_files": total}


def tracked_under(path: Path) -> set[str] | None:
    """The files the git index of the work tree holding ``path`` tracks below ``path``, relative to it
    (``/``-separated), read from the index as :func:`git_state` reads it (nothing is executed); ``None`` when
    ``path`` is in no repository or its index cannot be read. A ``.gitignore`` rule applies to untracked files
    only (git's ``gitignore`` documentation: "Files already tracked by Git are not affected"), so the scan reads
    a tracked file whatever the ``.gitignore`` says (issue 34: a ``.gitignore`` of ``*`` hid force-added code)."""
    try:
        found = find_repository(path)
        if found is None:
            return None
        root, gitdir = found
        entries = _index_entries(_read(str(gitdir / "index"), MAX_INDEX), 32 if _sha256(_common(gitdir)) else 20)
        rel = os.path.relpath(path.resolve(), root.resolve()).replace(os.sep, "/")
    except (OSError, GitReadError, struct.error, ValueError):
        return None
    if rel == ".":
        return set(entries)
    prefix = rel + "/"
    return {p[len(prefix):] for p in entries if p.startswith(prefix)}
