"""Reading artifacts that may be damaged or hostile: regular files only, JSON with finite numbers only.

Run records, stage outputs and raw tensor files travel between machines (a record made on a CUDA
server is compared on a Mac), so their readers treat them as untrusted input:

- :func:`open_regular` opens a path only if it is a regular file. The open itself is non-blocking, so a
  named pipe in place of ``tensors/step-0000.safetensors`` is refused instead of blocking ``compare``
  forever, and a directory is refused with a message instead of ``IsADirectoryError``.
- :func:`loads` parses JSON whose numbers are all finite and in range: JSON's non-standard ``NaN`` and
  ``Infinity`` (which Python's ``json`` accepts by default), a float that overflows to infinity
  (``1e400``), and an integer of more than 20 digits (``10**400`` overflows ``float()``; 5,000 digits
  pass Python's int-to-str limit) are refused. mpsready writes its JSON with ``allow_nan=False`` and
  spells non-finite results as strings (``"inf"``), so no artifact it wrote is refused.

Both raise :class:`BadArtifact` (a ``ValueError``) with a one-line message; each reader turns it into its
own input error (exit 2).
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

MAX_INT = 2**64  # |n| below this: 64-bit seeds, byte counts and element counts all fit
MAX_INT_DIGITS = 20


class BadArtifact(ValueError):
    """A file that is not a regular file, or JSON with a number out of range; the message is one line."""


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """``path`` opened for binary reading, if it is a regular file; raises :class:`BadArtifact` otherwise
    (a directory, a named pipe, a socket, a device) and ``OSError`` when it cannot be opened."""
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except IsADirectoryError:  # where a directory cannot be opened at all
        raise BadArtifact(f"{p} is a directory, not a regular file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadArtifact(f"{p} is {kind_of(mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return io.open(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike[str], limit: int, *, follow_links: bool = False) -> bytes:
    """The bytes of ``path`` if it is a regular file reached without following a link at its last component (not
    a pipe, which would block, nor a device, which may never end) of at most ``limit`` bytes. Raises
    :class:`BadArtifact` for another kind of file or a larger one, ``OSError`` when it cannot be opened (a link:
    ``ELOOP``). The shared reader of caches, baselines and repository metadata: files a project or another user
    may have planted. ``follow_links``: a file the user named on the command line (``ops --table``, ``trace
    --from-json``) may be reached through a link of theirs; a named pipe there still never blocks."""
    p = os.fspath(path)
    fd = os.open(p, os.O_RDONLY | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadArtifact(f"{p} is {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise BadArtifact(f"{p} is larger than {limit} bytes")
        os.set_blocking(fd, True)
        chunks, left = [], limit + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        if len(data) > limit:  # grew while read
            raise BadArtifact(f"{p} is larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of a regular file (see :func:`open_regular`); ``UnicodeDecodeError`` for other bytes."""
    with open_regular(path) as fh:
        return fh.read().decode("utf-8")


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words (``a named pipe``), for one-line messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise BadArtifact(f"an integer of {len(digits.lstrip('-'))} digits is out of range")
    value = int(digits)
    if abs(value) >= MAX_INT:
        raise BadArtifact(f"the integer {value} is out of range (at most 2**64)")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadArtifact(f"the number {text[:40]} is out of range (not a finite float)")
    return value


def _constant(name: str) -> Any:
    raise BadArtifact(f"{name} is not a number JSON allows")


def loads(text: str | bytes) -> Any:
    """``json.loads`` with every number finite and in range; raises :class:`BadArtifact` for a number,
    ``json.JSONDecodeError`` for bad JSON and ``RecursionError`` for nesting Python's decoder cannot follow."""
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)


def finite_number(value: Any) -> bool:
    """A JSON number (not a boolean) that is finite: what every seconds, loss and byte count must be."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def path_kind(path: Path) -> str | None:
    """``None`` for a regular file (or a missing path), else what the path is ("a directory", ...)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)
