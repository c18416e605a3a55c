"""Content-hash cache of Python analysis results, kept outside the scanned tree.

One JSON file per scanned root under the cache directory (``$MPSREADY_CACHE_DIR``, else
``$XDG_CACHE_HOME/mpsready``, else ``~/.cache/mpsready``). Keys are BLAKE2b digests of file contents, so a renamed or touched
file costs nothing and an edited one is re-analysed. The salt (analyser version, package version,
knowledge-base digest) invalidates everything when the analysis changes. The scan never writes
into the project; a cache that cannot be read or written is ignored. The folder must be the user's own and
each file carries a MAC (:mod:`mpsready.cachefiles`): an edited or planted entry is a cold cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mpsready import __version__, cachefiles
from mpsready.scan.code import ANALYZER_VERSION


def default_cache_dir() -> Path:
    """``$MPSREADY_CACHE_DIR``, else ``$XDG_CACHE_HOME/mpsready``, else ``~/.cache/mpsready``."""
    if os.environ.get("MPSREADY_CACHE_DIR"):
        return Path(os.environ["MPSREADY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mpsready"


def content_key(data: bytes) -> str:
    import hashlib  # here, like tempfile and importlib.resources below: a --no-cache scan loads none of them

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _salt() -> str:
    from importlib import resources

    kb = b"".join(resources.files("mpsready.scan").joinpath(f"data/{n}").read_bytes()
                  for n in ("packages.yaml", "cuda_api.yaml"))
    return f"{ANALYZER_VERSION}/{__version__}/{content_key(kb)}"


def _stat_ok(row: Any) -> bool:
    """A stats row is [size, mtime_ns, content key, line count]."""
    return (isinstance(row, list) and len(row) == 4 and all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in (row[0], row[1], row[3]))
            and isinstance(row[2], str))


class MemoCache:
    """The scan cache's interface held in memory for one process: analyses by content key, no file stats (a
    file's bytes may be an overlay's, not the disk's) and nothing written. ``migrate`` hands one to each scan of
    its rounds (:func:`mpsready.migrate.engine.migrate_path`), so a round re-analyses only the files the round
    before changed."""

    def __init__(self) -> None:
        self._entries: dict[str, Any] = {}
        self.hits = 0

    def known(self, relpath: str, size: int, mtime_ns: int) -> tuple[str, int] | None:
        return None

    def remember(self, relpath: str, size: int, mtime_ns: int, key: str, lines: int) -> None:
        return None

    def get(self, key: str) -> Any | None:
        value = self._entries.get(key)
        if value is not None:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        self._entries[key] = value

    def save(self) -> None:
        return None


class ScanCache:
    """``get(key)`` / ``put(key, value)`` over one root's cache file; ``save()`` writes atomically."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.path = cache_dir / f"scan-{content_key(os.fsencode(root.resolve()))}.json"
        self.salt = _salt()
        self._old: dict[str, Any] = {}
        self._new: dict[str, Any] = {}
        self._old_stats: dict[str, list] = {}
        self._new_stats: dict[str, list] = {}
        self.hits = 0
        self.folder = cache_dir
        self.key = cachefiles.open_folder(cache_dir)  # None: not the user's own folder (warned); not used
        payload = cachefiles.read_sealed(self.path, self.key) if self.key is not None else None
        try:
            if payload is None:  # missing, not a bounded regular file, or its MAC does not check: cold
                raise ValueError("no entry")
            doc = json.loads(payload)
            if doc.get("salt") == self.salt and isinstance(doc.get("entries"), dict):
                self._old = {k: v for k, v in doc["entries"].items() if isinstance(v, dict)}
                stats = doc.get("stats") if isinstance(doc.get("stats"), dict) else {}
                self._old_stats = {k: v for k, v in stats.items() if _stat_ok(v)}  # drop damaged rows
        except (OSError, ValueError, AttributeError, RecursionError):  # a damaged cache is a cold cache
            pass

    def known(self, relpath: str, size: int, mtime_ns: int) -> tuple[str, int] | None:
        """(content key, line count) when the file's size and mtime match the last scan (no read needed)."""
        st = self._old_stats.get(relpath)
        if st and st[0] == size and st[1] == mtime_ns and st[2] in self._old:
            return st[2], st[3]
        return None

    def remember(self, relpath: str, size: int, mtime_ns: int, key: str, lines: int) -> None:
        self._new_stats[relpath] = [size, mtime_ns, key, lines]

    def get(self, key: str) -> Any | None:
        value = self._old.get(key)
        if value is not None:
            self.hits += 1
            self._new[key] = value
        return value

    def put(self, key: str, value: Any) -> None:
        self._new[key] = value

    def save(self) -> None:
        """Write the entries used in this scan (stale ones are dropped); errors are ignored."""
        if self.key is None or (self._new == self._old and self._new_stats == self._old_stats):
            return
        payload = json.dumps({"salt": self.salt, "entries": self._new, "stats": self._new_stats},
                             separators=(",", ":")).encode()
        try:
            cachefiles.write_sealed(self.folder, self.path, self.key, payload, ".scan-")
        except OSError:
            pass
