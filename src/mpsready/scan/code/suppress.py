"""Inline suppression comments: ``# mpsready: ignore[CODE, ...]`` (or a bare ``# mpsready: ignore``), read with
``tokenize``, never with regular expressions over the source."""

from __future__ import annotations

import io
import tokenize

def suppressions(text: str) -> dict[str, list[str]]:
    """``# mpsready: ignore[CODE, ...]`` (or bare ``# mpsready: ignore``) comments, by line, via tokenize."""
    out: dict[str, list[str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                codes = parse_suppression(tok.string)
                if codes is not None:
                    out[str(tok.start[0])] = codes
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def parse_suppression(comment: str) -> list[str] | None:
    """Codes named by one comment's ``mpsready: ignore[...]`` directive; ``["*"]`` for a bare ignore."""
    body = comment.lstrip("#").strip()
    marker = "mpsready:"
    pos = body.find(marker)
    if pos < 0:
        return None
    rest = body[pos + len(marker):].strip()
    if not rest.startswith("ignore"):
        return None
    rest = rest[len("ignore"):].strip()
    if not rest.startswith("["):
        return ["*"]
    inner = rest[1:].split("]", 1)[0]
    return [c.strip().upper() for c in inner.split(",") if c.strip()]
