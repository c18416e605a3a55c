"""Text from the scanned project (file names, quoted lines) made safe to show.

A file name may hold a newline, a ``|`` or an escape sequence (``\\x1b[2J`` clears the screen): printed as is
it would break a Markdown table or drive the reader's terminal. JSON and SARIF keep the exact text (their
encoders escape it); the terminal and Markdown renderers show control characters as escapes instead.
"""

from __future__ import annotations

import unicodedata


def visible(text: str) -> str:
    """``text`` with every control character (``\\n``, ``\\x1b``, ``\\x7f``...) written as its escape."""
    if text.isprintable():
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) == "Cc" else ch
                   for ch in text)


def md_cell(text: str) -> str:
    """Plain text for a Markdown table cell: visible, with ``|`` escaped so the row keeps its columns."""
    return visible(text).replace("|", "\\|")


def md_code(text: str) -> str:
    """An inline code span for a Markdown table cell that survives backticks and pipes in ``text``."""
    body = md_cell(text)
    fence = "``" if "`" in body else "`"
    if body.startswith("`") or body.endswith("`"):
        body = f" {body} "
    return f"{fence}{body}{fence}"
