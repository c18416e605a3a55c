"""Cache files that cannot lie: the scan cache and the stored migrate plan (issue 34).

A cache entry decides a verdict (a cached analysis turns ``mac_for_dev`` into ``runs_on_mac`` if edited) and a
stored plan is written into the user's source by ``migrate --apply``. So a cache is used only when:

* **the folder is the user's own**: owned by this user and not writable by group or others (else it is
  ignored, with one warning on stderr). A missing folder is created ``0700``.
* **each entry carries a MAC**: HMAC-SHA256 keyed by a per-user secret, ``CACHE/secret`` (32 random bytes,
  created ``0600`` with ``O_EXCL``, refused unless a regular file of this user's with no group/other bits).
  An entry whose MAC does not check (edited, planted, or written by another user's key) is a cold cache.
* **only regular files of bounded size are read**: opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with
  ``fstat``, so a named pipe or a link to ``/dev/zero`` planted as an entry neither hangs nor fills memory.

:func:`seal` / :func:`unseal` wrap a payload as ``mpsready-mac <hex>\\n`` + payload.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import sys
from pathlib import Path

SECRET = "secret"
SECRET_BYTES = 32
MAX_ENTRY = 256 * 1024 * 1024  # bytes of one cache file
_HEADER = b"mpsready-mac "
_warned: set[str] = set()


class CacheRefused(Exception):
    """The cache folder or its secret is not safe to use; the message says why (one line)."""


def _warn(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        sys.stderr.write(f"mpsready: {text}\n")


def check_folder(folder: Path, create: bool = True) -> None:
    """Raise :class:`CacheRefused` unless ``folder`` is a folder owned by this user and not writable by group or
    others (created ``0700`` when missing and ``create``)."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        if not create:
            raise CacheRefused(f"the cache folder {folder} does not exist") from None
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.stat(folder)
        except OSError as exc:
            raise CacheRefused(f"cannot create the cache folder {folder}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise CacheRefused(f"cannot use the cache folder {folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CacheRefused(f"the cache folder {folder} is not a folder")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise CacheRefused(f"the cache folder {folder} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        raise CacheRefused(f"the cache folder {folder} is writable by others (mode {stat.S_IMODE(st.st_mode):o})")


def read_regular(path: Path, limit: int = MAX_ENTRY) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, pipe or device) of at most ``limit`` bytes;
    ``OSError`` otherwise (``FileNotFoundError`` when missing): :func:`mpsready.safeio.read_bounded`."""
    from mpsready.safeio import BadArtifact, read_bounded

    try:
        return read_bounded(path, limit)
    except BadArtifact as exc:
        raise OSError(str(exc)) from None


def secret(folder: Path) -> bytes:
    """The per-user key in ``folder`` (created when missing); :class:`CacheRefused` when it is not a regular
    ``0600`` file of this user's holding :data:`SECRET_BYTES` bytes."""
    path = folder / SECRET
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise CacheRefused(f"cannot create the cache key {path}: {exc.strerror or exc}") from None
    else:
        try:
            os.write(fd, os.urandom(SECRET_BYTES))
        finally:
            os.close(fd)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise CacheRefused(f"cannot read the cache key {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()) \
                or st.st_mode & 0o077 or st.st_size != SECRET_BYTES:
            raise CacheRefused(f"the cache key {path} is not a 0600 file of this user's with {SECRET_BYTES} bytes")
        key = os.read(fd, SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != SECRET_BYTES:
        raise CacheRefused(f"the cache key {path} is not {SECRET_BYTES} bytes")
    return key


def open_folder(folder: Path, *, create: bool = True) -> bytes | None:
    """The key for a cache in ``folder`` when the folder may be used, else ``None`` after one warning."""
    try:
        check_folder(folder, create)
        return secret(folder)
    except CacheRefused as exc:
        _warn(f"{exc}; the cache is not used")
        return None


def seal(key: bytes, payload: bytes) -> bytes:
    """``payload`` with its MAC line in front."""
    return _HEADER + hmac.new(key, payload, hashlib.sha256).hexdigest().encode() + b"\n" + payload


def unseal(key: bytes, data: bytes) -> bytes | None:
    """The payload of a sealed ``data`` whose MAC checks, else ``None``."""
    head, sep, payload = data.partition(b"\n")
    if not sep or not head.startswith(_HEADER):
        return None
    mac = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    return payload if hmac.compare_digest(mac, head[len(_HEADER):]) else None


def write_sealed(folder: Path, dest: Path, key: bytes, payload: bytes, prefix: str) -> None:
    """``seal(key, payload)`` into ``dest`` through a fresh temporary file in ``folder``; ``OSError`` on failure."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(seal(key, payload))
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_sealed(path: Path, key: bytes, limit: int = MAX_ENTRY) -> bytes | None:
    """The checked payload of the cache file ``path``; ``None`` when missing, not a bounded regular file, or
    its MAC does not check."""
    try:
        return unseal(key, read_regular(path, limit))
    except OSError:
        return None
