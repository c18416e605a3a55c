"""Warnings of the program under ``mpsready run`` shown at the program's line, not at the emulator's.

A warning PyTorch's C++ raises (``TORCH_WARN``, e.g. "Converting a tensor with requires_grad=True to a scalar"
from ``float(loss)``, PyTorch 2.9+) is attributed by CPython's ``PyErr_WarnEx`` (stack level 1) to the innermost
Python frame. On a Mac that frame is the program's (or the PyTorch Python code calling the op); under the
emulator it is the emulated device's ``__torch_function__`` (``mpsready/emulate/device.py``), so the run printed
``.../mpsready/emulate/device.py:92: UserWarning: ...`` and ``return func(*args)``: a line of ours, which read as
a fault of mpsready. :func:`install` wraps :func:`warnings.showwarning` (the documented hook, Python docs,
``warnings.showwarning``) so that such a warning names the first frame outside mpsready and PyTorch's
per-call dispatch plumbing (:func:`mpsready.frames.dispatch_plumbing_files`), where a Mac's run would name it.

Left as it is: the "default" action's once-per-location registry is the emulator module's, so one warning text
raised from two of the program's lines is shown once (the first line), where a Mac shows it at each.
"""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType
from typing import Any, Callable, Collection, Sequence


def _under(path: str, dirs: Sequence[str]) -> bool:
    return os.path.abspath(path).startswith(tuple(dirs))


def place(frame: FrameType | None, ours: Sequence[str], plumbing: Collection[str]) -> tuple[str, int] | None:
    """The file and line of the first frame from ``frame`` outward that is neither under one of ``ours`` (the
    directories of mpsready, each ending with the separator) nor one of ``plumbing`` (files of PyTorch's dispatch
    plumbing), nor the :mod:`warnings` module's; ``None`` when there is none."""
    skip = os.path.abspath(warnings.__file__)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen") and os.path.abspath(name) != skip and not _under(name, ours) \
                and os.path.abspath(name) not in plumbing:
            return name, frame.f_lineno
        frame = frame.f_back
    return None


def install(ours: Sequence[str], plumbing: Sequence[str]) -> Callable[[], None]:
    """Wrap :func:`warnings.showwarning`: a warning attributed to a file under ``ours`` is shown at
    :func:`place`'s frame instead (its source line read again there). Returns the function that undoes it."""
    shown = warnings.showwarning
    ours = tuple(ours)
    skipped = frozenset(os.path.abspath(p) for p in plumbing)

    def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                    line: str | None = None) -> None:
        if _under(filename, ours):
            found = place(sys._getframe(1), ours, skipped)
            if found is not None:
                filename, lineno, line = found[0], found[1], None  # None: warnings reads the program's line
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning

    def undo() -> None:
        if warnings.showwarning is showwarning:
            warnings.showwarning = shown

    return undo


def install_for_run() -> Callable[[], None]:
    """:func:`install` with mpsready's own directory and the loaded PyTorch's dispatch plumbing."""
    from mpsready.frames import dispatch_plumbing_files, package_dirs

    return install(package_dirs("mpsready"), dispatch_plumbing_files())
