"""Where a command's result goes: a file (``-o FILE``) or stdout, as text or through a rich console.

Every CLI writes its result with :func:`emit` (text) or :func:`console_for` (rich renderables), so the
rules live in one place: stdout is written as is; a file is written whole, UTF-8, and replaced in one rename
with ``atomic=True``; a file that cannot be written is a :class:`~mpsready.errors.UsageError` (exit 2),
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


def write_text(path: str | os.PathLike[str], text: str, *, atomic: bool = False) -> None:
    """Write ``text`` to ``path`` (UTF-8, replacing it). ``atomic``: through a temporary file in the same
    folder and one ``os.replace``, so a reader never sees half a file and a failed write leaves the old one
    (and no temporary file). Raises ``OSError``."""
    path = os.fspath(path)
    if not atomic:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # here: writing to stdout (the common case) never loads it

    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".mpsready-tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    from rich.console import Console

    try:
        with open(output, "w", encoding="utf-8") as fh:
            yield Console(file=fh, width=FILE_WIDTH, no_color=True)
    except OSError as exc:
        raise UsageError(error(output, exc)) from None
