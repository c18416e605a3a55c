"""Small helpers shared by the evidence adapters: tolerant reading of other stages' JSON.

The adapters read documents written by other stages, possibly by another mpsready
version on another machine. A field that is missing or of the wrong type reads as
``None`` (unknown); it never raises and never reads as a good result.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from mpsready import safeio
from mpsready.errors import UsageError
from mpsready.findings import Finding


class EvidenceError(UsageError):
    """A stage output cannot be read (missing file, bad JSON, wrong schema); the CLI exits 2."""


def load_json(path: str | os.PathLike[str], schema_name: str) -> dict[str, Any]:
    """Read ``path`` and check that its envelope names ``schema_name`` (any version up to 1).

    Raises :class:`EvidenceError` with the path in the message, also for a path that is not a regular file
    and for JSON with a non-finite or out-of-range number (:mod:`mpsready.safeio`).
    """
    p = Path(path)
    try:
        doc = safeio.loads(safeio.read_text(p))  # a regular file (never a FIFO); finite, in-range numbers
    except FileNotFoundError:
        raise EvidenceError(f"{schema_name} output not found: {p}") from None
    except safeio.BadArtifact as exc:
        raise EvidenceError(f"cannot read {p}: {exc}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceError(f"cannot read {p}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    except RecursionError:  # json's decoder recurses once per nesting level
        raise EvidenceError(f"cannot read {p}: JSON nested too deeply") from None
    check_schema(doc, schema_name, str(p))
    return doc


def check_schema(doc: Any, schema_name: str, where: str) -> None:
    if not isinstance(doc, dict):
        raise EvidenceError(f"{where}: not an mpsready {schema_name} document (not a JSON object)")
    schema = doc.get("schema")
    name = schema.get("name") if isinstance(schema, dict) else None
    if name != schema_name:
        raise EvidenceError(f"{where}: expected an mpsready {schema_name} document, got schema {name!r}")


def dig(doc: Any, *paths: str) -> Any:
    """The first non-``None`` value among dotted ``paths`` in nested mappings, else ``None``."""
    for path in paths:
        cur = doc
        for part in path.split("."):
            if isinstance(cur, Mapping) and part in cur:
                cur = cur[part]
            else:
                cur = None
                break
        if cur is not None:
            return cur
    return None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off", ""):
        return False
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def findings_of(doc: Any) -> list[Finding]:
    """``doc["findings"]`` parsed with the shared model; malformed entries are skipped."""
    out = []
    raw = doc.get("findings") if isinstance(doc, Mapping) else None
    for item in raw if isinstance(raw, list) else []:
        try:
            out.append(Finding.from_dict(item))
        except (KeyError, ValueError, TypeError):
            continue
    return out


def first_str(values: Iterable[Any]) -> str | None:
    for v in values:
        if isinstance(v, str) and v:
            return v
    return None
