"""Temp files an earlier ``--apply`` left behind when it was killed (``kill -9`` between write and rename).

:func:`mpsready.migrate.apply.write_atomically` writes ``.NAME.<8 random characters>.mpsready-tmp`` beside ``NAME`` and
renames it over ``NAME``; a process killed in between leaves the temp file (the original is intact: the
rename is atomic). Every plan lists those found beside the files it considers (:func:`find_leftovers`);
``--apply`` removes the ones older than :data:`MIN_AGE_S` (:func:`remove_leftovers`), so a temp file that a
migrate running at the same moment is still writing is never taken from it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

SUFFIX = ".mpsready-tmp"
MIN_AGE_S = 60.0


def find_leftovers(root: Path, files: list[str]) -> list[str]:
    """Paths (relative to ``root``, POSIX, sorted) of ``.*.mpsready-tmp`` files in the folders of ``files``
    (absolute paths); one ``scandir`` per folder."""
    out: list[str] = []
    for folder in sorted({os.path.dirname(os.path.abspath(f)) for f in files}):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") and e.name.endswith(SUFFIX) and e.is_file(follow_symlinks=False):
                out.append(Path(os.path.relpath(e.path, root)).as_posix())
    return sorted(out)


def remove_leftovers(root: Path, leftovers: list[str], *, now: float | None = None) -> tuple[list[str], list[str]]:
    """Remove each leftover older than :data:`MIN_AGE_S`; ``(removed, kept)`` where ``kept`` entries read
    ``"PATH: reason"`` (too recent: another migrate may be writing it; or the OS error)."""
    now = time.time() if now is None else now
    removed, kept = [], []
    for rel in leftovers:
        path = root / rel
        try:
            age = now - path.lstat().st_mtime
            if age < MIN_AGE_S:
                kept.append(f"{rel}: written {age:.0f} s ago (another run may be writing it); left")
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            kept.append(f"{rel}: not removed ({exc.strerror or exc})")
            continue
        removed.append(rel)
    return removed, kept
