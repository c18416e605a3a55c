"""Write a notebook back by splicing: only the ``source`` values of edited cells change, byte for byte.

Re-serialising the whole document (``json.dumps``) re-indents a tab-indented or compact notebook, rewrites
its separators and escapes, and turns a 5,000-digit ``execution_count`` into something else. Instead,
:func:`source_spans` finds where each cell's ``source`` value sits in the original text (one linear,
non-recursive pass: strings are skipped with the C ``json`` string scanner, containers with an explicit
stack, so 100,000-deep metadata costs no recursion) and :func:`splice` replaces those spans only, each new
value written in the layout of the value it replaces (:func:`encode_like`).
"""

from __future__ import annotations

import json
import re
from typing import Any
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in CPython, absent from typeshed

_STRUCT = re.compile(r'["{}\[\]:,]')
_SPACE = re.compile(r"\s*")


def source_spans(text: str) -> dict[int, tuple[int, int]]:
    """``{cell index (1-based): (start, end)}``: the character span of each cell's ``source`` value in the
    nbformat-4 notebook ``text`` (``doc["cells"][i - 1]["source"]``; the last one wins for a repeated key,
    as in :func:`json.loads`). Cells without a ``source`` key are absent. Assumes ``text`` is valid JSON."""
    spans: dict[int, tuple[int, int]] = {}
    stack: list[list] = []  # one frame per open container: [is_object, key, element index, after the colon]
    pending: tuple[int, int] | None = None  # (cell, start) of a source array not yet closed
    pending_depth = -1
    pos, n = 0, len(text)
    while pos < n:
        m = _STRUCT.search(text, pos)
        if m is None:
            break
        c, at = m.group(), m.start()
        pos = at + 1
        top: Any = stack[-1] if stack else None  # a frame, or None at the top level (':' and ',' never are)
        if c == '"':
            value, pos = scanstring(text, pos)
            if top is not None and top[0] and not top[3]:
                top[1] = value  # a key
            elif top is not None and top[3] and top[1] == "source" and _at_cell(stack):
                spans[stack[1][2] + 1] = (at, pos)
        elif c == ":":
            top[3] = True
        elif c == ",":
            if top[0]:
                top[1], top[3] = None, False
            else:
                top[2] += 1
        elif c in "[{":
            if c == "[" and top is not None and top[3] and top[1] == "source" and _at_cell(stack):
                pending, pending_depth = (stack[1][2] + 1, at), len(stack)
            stack.append([c == "{", None, 0, False])
        else:  # "]" or "}"
            stack.pop()
            if pending is not None and len(stack) == pending_depth:
                spans[pending[0]] = (pending[1], at + 1)
                pending = None
    return spans


def _at_cell(stack: list[list]) -> bool:
    """Directly inside a cell object: root object -> its "cells" array -> the cell object."""
    return len(stack) == 3 and stack[0][0] and stack[0][1] == "cells" and not stack[1][0] and stack[2][0]


def encode_like(raw: str, new: str) -> str:
    """``new`` (a cell's whole source text) as JSON in the layout of ``raw`` (the value it replaces): a string
    stays one string; a list of lines keeps its opening, separating and closing whitespace; an unchanged line
    keeps its original encoding; non-ASCII text is escaped only when the original escaped it."""
    old = json.loads(raw)
    ascii_only = raw.isascii() and not _text_of(old).isascii()
    if isinstance(old, str):
        return json.dumps(new, ensure_ascii=ascii_only)
    elems = _elements(raw)
    inner = raw[1:-1]
    match = _SPACE.match(inner)
    open_ws = match.group() if match is not None else ""
    close_ws = inner[len(inner.rstrip()):] if inner.strip() else ""
    if len(elems) >= 2:
        sep = raw[elems[0][1]:elems[1][0]]
    else:
        sep = "," + open_ws if "\n" in open_ws else ("," if open_ws == "" else ", ")
    reuse: dict[str, list[str]] = {}
    for start, end in elems:
        reuse.setdefault(json.loads(raw[start:end]), []).append(raw[start:end])
    parts = []
    for line in new.splitlines(keepends=True):
        same = reuse.get(line)
        parts.append(same.pop(0) if same else json.dumps(line, ensure_ascii=ascii_only))
    if not parts:
        return "[]"
    return "[" + open_ws + sep.join(parts) + close_ws + "]"


def _text_of(value: object) -> str:
    if isinstance(value, str):
        return value
    return "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else ""


def _elements(raw: str) -> list[tuple[int, int]]:
    """Spans of the string elements of the JSON list ``raw`` (a cell's source holds strings only)."""
    out: list[tuple[int, int]] = []
    pos = 1
    while True:
        at = raw.find('"', pos)
        if at < 0:
            return out
        _, end = scanstring(raw, at + 1)
        out.append((at, end))
        pos = end


def splice(text: str, spans: dict[int, tuple[int, int]], new_sources: dict[int, str]) -> str:
    """``text`` with the source of each cell in ``new_sources`` replaced (see :func:`encode_like`); raises
    ``KeyError`` for a cell whose span is unknown."""
    out, last = [], 0
    for cell in sorted(new_sources, key=lambda c: spans[c][0]):
        start, end = spans[cell]
        out += [text[last:start], encode_like(text[start:end], new_sources[cell])]
        last = end
    out.append(text[last:])
    return "".join(out)
