"""Local facts: what a real Mac observed where the shipped data predicted otherwise (``mpsready learn``).

One JSON file, ``learned.json`` (schema ``mpsready.learned`` v1), in ``MPSREADY_DATA_DIR`` when set, else the
user data folder (``$XDG_DATA_HOME/mpsready`` or ``~/.local/share/mpsready``; ``~/Library/Application
Support/mpsready`` on macOS; ``%APPDATA%\\mpsready`` on Windows). Each fact: the operator, what the Mac did
(``error``: no MPS kernel, PyTorch's NotImplementedError; ``fallback``: ran on the CPU through
``PYTORCH_ENABLE_MPS_FALLBACK``, i.e. no MPS kernel either; ``runs``: dispatched on MPS), the PyTorch release and
macOS it was observed with, the machine, how it was seen, what the shipped data had predicted, the archive it
came from and when it was learned.

:func:`lookup` is asked by the judge (:meth:`mpsready.ops.judge.Judge._judge`) before the shipped tables: a
fact applies to the same PyTorch release (``2.5.1``; a local ``+cpu`` part ignored) and the same macOS major
version (``14``); the judgement it gives names its source as ``observed on <machine> ...``. A missing or
unreadable file means no local facts (never an error: the shipped data stands).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

SCHEMA = "mpsready.learned"
FILENAME = "learned.json"
DATA_DIR_ENV = "MPSREADY_DATA_DIR"
STATUSES = ("error", "fallback", "runs")


@dataclass(frozen=True)
class Fact:
    op: str
    status: str  # error | fallback | runs
    torch: str  # the release observed, e.g. "2.5.1"
    macos: str  # e.g. "14.4.1"
    machine: str
    how: str  # how the Mac showed it
    predicted: str  # what the shipped data said
    archive: str  # the results archive's file name
    learned: str  # UTC time

    @property
    def label(self) -> str:
        """``observed on mac-mini (macOS 14.4.1, torch 2.5.1; mpsready learn, results.tar.gz)``."""
        return f"observed on {self.machine} (macOS {self.macos}, torch {self.torch}; mpsready learn, {self.archive})"


def data_dir() -> Path:
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "mpsready"
    if sys.platform.startswith("win"):
        return Path(os.environ.get("APPDATA") or Path.home()) / "mpsready"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "mpsready"


def store_path() -> Path:
    return data_dir() / FILENAME


_CACHE: dict[str, tuple[float, dict[tuple[str, str, str], Fact]]] = {}


def _release(version: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        return ".".join(str(p) for p in (Version(version).release + (0, 0))[:3])
    except InvalidVersion:
        return version


def _major(macos: str) -> str:
    return str(macos).split(".")[0]


def load() -> list[Fact]:
    """Every fact in the store (an unreadable store reads as none)."""
    path = store_path()
    try:
        if not path.is_file() or path.stat().st_size > 64 << 20:
            return []
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(doc, dict) or (doc.get("schema") or {}).get("name") != SCHEMA:
        return []
    out = []
    for d in doc.get("facts") or []:
        try:
            fact = Fact(**{k: str(d[k]) for k in Fact.__dataclass_fields__})
        except (KeyError, TypeError):
            continue
        if fact.status in STATUSES:
            out.append(fact)
    return out


def _index() -> dict[tuple[str, str, str], Fact]:
    path = store_path()
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    hit = _CACHE.get(str(path))
    if hit is None or hit[0] != mtime:
        hit = (mtime, {(f.op, _release(f.torch), _major(f.macos)): f for f in load()})
        _CACHE[str(path)] = hit
    return hit[1]


_OFF = [0]  # > 0 while disabled(): judge against the shipped tables only


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Judge against the shipped tables only (``mpsready learn`` compares an observation with them)."""
    _OFF[0] += 1
    try:
        yield
    finally:
        _OFF[0] -= 1


def lookup(op: str, torch: str, macos: str) -> Fact | None:
    """The fact observed for ``op`` with this PyTorch release and macOS major version, else ``None``."""
    if _OFF[0] or not os.path.exists(store_path()):
        return None
    return _index().get((op, _release(torch), _major(macos)))


def save(new: list[Fact]) -> tuple[Path, int]:
    """Add ``new`` to the store (a fact for the same op, release and macOS major replaces the old one); returns
    the store's path and how many facts it now holds. Written to a temporary file and renamed into place."""
    from mpsready.schema import envelope

    facts = {(f.op, _release(f.torch), _major(f.macos)): f for f in load()}
    for f in new:
        facts[(f.op, _release(f.torch), _major(f.macos))] = f
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = envelope(SCHEMA, 1, basis="observed", facts=[asdict(f) for _, f in sorted(facts.items())])
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    _CACHE.pop(str(path), None)
    return path, len(facts)


def as_dict(f: Fact) -> dict[str, Any]:
    return {**asdict(f), "label": f.label}
