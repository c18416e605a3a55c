"""The envelope every JSON output carries (see SPEC "Shared conventions")."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from mpsready import __version__


def utc_now() -> str:
    """Current UTC time as ISO 8601 with a ``Z`` suffix, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def envelope(name: str, version: int, **body: Any) -> dict[str, Any]:
    """``{"schema": {"name", "version"}, "mpsready", "created", **body}``."""
    return {"schema": {"name": name, "version": version}, "mpsready": __version__, "created": utc_now(), **body}


def check_envelope(doc: Any, name: str, max_version: int) -> dict[str, Any]:
    """Validate the envelope of a loaded JSON document; raises ``ValueError`` with a clear message."""
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), dict):
        raise ValueError(f"not an mpsready {name} document (no 'schema' field)")
    got = doc["schema"].get("name")
    if got != name:
        raise ValueError(f"expected an mpsready {name} document, got {got!r}")
    ver = doc["schema"].get("version")
    if not isinstance(ver, int) or ver > max_version:
        raise ValueError(f"{name} schema version {ver!r} is newer than this mpsready understands ({max_version})")
    return doc
