"""Text from the scanned project (file names, quoted lines) made safe to show.

A file name may hold a newline, a ``|`` or an escape sequence (``\\x1b[2J`` clears the screen): printed as is
it would break a Markdown table or drive the reader's terminal. JSON and SARIF keep the exact text (their
encoders escape it); the terminal and Markdown renderers show control characters as escapes instead.
"""

from __future__ import annotations

import unicodedata


def visible(text: str) -> str:
    """``text`` with every control character (Unicode category Cc: C0, DEL, C1; ``\\x1b`` ESC, ``\\x07`` BEL,
    newlines included) written as ``\\xNN``, so a project string can neither drive a terminal nor end a line."""
    if text.isprintable():
        return text
    return "".join(f"\\x{ord(ch):02x}" if unicodedata.category(ch) == "Cc" else ch for ch in text)


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
    fence = "``" if "`" in body else "`"
    if body.startswith("`") or body.endswith("`"):
        body = f" {body} "
    return f"{fence}{body}{fence}"
