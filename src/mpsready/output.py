"""Where a command's result goes: a file (``-o FILE``) or stdout, as text or through a rich console.

Every CLI writes its result with :func:`emit` (text) or :func:`console_for` (rich renderables), so the
rules live in one place: stdout is written as is; a file is written whole, UTF-8, through a fresh exclusive
temporary file in its folder and replaced in one rename (a folder given for it is a usage error); a file
that cannot be written is a :class:`~mpsready.errors.UsageError` (exit 2),
never a traceback, with the message the command has always printed (``error=``, see :func:`cannot_write`).
Nothing here imports rich until a console is asked for.

    emit(text, args.output)                                    # scan, run: "cannot write F: No such file ..."
    emit(text, args.output, error=cannot_write_verbatim)       # env, trace, ops: "cannot write F: [Errno 2] ..."
    with console_for(args.output, error=option_cannot_write("--output")) as console:
        console.print(table)                                   # compare: 160 columns, no colour in a file
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Callable, Iterator

from mpsready.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

# How a failed write reads: (the path given, the error) -> the usage error's message.
ErrorText = Callable[[str, OSError], str]

# Columns of a rich console writing into a file (no terminal to ask): wide enough for the tables.
FILE_WIDTH = 160


def cannot_write(path: str, exc: OSError) -> str:
    """``cannot write PATH: No such file or directory`` (the OS's reason alone)."""
    return f"cannot write {path}: {exc.strerror or exc}"


def cannot_write_verbatim(path: str, exc: OSError) -> str:
    """``cannot write PATH: [Errno 2] No such file or directory: 'PATH'`` (the whole ``OSError`` text)."""
    return f"cannot write {path}: {exc}"


def option_cannot_write(option: str) -> ErrorText:
    """``OPTION PATH: cannot write: REASON`` (``--output out.txt: cannot write: Permission denied``)."""
    return lambda path, exc: f"{option} {path}: cannot write: {exc.strerror or exc}"


def write_text(path: str | os.PathLike[str], text: str, *, atomic: bool = True) -> None:
    """Write ``text`` to ``path`` (UTF-8, replacing it) through a fresh temporary file in the same folder
    (``mkstemp``: ``O_EXCL`` and a random name, never a fixed ``NAME.tmp`` that a planted link could redirect)
    and one ``os.replace``: a reader never sees half a file, a failed write leaves the old one (and no
    temporary file), and a link at ``path`` is replaced, not written through. A folder at ``path`` is an
    ``IsADirectoryError`` before anything is written. Only a path that exists and is not a regular file (a
    named pipe, ``/dev/stdout``) is opened and written as it is. ``atomic`` is kept for callers; every write
    is atomic. Raises ``OSError``."""
    path = os.fspath(path)
    check_output_path(path)
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):  # a pipe or a device the user named: no rename possible
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # here: writing to stdout (the common case) never loads it

    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".mpsready-tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # what open(path, "w") would have made (mkstemp makes 0600)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_output_path(path: str | os.PathLike[str]) -> None:
    """``IsADirectoryError`` when ``path`` is a folder (or ends with a separator), ``NotADirectoryError`` /
    ``FileNotFoundError`` when its folder is not one: checked before any work, so a command given a folder
    where a file is expected stops at once (its caller turns the error into a usage error)."""
    path = os.fspath(path)
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        raise IsADirectoryError(21, "Is a directory", path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise (NotADirectoryError(20, "Not a directory", path) if os.path.exists(folder)
               else FileNotFoundError(2, "No such file or directory", path))


def missing_parent(path: str | os.PathLike[str]) -> str | None:
    """The parent folder of an output folder ``path`` when it does not exist, else ``None`` (a file there is the
    caller's ``Not a directory``).
    The rule of every ``-o``/``--out`` (h40c): mpsready creates only the last level of an output folder (``check``,
    ``report``, ``kit``), as ``scan -o`` and ``env -o`` write only into a folder that exists; a missing parent
    (``/nonexist/a/b``, a typo in the middle of a path) is a usage error, never a tree of new folders."""
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    return None if os.path.exists(parent) else parent


def emit(text: str, output: str | None, *, atomic: bool = False, error: ErrorText = cannot_write) -> None:
    """``text`` to the file ``output`` (see :func:`write_text`), or to stdout when ``output`` is ``None`` or
    empty. Raises :class:`~mpsready.errors.UsageError` with ``error(output, exc)`` when the file cannot be
    written."""
    if not output:
        sys.stdout.write(text)
        return
    try:
        write_text(output, text, atomic=atomic)
    except OSError as exc:
        raise UsageError(error(output, exc)) from None


def stdout_console(pipe_width: int | None = None) -> Console:
    """A rich console on stdout. ``pipe_width``: the columns to use when stdout is not a terminal and
    ``COLUMNS`` is not set (rich would take 80); ``None`` leaves rich's own choice."""
    from rich.console import Console

    width = None
    if pipe_width is not None and not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
        width = pipe_width
    return Console(width=width)


@contextlib.contextmanager
def console_for(output: str | None, *, pipe_width: int | None = None,
                error: ErrorText = cannot_write) -> Iterator[Console]:
    """A rich console for the command's result: on stdout (:func:`stdout_console`) when ``output`` is
    ``None`` or empty, else on the file ``output``, :data:`FILE_WIDTH` columns without colour, closed when
    the block ends. An ``OSError`` opening or writing the file becomes a
    :class:`~mpsready.errors.UsageError` with ``error(output, exc)``."""
    if not output:
        yield stdout_console(pipe_width)
        return
    import io

    from rich.console import Console

    try:
        check_output_path(output)
    except OSError as exc:
        raise UsageError(error(output, exc)) from None
    buffer = io.StringIO()
    yield Console(file=buffer, width=FILE_WIDTH, no_color=True)
    try:
        write_text(output, buffer.getvalue())  # whole, through a fresh temporary file (see write_text)
    except OSError as exc:
        raise UsageError(error(output, exc)) from None
