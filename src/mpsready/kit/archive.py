"""Read a results archive (``results.tar.gz`` of ``run-on-mac.sh``) safely: it came back from a machine outside
the lab and is read as untrusted input.

:func:`extract` unpacks it with :mod:`tarfile` member by member, never with ``extractall``: only regular files
and folders (links, devices and FIFOs are skipped and named); no absolute name, no ``..`` part, no name under
another root than ``results/``; at most :data:`MAX_MEMBERS` members, :data:`MAX_FILE_BYTES` per file and
:data:`MAX_TOTAL_BYTES` in all, counted on the bytes actually written (a gzip bomb stops at the limit). Nothing
in it is ever unpickled: the readers take JSON and run records (JSON and safetensors) only.
"""

from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_MEMBERS = 20000
MAX_FILE_BYTES = 256 << 20
MAX_TOTAL_BYTES = 1 << 30
ROOT = "results"


class ArchiveError(ValueError):
    """The archive cannot be read or breaks a rule of :func:`extract`."""


@dataclass
class Extracted:
    root: Path  # DEST/results
    skipped: list[str] = field(default_factory=list)  # members not written, with why


def _safe_name(name: str) -> PurePosixPath:
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith(("/", "\\")) or any(part in ("..", "") for part in p.parts) \
            or "\\" in name or ":" in (p.parts[0] if p.parts else ""):
        raise ArchiveError(f"unsafe member name {name!r} (absolute, '..' or a drive)")
    if not p.parts or p.parts[0] != ROOT:
        raise ArchiveError(f"member {name!r} is not under {ROOT}/: not a results archive of mpsready kit")
    return p


def extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Extracted:
    """Unpack ``archive`` under ``dest`` (an empty folder); raises :class:`ArchiveError`."""
    dest = Path(dest)
    out = Extracted(dest / ROOT)
    total = 0
    try:
        tar = tarfile.open(archive, "r:*")
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"cannot open {archive}: {exc}") from None
    with tar:
        try:
            for n, member in enumerate(tar):
                if n >= MAX_MEMBERS:
                    raise ArchiveError(f"more than {MAX_MEMBERS} members")
                rel = _safe_name(member.name.rstrip("/"))
                target = dest.joinpath(*rel.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if not member.isfile():
                    out.skipped.append(f"{member.name}: not a regular file")
                    continue
                if member.size > MAX_FILE_BYTES:
                    raise ArchiveError(f"{member.name}: {member.size} bytes, above the {MAX_FILE_BYTES}-byte limit")
                total += _write(tar, member, target, MAX_TOTAL_BYTES - total)
        except ArchiveError:
            raise
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:  # damaged or cut short
            raise ArchiveError(f"cannot read {archive}: {exc}") from None
    if not out.root.is_dir():
        raise ArchiveError(f"{archive} holds no {ROOT}/ folder: not a results archive of mpsready kit")
    return out


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, budget: int) -> int:
    src = tar.extractfile(member)
    if src is None:
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with src, open(target, "wb") as fh:
        while True:
            block = src.read(1 << 20)
            if not block:
                break
            written += len(block)
            if written > member.size or written > budget:
                raise ArchiveError(f"{member.name}: more bytes than the archive's limits allow")
            fh.write(block)
    return written
