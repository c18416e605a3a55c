"""Where a value sits in a declaration file: an index of its lines, built once per file.

TOML, configparser and JSON keep no positions, so a reader places a finding by looking up the text it
read. Searching the text again for every dependency made a scan quadratic in the file (a 500 KB
requirements file took two minutes); :class:`LineIndex` makes one pass over the file and answers each
look-up by dictionary and bisection, so the work stays linear in the input.
"""

from __future__ import annotations

import bisect


def _add(table: dict[str, list[int]], key: str, line: int) -> None:
    if key:
        hits = table.get(key)
        if hits is None:
            table[key] = [line]
        elif hits[-1] != line:
            hits.append(line)


def string_literals(line: str) -> list[str]:
    """The contents of the quoted strings on one line (``'...'`` and ``"..."``; a backslash escapes a
    double quote), in order, without unescaping. Linear in the line: each quote character is found once."""
    if "'" not in line and "\\" not in line and line.count('"') == 2:  # the common case: one plain "..." string
        a = line.find('"')
        return [line[a + 1:line.find('"', a + 1)]]
    out: list[str] = []
    i, n = 0, len(line)
    nd = ns = -2  # next double / single quote at or after i (-1: none left; -2: not looked up yet)
    while i < n:
        if nd != -1 and nd < i:
            nd = line.find('"', i)
        if ns != -1 and ns < i:
            ns = line.find("'", i)
        starts = [p for p in (nd, ns) if p >= 0]
        if not starts:
            break
        a = min(starts)
        q = line[a]
        j = line.find(q, a + 1)
        while q == '"' and j != -1:  # skip escaped quotes: an odd run of backslashes before j
            k = j
            while k > a + 1 and line[k - 1] == "\\":
                k -= 1
            if (j - k) % 2 == 0:
                break
            j = line.find(q, j + 1)
        if j == -1:
            break
        out.append(line[a + 1:j])
        i = j + 1
    return out


class LineIndex:
    """One pass over ``text``; then :meth:`find` answers "the first line at or after ``start`` that holds
    ``needle``" in O(log n), where *holds* means: ``needle`` is a quoted string on the line, the key before
    its ``=`` (or ``:``), the value after it, a ``[table]`` header (or its last dotted part), or the whole
    stripped line (with or without a ``#`` comment)."""

    def __init__(self, text: str) -> None:
        self._at: dict[str, list[int]] = {}
        self._keys: dict[str, list[int]] = {}
        self.lines = 0
        for n, raw in enumerate(text.split("\n"), 1):  # parsers count lines at "\n" only (not at \x0c, \u2028)
            self.lines = n
            line = raw.strip()
            if not line:
                continue
            _add(self._at, line, n)
            if "#" in line:
                _add(self._at, line.split("#", 1)[0].strip(), n)
            for sep in ("=", ":"):
                head, found, tail = line.partition(sep)
                if found:
                    key = head.strip().strip("'\"")
                    _add(self._keys, key, n)
                    _add(self._at, tail.strip(), n)
            if line.startswith("[") and line.endswith("]"):  # [a.b] and [[a.b]]: the table and its last part
                header = line.strip("[]").strip()
                _add(self._keys, header, n)
                _add(self._keys, header.rsplit(".", 1)[-1].strip().strip("'\""), n)
            if '"' in line or "'" in line:
                for lit in string_literals(line):
                    _add(self._at, lit, n)

    @staticmethod
    def _first(hits: list[int] | None, start: int) -> int | None:
        if not hits:
            return None
        i = bisect.bisect_left(hits, start)
        return hits[i] if i < len(hits) else None

    def find(self, needle: str, start: int | None = None) -> int | None:
        """The first line at or after ``start`` holding ``needle``; the first anywhere when none follows
        ``start``; ``None`` when no line holds it."""
        needle = needle.strip()
        at, keys = self._at.get(needle), self._keys.get(needle)
        if not at and not keys:
            return None
        start = start or 1
        best = None
        for hits in (at, keys):
            if hits:
                i = bisect.bisect_left(hits, start)
                if i < len(hits) and (best is None or hits[i] < best):
                    best = hits[i]
        if best is not None:
            return best
        return min(h[0] for h in (at, keys) if h)

    def key_line(self, key: str, start: int | None = None) -> int | None:
        """The first line at or after ``start`` that assigns ``key`` (``key =``, ``"key" =``), else ``start``."""
        hit = self._first(self._keys.get(key), start or 1)
        return hit if hit is not None else start
