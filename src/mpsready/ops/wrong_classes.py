"""The classes of silent MPS wrong results as advisories, per release (issue 33).

``data/curated/mps_wrong_classes.yaml`` defines each class (ops, dtypes, the value or layout condition, the bound of
its fix, its sources); ``data/mined/mps_wrong_classes.json`` (built by :mod:`mpsready.ops.build.wrong_classes`)
lists the releases each class applies to, read in each release's own table, binary or Inductor source. Here each
class becomes an :class:`~mpsready.ops.advisories.Advisory` whose ``releases`` are those, matched by
:class:`~mpsready.ops.advisories.AdvisoryIndex` like every per-bug advisory. A class the mined file does not list
applies nowhere (never guessed). No torch import.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any

from packaging.version import Version

from mpsready.ops.advisories import FIELDS, Advisory, _check

TABLE = "mps_wrong_classes"
MINED = "mps_wrong_classes.json"
# the fields of a class that are not advisory fields: what the builder reads, kept out of the advisory
_BUILD_ONLY = ("class", "evidence", "how")


def mined() -> dict[str, Any]:
    """The builder's document (``data/mined/mps_wrong_classes.json``)."""
    text = resources.files("mpsready.ops.data.mined").joinpath(MINED).read_text(encoding="utf-8")
    return json.loads(text)


def _span(releases: list[str]) -> str:
    """A specifier that admits every release listed (``>=first,<=last``); the advisory's ``releases`` narrow it."""
    ordered = sorted(releases, key=Version)
    return f">={ordered[0]},<={ordered[-1]}"


@lru_cache(maxsize=None)
def advisories() -> tuple[Advisory, ...]:
    """Every class that applies to at least one release, as an advisory with its ``releases`` and ``family``;
    raises ``ValueError`` on a malformed class (an unknown field or condition, as the per-bug table)."""
    from mpsready.ops.build import curated

    doc = curated.load(TABLE)
    found = mined()["classes"]
    out = []
    for i, c in enumerate(doc["classes"]):
        unknown = set(c) - FIELDS - set(_BUILD_ONLY)
        if unknown:
            raise ValueError(f"{TABLE}.yaml class {c.get('id', i)!r}: unknown field(s) {', '.join(sorted(unknown))}")
        releases = (found.get(c["id"]) or {}).get("releases") or []
        if not releases:
            continue
        entry = {k: v for k, v in c.items() if k not in _BUILD_ONLY}
        entry["torch"] = _span(releases)
        entry["note"] = c["how"]
        out.append(replace(_check(entry, i, TABLE), releases=tuple(releases), family=c["class"],
                           fixed_in=_fixed_in(c.get("torch"))))
    return tuple(out)


def _fixed_in(bound: str | None) -> str | None:
    """The first fixed release of a bound ``<X`` (``"<2.7"`` -> ``"2.7"``), else None."""
    if bound and bound.startswith("<") and not bound.startswith("<=") and "," not in bound:
        return bound[1:]
    return None
