"""Write a plan: file by file, atomically, and never over a file that changed since it was read.

Each file is written to a temporary file in its own directory, flushed, given the original's
permission bits, owner and group, and renamed over the original (``os.replace`` is atomic on POSIX and
Windows within one file system). Before that the file is read again: when its sha256 differs from the
plan's, the file is skipped and reported, never overwritten. A file with other hard links, or one owned by
another user when not run as root, is refused with the reason: a new file would change more than its text.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mpsready.migrate.engine import FilePlan, Plan
from mpsready.migrate.leftovers import remove_leftovers


@dataclass
class ApplyResult:
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "path: reason"
    removed: list[str] = field(default_factory=list)  # temp files of an earlier killed run, removed
    leftovers_kept: list[str] = field(default_factory=list)  # "path: reason" of those left


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one rename, keeping its permission bits, owner and group;
    raises ``OSError`` and leaves ``path`` as it was."""
    st = path.stat()
    mode = stat.S_IMODE(st.st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".mpsready-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.stat(tmp).st_uid, os.stat(tmp).st_gid):
            os.chown(tmp, st.st_uid, st.st_gid)  # as root: the file stays its owner's (issue 34)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with _suppress():
            os.unlink(tmp)
        raise


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], OSError)


def apply_plan(plan: Plan, on_file: Callable[[], None] | None = None) -> ApplyResult:
    """Write every changed file of ``plan``; a file changed since the plan read it is refused. First removes
    the temp files an earlier killed ``--apply`` left (``plan.leftovers``, :mod:`mpsready.migrate.leftovers`).
    ``on_file`` is called after each file of ``plan.files`` (written or refused): the progress bar."""
    out = ApplyResult()
    out.removed, out.leftovers_kept = remove_leftovers(Path(plan.root), plan.leftovers)
    for fp in plan.files:
        _apply_one(fp, out)
        if on_file is not None:
            on_file()
    return out


def _apply_one(fp: FilePlan, out: ApplyResult) -> None:
    reason = _changed_since(fp) or _cannot_keep(Path(fp.abspath))
    if reason:
        out.refused.append(f"{fp.path}: {reason}")
        return
    try:
        write_atomically(Path(fp.abspath), fp.after)
    except OSError as exc:
        out.refused.append(f"{fp.path}: not written ({exc.strerror or exc})")
        return
    out.written.append(fp.path)


def _cannot_keep(path: Path) -> str | None:
    """Why replacing ``path`` by a new file would change more than its text: a file with other hard links (they
    would keep the old text), or one owned by another user that this process cannot give back (not root)."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot be read again ({exc.strerror or exc})"
    if st.st_nlink > 1:
        return (f"has {st.st_nlink} hard links; not touched (a new file would leave the other links with the old "
                "text: edit it by hand)")
    if hasattr(os, "geteuid") and os.geteuid() != 0 and st.st_uid != os.geteuid():
        return (f"owned by uid {st.st_uid}; not touched (a new file would be owned by uid {os.geteuid()}: run as "
                "its owner)")
    return None


def _changed_since(fp: FilePlan) -> str | None:
    try:
        data = Path(fp.abspath).read_bytes()
    except OSError as exc:
        return f"cannot be read again ({exc.strerror or exc})"
    if hashlib.sha256(data).hexdigest() != fp.sha256:
        return "changed since the scan; not touched (run mpsready migrate again)"
    return None
