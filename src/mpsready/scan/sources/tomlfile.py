"""TOML loading with a clear error (tomllib on 3.11+, tomli before)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib



class TOMLNestingError(ValueError):
    """TOML nested deeper than tomllib's recursive parser can follow (``a = [[[[...]]]]``)."""


# what :func:`loads` raises, for ``except`` clauses: tomllib's own error or the nesting error above
TOMLDecodeError = (tomllib.TOMLDecodeError, TOMLNestingError)


def loads(text: str) -> dict:
    """Parse TOML; raises one of :data:`TOMLDecodeError` (tomllib's message names the line and column)."""
    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per nesting level
        raise TOMLNestingError("TOML nested too deeply to read") from None


def load_declaration(result, relpath: str, text: str) -> dict | None:
    """Parse a declaration file's TOML for a dependency source.

    On a parse error, records a broken-TOML input finding (with the line tomllib names) in
    ``result`` (a :class:`~mpsready.scan.sources.interface.SourceResult`) and returns ``None``,
    so one bad file becomes a finding and never aborts the scan.
    """
    from mpsready.scan.rules import inputs as I
    from mpsready.scan.sources.interface import RawFinding

    try:
        return loads(text)
    except TOMLDecodeError as exc:
        result.findings.append(RawFinding(I.BROKEN_TOML, relpath, error_line(exc, text), f"TOML does not parse: {exc}"))
        return None


def error_line(exc: Exception, text: str = "") -> int | None:
    """The line number tomllib reports in its message ('... (at line 3, column 9)'); the last line
    for an error 'at end of document'; else ``None``."""
    msg = str(exc)
    if "end of document" in msg and text:
        return text.count("\n") + (0 if text.endswith("\n") else 1)
    marker = "at line "
    if marker in msg:
        digits = msg.split(marker, 1)[1].split(",")[0].split(")")[0]
        return int(digits) if digits.isdigit() else None
    return None
