"""The temporary copies ``migrate --verify`` runs in (issue 34): a copy is a copy.

Every regular file is copied (never hard-linked, so a program that updates a checkpoint or a data file in place
changes the copy only), a symbolic link is recreated only when it points inside the project (rewritten to the
copy), and nothing else is carried (links out of the project, pipes, sockets, devices). ``--cwd`` must stay inside
the copy. Each copy's folder carries an owner file, so the next run can remove the leftovers of a run that was
killed, and only those it can prove are a ``--verify``'s whose process is gone.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from mpsready import childproc
from mpsready.errors import UsageError

SKIP = (".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv")
_SKIP = SKIP


def _copy_tree(src: Path, dst: Path) -> list[str]:
    """``src`` into ``dst`` as a copy the program cannot write through: every regular file copied (never linked,
    so a hard link, a large checkpoint or a data file updated in place stays the project's own), a symbolic link
    recreated only when it points inside the project (rewritten to the same place in the copy, relative), and
    nothing else (a link out of the project, a named pipe, a socket, a device). Returns what was left out, one
    ``PATH (why)`` each. Raises :class:`~mpsready.errors.UsageError` when the copy cannot be made (a full
    ``TMPDIR``): a partial copy would verify a different project."""
    real = os.path.realpath(src)
    left_out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src):  # never follows a linked folder (followlinks=False)
        rel = Path(dirpath).relative_to(src)
        names = list(filenames)
        kept: list[str] = []
        for sub in dirnames:
            if sub in _SKIP or sub.startswith(".mpsready"):
                continue
            (names if os.path.islink(os.path.join(dirpath, sub)) else kept).append(sub)
        dirnames[:] = kept
        try:
            (dst / rel).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--verify: cannot copy the project into {dst}: {exc.strerror or exc}") from None
        for name in sorted(names):
            s, dest = os.path.join(dirpath, name), dst / rel / name
            shown = (rel / name).as_posix()
            try:
                mode = os.lstat(s).st_mode
                if stat.S_ISLNK(mode):
                    target = os.path.realpath(s)
                    if target != real and not target.startswith(real + os.sep):
                        left_out.append(f"{shown} (a link out of the project)")
                        continue
                    inside = dst / os.path.relpath(target, real)
                    os.symlink(os.path.relpath(inside, dest.parent), dest)
                elif stat.S_ISREG(mode):
                    _copy_file(s, dest)
                else:
                    left_out.append(f"{shown} (not a regular file)")
            except PermissionError:
                left_out.append(f"{shown} (not readable)")  # the program meets it as it would in the project
            except OSError as exc:
                raise UsageError(f"--verify: cannot copy {shown} into {dst}: {exc.strerror or exc}") from None
    return left_out


def _copy_file(src: str, dst: Path) -> None:
    """The bytes and mode of the regular file ``src`` in a new file ``dst`` (opened with ``O_NOFOLLOW``: a
    link swapped in since the walk is not followed; ``O_NONBLOCK``: a pipe swapped in does not block)."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PermissionError(13, "not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fin, open(dst, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.chmod(dst, stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IWUSR)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(fd)


def check_cwd(root: Path, cwd: str) -> None:
    """``--cwd`` must name a folder inside the project: the runs happen in the copy, never in the project itself
    (an absolute path or ``../..`` would run them there). Raises :class:`~mpsready.errors.UsageError`."""
    real = os.path.realpath(root)
    where = os.path.realpath(os.path.join(real, cwd))
    if os.path.isabs(cwd) or (where != real and not where.startswith(real + os.sep)):
        raise UsageError(f"--cwd {cwd}: not a folder inside the project {root} (the runs happen in a copy of it)")
    if not os.path.isdir(where):
        raise UsageError(f"--cwd {cwd}: no such folder in the project {root}")


LEFTOVER_PREFIX = "mpsready-verify-"
OWNER = ".mpsready-verify-owner"


def clean_leftovers(tmpdir: str | None = None) -> list[str]:
    """Remove the copies a killed ``--verify`` left in ``TMPDIR``, only those it can prove are its own: a folder
    (not a link) named ``mpsready-verify-PID-*``, owned by this user, holding the owner file that run wrote
    with PID in it, where process PID is gone. Returns the folders removed."""
    tmpdir = tmpdir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(tmpdir)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(LEFTOVER_PREFIX):
            continue
        pid_text = name[len(LEFTOVER_PREFIX):].split("-", 1)[0]
        path = os.path.join(tmpdir, name)
        try:
            st = os.lstat(path)
            if not (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and pid_text.isdigit()):
                continue
            with open(os.path.join(path, OWNER), "rb", opener=_no_follow) as fh:
                if fh.read(64) != f"{pid_text}\n".encode():
                    continue
        except OSError:
            continue
        pid = int(pid_text)
        if pid == os.getpid() or childproc.pid_alive(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


    return True
