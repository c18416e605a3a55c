"""The public names a release's modules have, mined from its macOS wheel: which names of the installed torch a
target release lacks.

Data: ``data/mined/api_names.json.gz``, built by :mod:`mpsready.ops.build.api_names` (``python -m
mpsready.ops.build --api-names``) from each release's ``torch-V-...-macosx_*_arm64.whl`` on PyPI (file name and
sha256 per release in the file's ``wheels``), read with ``ast``, never imported. Per module: the names of the first
release (2.2.2) and, per later release, the names added and removed against it; modules whose files do not let the
reading be complete in a release are listed in ``unknown``, and nothing of theirs is hidden on that release.

A name is said to be lacking only where the table can say so: the module is fully known in both the target and
the installed release, the installed release's reading has the name (so the reading explains why it is there)
and the target's does not, and the installed module's own functions do not read it as a global (taken out of its
``__dict__`` it would raise NameError inside torch). No torch import; the file is read once, at the first question (an emulated run's
start), never at mpsready's import.
"""

from __future__ import annotations

import functools
import gzip
import json
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parent / "data" / "mined" / "api_names.json.gz"


@functools.lru_cache(maxsize=1)
def load(path: Path = TABLE) -> dict[str, Any] | None:
    """The table, or None where it is not shipped (then only the hand list of python_checks.yaml applies)."""
    try:
        with gzip.open(path, "rb") as fh:
            return json.loads(fh.read())
    except FileNotFoundError:
        return None


def release_names(table: dict[str, Any], release: str, module: str) -> frozenset[str]:
    names = set(table["base_names"].get(module, ()))
    for entry in table["diff"].get(release, {}).get(module, ()):
        (names.add if entry[0] == "+" else names.discard)(entry[1:])
    return frozenset(names)


@dataclass(frozen=True)
class Lacking:
    """What the table says for one (target, installed) pair: ``names`` (module -> names the target lacks and the
    installed release has), ``seen`` (module -> the installed release's names, for the modules it can say about:
    :meth:`can_say`)."""

    names: dict[str, frozenset[str]]
    seen: dict[str, frozenset[str]]
    source: str
    # names the target lacks that the installed module's own functions read as globals (``read_as_globals``):
    # out of its __dict__ they would raise NameError inside torch (2.13's torch.__getattr__ reads importlib), so
    # the table does not hide them
    global_reads: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    def can_say(self, module: str, name: str) -> bool:
        """Whether the table decides ``module.name`` for the target (module known in both releases, name read in
        the installed release's files)."""
        return name in self.seen.get(module, frozenset())

    def has(self, module: str, name: str) -> bool:
        """Whether the table says the target has ``module.name`` (it can say, and the target's reading has it)."""
        return self.can_say(module, name) and name not in self.names.get(module, frozenset()) and name not in \
            self.global_reads.get(module, frozenset())


def _release(version: str) -> str:
    """``2.13.0+cpu`` -> ``2.13.0``."""
    return version.split("+", 1)[0]


def lacking(target: str, installed: str, table: dict[str, Any] | None = None) -> Lacking | None:
    """The names ``installed`` has and ``target`` lacks, per module, or None where either release is not in the
    table (a nightly, a release not mined)."""
    table = table if table is not None else load()
    if table is None:
        return None
    target, installed = _release(target), _release(installed)
    releases = table["releases"]
    if target not in releases or installed not in releases:
        return None
    unknown = set(table["unknown"].get(target, {})) | set(table["unknown"].get(installed, {}))
    names: dict[str, frozenset[str]] = {}
    seen: dict[str, frozenset[str]] = {}
    global_reads: dict[str, frozenset[str]] = {}
    reads = table.get("read_as_globals", {}).get(installed, {})
    for module in table["modules"]:
        if module in unknown:
            continue
        have = release_names(table, installed, module)
        seen[module] = have
        lacks = have - release_names(table, target, module)
        kept = lacks.intersection(reads.get(module, ()))
        if lacks - kept:
            names[module] = lacks - kept
        if kept:
            global_reads[module] = kept
    wheel = table["wheels"][target]
    return Lacking(names, seen, f"{wheel['name']} (sha256 {wheel['sha256']}), read with ast: ops/build/api_names.py",
                   global_reads)
