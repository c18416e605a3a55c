"""Text from the scanned project (file names, quoted lines) made safe to show.

A file name may hold a newline, a ``|`` or an escape sequence (``\\x1b[2J`` clears the screen): printed as is
it would break a Markdown table or drive the reader's terminal. One function per format: :func:`visible`
(terminal, GitHub annotations), :func:`md_text` / :func:`md_cell` / :func:`md_code` (Markdown), :func:`json_safe`
(JSON and SARIF keep the exact text, their encoders escape control characters, except the lone surrogates of a
non-UTF-8 file name, which no UTF-8 document can hold).
"""

from __future__ import annotations

# characters shown as escapes besides the control characters (Cc): the format characters (Cf: bidi overrides
# and isolates U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C, zero-width U+200B-U+200D, U+2060, U+FEFF,
# soft hyphen) that reorder or hide what a reader sees (CVE-2021-42574, "Trojan Source"), the line and
# paragraph separators (Zl, Zp) that end a line in some viewers, and lone surrogates (Cs: a file name that is
# not UTF-8, read with Python's surrogateescape, is shown as its bytes)
_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _escape_char(ch: str) -> str:
    n = ord(ch)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): the byte itself
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def visible(text: str) -> str:
    """``text`` with every character that can drive a terminal, end a line or hide/reorder text written as an
    escape (``\\x1b``, ``\\u202e``; a non-UTF-8 byte of a file name as ``\\xff``): control characters (C0, DEL,
    C1, newlines included), bidi and zero-width characters, line separators and lone surrogates. The terminal,
    Markdown and GitHub renderers use it; the one function for shown text."""
    if text.isprintable():
        return text
    import unicodedata

    return "".join(_escape_char(ch) if unicodedata.category(ch) in _HIDDEN else ch for ch in text)


def json_text(text: str) -> str:
    """``text`` for a JSON or SARIF document, which must be UTF-8: a lone surrogate (a non-UTF-8 byte of a
    file name, read with surrogateescape) cannot be encoded, so it is written as ``\\xNN`` (its byte) or
    ``\\uXXXX``; everything else stays exact (the JSON encoder escapes control characters)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(_escape_char(ch) if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def json_safe(value):  # type: ignore[no-untyped-def]
    """A JSON-ready ``value`` (dicts, lists, strings, numbers) with :func:`json_text` applied to every string,
    keys included: the one escaping step of the JSON and SARIF writers."""
    if isinstance(value, str):
        return json_text(value)
    if isinstance(value, dict):
        return {json_safe(k) if isinstance(k, str) else k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def html_text(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities: Markdown renderers (GitHub, pandoc, mkdocs, wikis) pass raw HTML
    through, so a project string ``<script>`` or ``<img onerror=...>`` would become markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_text(text: str) -> str:
    """Project text for Markdown prose: :func:`visible`, then :func:`html_text`."""
    return html_text(visible(text))


def md_cell(text: str) -> str:
    """Plain text for a Markdown table cell: :func:`md_text`, with ``|`` escaped so the row keeps its
    columns."""
    return md_text(text).replace("|", "\\|")


def md_code(text: str) -> str:
    """An inline code span for a Markdown table cell that survives backticks and pipes in ``text`` (inside a
    code span HTML is not interpreted and entities are not decoded: only control characters and pipes are
    escaped)."""
    body = visible(text).replace("|", "\\|")
    longest = run = 0
    for ch in body:  # the fence is one backtick longer than the longest run inside (CommonMark 6.1)
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "  # CommonMark strips one space each side: a span starting or ending with ` keeps it
    return f"{fence}{body}{fence}"
