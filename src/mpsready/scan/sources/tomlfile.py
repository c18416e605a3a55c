"""TOML loading that is total and bounded (tomllib on 3.11+, tomli before).

tomllib raises more than ``TOMLDecodeError`` on hostile input: ``RecursionError`` for arrays or inline
tables nested a few hundred deep, ``ValueError`` for an integer past Python's int-to-str digit limit
(4,300 digits, ``sys.get_int_max_str_digits``), and it spends time and memory that grow with the
square of a dotted key's length (``a.a.a...`` 10**5 parts took 12 GB). :func:`read` turns each into a
finding: lines holding a dotted key longer than :data:`MAX_KEY_PARTS` or brackets nested more than
:data:`MAX_LINE_NESTING` deep are blanked before parsing, and so are lines holding an over-long integer when
the first parse meets one (so the rest of the file is still read); the parsed data is cut at :data:`MAX_DEPTH`
levels.

A scan reads the root pyproject.toml twice (its ``[tool.mpsready]`` settings, then its declarations):
:func:`read` keeps its last answer so the second read costs no parse; :func:`forget` drops it.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_DEPTH = 64  # levels of tables and arrays a declaration reader follows
MAX_KEY_PARTS = 32  # dots outside strings and comments on one line (tomllib spends parts**2 per key)
MAX_LINE_NESTING = 100  # brackets opened on one line (tomllib recurses about three frames per level)
LONG_DIGITS = 4000  # digits in a run that may pass Python's int-to-str limit (4,300 by default)


class TOMLNestingError(ValueError):
    """TOML nested deeper than tomllib's recursive parser can follow (``a = [[[[...]]]]``)."""


class TOMLValueError(ValueError):
    """A TOML value Python refuses to build (an integer past the int-to-str digit limit)."""


# what :func:`loads` raises, for ``except`` clauses: tomllib's own error or the two above
TOMLDecodeError = (tomllib.TOMLDecodeError, TOMLNestingError, TOMLValueError)


def loads(text: str) -> dict:
    """Parse TOML; raises one of :data:`TOMLDecodeError` (tomllib's message names the line and column)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:  # tomllib recurses once per nesting level
        raise TOMLNestingError("TOML nested too deeply to read") from None
    except ValueError as exc:  # int("1" * 5000): the int-to-str digit limit
        line = _long_number_line(text)
        where = f" (at line {line})" if line else ""
        raise TOMLValueError(f"a number too long to read{where}: {str(exc).split(':')[0]}") from None


@dataclass
class Loaded:
    """A parsed TOML file: ``doc`` (``None`` when it does not parse), ``error`` (the message, with
    ``error_line``), the lines blanked for an over-long dotted key or nesting (``blanked``) or for an
    integer past the digit limit (``long_numbers``), and whether data was cut at MAX_DEPTH."""

    doc: dict | None
    error: str | None = None
    error_line: int | None = None
    blanked: list[int] = field(default_factory=list)
    cut: bool = False
    long_numbers: list[int] = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def read(text: str) -> Loaded:
    """Parse ``text`` with the limits above; never raises. The answer is shared by callers that read the
    same text: treat its ``doc`` as read-only."""
    lines = text.split("\n")  # tomllib counts lines at "\n" only
    blanked = [n for n, line in enumerate(lines, 1) if _too_deep(line)]
    for n in blanked:
        lines[n - 1] = ""
    if blanked:
        text = "\n".join(lines)
    long_numbers: list[int] = []
    try:
        try:
            doc = loads(text)
        except TOMLValueError:  # blank each line with a run of digits past the limit, then read the rest once
            long_numbers = [n for n, line in enumerate(lines, 1) if len(line) > LONG_DIGITS and _long_number_line(line)]
            for n in long_numbers:
                lines[n - 1] = ""
            doc = loads("\n".join(lines))
    except TOMLDecodeError as exc:
        return Loaded(None, f"TOML does not parse: {exc}", error_line(exc, text), blanked, long_numbers=long_numbers)
    doc, cut = prune(doc, MAX_DEPTH)
    return Loaded(doc, blanked=blanked, cut=cut, long_numbers=long_numbers)


def forget() -> None:
    """Drop the text and data :func:`read` keeps (called when a scan ends)."""
    read.cache_clear()


def load_declaration(result, relpath: str, text: str) -> dict | None:
    """Parse a declaration file's TOML for a dependency source.

    Adds to ``result`` (a :class:`~mpsready.scan.sources.interface.SourceResult`) a broken-TOML
    finding (INP108, with the line tomllib names) on a parse error, and a nesting finding (INP112) for
    each blanked line and for data cut at :data:`MAX_DEPTH`. Returns the data, or ``None`` when the file
    does not parse, so one bad file becomes a finding and never aborts the scan.
    """
    from mpsready.scan.rules import inputs as I
    from mpsready.scan.sources.interface import RawFinding

    loaded = read(text)
    for n in loaded.blanked:
        result.findings.append(RawFinding(I.TOO_DEEP, relpath, n, f"a dotted key of more than {MAX_KEY_PARTS} parts "
                                          f"or brackets nested more than {MAX_LINE_NESTING} deep; that line was not read"))
    for n in loaded.long_numbers:
        result.findings.append(RawFinding(I.NUMBER_TOO_LONG, relpath, n, f"an integer of more than {LONG_DIGITS:,} "
                                          "digits (past Python's int-to-str limit); that line was not read"))
    if loaded.cut:
        result.findings.append(RawFinding(I.TOO_DEEP, relpath, None, f"tables or arrays nested more than {MAX_DEPTH} "
                                          "levels deep; the values below that level were not read"))
    if loaded.doc is None:
        result.findings.append(RawFinding(I.BROKEN_TOML, relpath, loaded.error_line, loaded.error or "TOML does not parse"))
    return loaded.doc


def prune(doc, limit: int):
    """``doc`` with every dict or list below ``limit`` levels replaced by ``None``, and whether anything was
    cut. Iterative: the data may be nested 10**5 deep, far past Python's recursion limit."""
    cut = False
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if isinstance(value, (dict, list)):
                if depth >= limit:
                    node[key] = None
                    cut = True
                else:
                    stack.append((value, depth + 1))
    return doc, cut


def _too_deep(line: str) -> bool:
    """Whether a line holds a dotted key of more than MAX_KEY_PARTS parts or brackets nested more than
    MAX_LINE_NESTING deep. The exact count (outside strings and comments) runs only on lines whose raw
    character counts already pass the limit, so ordinary files cost one ``str.count`` per line."""
    if line.count(".") <= MAX_KEY_PARTS and line.count("[") + line.count("{") <= MAX_LINE_NESTING:
        return False
    dots, depth = _key_dots(line)
    return dots > MAX_KEY_PARTS or depth > MAX_LINE_NESTING


def _key_dots(line: str) -> tuple[int, int]:
    """Dots on a line outside quoted strings and a trailing comment (an upper bound on its dotted key's parts),
    and the deepest nesting of ``[``/``{`` there."""
    dots, depth, deepest, quote, escaped = 0, 0, 0, "", False
    for ch in line:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            break
        elif ch == ".":
            dots += 1
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return dots, deepest


def _long_number_line(text: str) -> int | None:
    """The first line holding a run of more than LONG_DIGITS digits (underscores allowed, as TOML does)."""
    run = 0
    line = 1
    for ch in text:
        if ch.isdigit() or (ch == "_" and run):
            run += 1
            if run > LONG_DIGITS:
                return line
        else:
            run = 0
            if ch == "\n":
                line += 1
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
        return int(digits) if digits.isdigit() and len(digits) < 12 else None
    return None
