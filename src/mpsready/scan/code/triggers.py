"""The byte prefilter: words a Python source must contain for any code rule to be able to fire.

Each code rule declares its trigger words next to its definition (``triggers=`` in
:mod:`mpsready.scan.rules`; DEP107's come from the import names in ``data/packages.yaml``). A
source that contains none of them, as a whole word (not preceded or followed by a letter, digit or
underscore), cannot produce a code finding: every check in the analyser needs one of those words in
a name, an attribute, an import or a string literal (``"cuda:0"``, ``"float64"``). Such a source is
still parsed (syntax errors and Python 2 files are still reported, and its imports still count for
the fallback checks of other files), but its tree is not analysed.

This is not analysis: it decides nothing about the code, it only proves a file irrelevant. What it
cannot see: a literal spelled with escapes (``"\\x63uda"``) or split by implicit concatenation
(``"cu" "da"``).
"""

from __future__ import annotations

import functools
from bisect import bisect_left  # noqa: F401  (re-exported for the analyser)

from mpsready.scan.rules._define import TRIGGERS

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Searched first: the words most sources that fire contain, so the search stops early.
_FIRST = ("cuda", "compile", "cpu", "double", "float64", "numpy", "triton")


@functools.lru_cache(maxsize=1)
def trigger_words() -> tuple[str, ...]:
    """Every code rule's trigger words, most frequent first, without duplicates."""
    words: set[str] = set()
    for value in TRIGGERS.values():
        words.update(value() if callable(value) else value)
    return tuple(w for w in _FIRST if w in words) + tuple(sorted(words - set(_FIRST)))


@functools.lru_cache(maxsize=1)
def line_trigger_words() -> tuple[str, ...]:
    """Trigger words that matter line by line: all but those only DEP107 declares (DEP107 fires on import
    statements, which the analyser always visits)."""
    words: set[str] = set()
    for code, value in TRIGGERS.items():
        if code != "DEP107":
            words.update(value() if callable(value) else value)
    return tuple(w for w in trigger_words() if w in words)


# Stems searched once for all the trigger words containing them (one pass over the text instead of one
# per word): at each occurrence the whole identifier around the stem must be one of those words. Each full-text
# search costs about as much as the analysis of a short file, so every stem shared by two or more words saves
# whole passes (float64, bfloat16, cfloat and set_float32_matmul_precision are one); the stems' occurrences
# that are no trigger word ("float32") cost far less than those passes. "cud" holds cuda and cudnn, "cp" cpu and
# cpp_extension, "comp" compile and the complex dtypes: on the torch package 20 passes instead of 23 over a text
# with trigger words, 10% less CPU for the trigger search (the extra occurrences, "compute", are cheap).
_STEMS = ("cud", "cp", "comp", "double", "sparse", "float", "numpy", "set_default_")


@functools.lru_cache(maxsize=64)
def _plan(words: tuple[str, ...]) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(needle, kind, members) searches covering ``words``: kind 'word' (a whole word), 'stem' (the
    identifier around the needle is a member) or 'punct' (a member starts at the needle)."""
    steps: list[tuple[str, str, frozenset[str]]] = []
    rest = [w for w in words if w[0] in _IDENT]
    for stem in _STEMS:
        members = frozenset(w for w in rest if stem in w)
        if len(members) > 1:
            steps.append((stem, "stem", members))
            rest = [w for w in rest if w not in members]
    steps += [(w, "word", frozenset((w,))) for w in rest]
    punct = [w for w in words if w[0] not in _IDENT]
    if punct:
        prefix = punct[0]
        for w in punct[1:]:
            while not w.startswith(prefix):
                prefix = prefix[:-1]
        steps.append((prefix, "punct", frozenset(punct)) if prefix else ("", "none", frozenset()))
        if not prefix:  # no common prefix: search each on its own
            steps.pop()
            steps += [(w, "punct", frozenset((w,))) for w in punct]
    return tuple(steps)


def _matches(text: str, needle: str, kind: str, members: frozenset[str], first_only: bool) -> list[int]:
    """Start positions of the trigger words one search step finds (the first only, with ``first_only``)."""
    out = []
    n, size = len(needle), len(text)
    i = text.find(needle)
    while i >= 0:
        if kind == "word":
            hit = (i == 0 or text[i - 1] not in _IDENT) and (i + n == size or text[i + n] not in _IDENT)
            at = i
        elif kind == "stem":
            at, end = i, i + n
            while at > 0 and text[at - 1] in _IDENT:
                at -= 1
            while end < size and text[end] in _IDENT:
                end += 1
            hit = text[at:end] in members
        else:
            at = i
            hit = any(text.startswith(m, i) for m in members)
        if hit:
            out.append(at)
            if first_only:
                return out
        i = text.find(needle, i + 1)
    return out


def trigger_lines(text: str, words: tuple[str, ...] | None = None) -> list[int]:
    """Sorted 1-based numbers of the lines (split at ``\\n`` only) holding a line trigger word."""
    positions = []
    for needle, kind, members in _plan(words if words is not None else line_trigger_words()):
        positions += _matches(text, needle, kind, members, False)
    positions.sort()
    lines: list[int] = []
    line, prev = 1, 0
    for pos in positions:
        line += text.count("\n", prev, pos)
        prev = pos
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def name_lines(text: str, names: tuple[str, ...]) -> list[int] | None:
    """Sorted 1-based numbers of lines that can hold one of the identifiers ``names`` in the syntax tree of
    ``text``: those holding one as a whole word, and every line with a non-ASCII character (``ast`` keeps
    identifiers NFKC-normalised, so a fullwidth ``foo`` in the text is ``foo`` in the tree). ``None`` when the
    text holds a ``\\r``, which ``ast`` counts as a line break too (this splits at ``\\n`` only). A walk looking
    for uses of ``names`` need enter only the statements that span one of these lines."""
    if "\r" in text:
        return None
    lines = trigger_lines(text, names)
    if text.isascii():
        return lines
    wide = [i for i, line in enumerate(text.split("\n"), 1) if not line.isascii()]
    return sorted({*lines, *wide})


def substring_lines(text: str, needles: tuple[str, ...]) -> list[int] | None:
    """Sorted 1-based numbers of the lines holding one of ``needles`` anywhere (``_torch`` in ``attn_torch``), and
    in non-ASCII text every line with a non-ASCII character (as :func:`name_lines`); ``None`` when the text holds a
    ``\\r``. A walk looking for identifiers that contain a needle need enter only the statements spanning one."""
    if "\r" in text:
        return None
    positions = []
    for needle in needles:
        i = text.find(needle)
        while i >= 0:
            positions.append(i)
            i = text.find(needle, i + 1)
    positions.sort()
    lines: set[int] = set()
    line, prev = 1, 0
    for pos in positions:
        line += text.count("\n", prev, pos)
        prev = pos
        lines.add(line)
    if not text.isascii():
        lines.update(i for i, row in enumerate(text.split("\n"), 1) if not row.isascii())
    return sorted(lines)


def rule_triggers(code: str) -> tuple[str, ...]:
    """The trigger words of one rule (``()`` for a rule without any, e.g. the INP rules)."""
    value = TRIGGERS.get(code, ())
    return tuple(value() if callable(value) else value)


def find_next_to(text: str, needle: str, *, before: str = "", after: str = "") -> bool:
    """Whether ``text`` holds ``needle`` preceded by one of the characters ``before`` or followed by one of
    ``after`` (either side when both are given): ``find_next_to(t, ".cu", after="\"'h")`` is
    ``'.cu"' in t or ".cu'" in t or ".cuh" in t`` in one pass over the text instead of three (each absent needle
    costs a whole pass; the needle's own occurrences are few)."""
    n, size = len(needle), len(text)
    i = text.find(needle)
    while i >= 0:
        j = i + n
        if (before and i > 0 and text[i - 1] in before) or (after and j < size and text[j] in after):
            return True
        i = text.find(needle, i + 1)
    return False


def contains_any(text: str, needles: tuple[str, ...], stem: str) -> bool:
    """``any(n in text for n in needles)`` in one pass over ``text``, for needles that all hold ``stem`` (each
    absent needle costs a whole pass; a rare stem's own occurrences are few): each occurrence of the stem is
    checked against the needles around it."""
    offsets = [(n, n.index(stem)) for n in needles]
    i = text.find(stem)
    while i >= 0:
        if any(i >= off and text.startswith(n, i - off) for n, off in offsets):
            return True
        i = text.find(stem, i + 1)
    return False


def find_word(text: str, word: str, start: int = 0) -> int:
    """Index of the first whole-word occurrence of ``word`` in ``text`` at or after ``start``, or -1."""
    n = len(word)
    i = text.find(word, start)
    while i >= 0:
        if (i == 0 or text[i - 1] not in _IDENT) and (i + n == len(text) or text[i + n] not in _IDENT):
            return i
        i = text.find(word, i + 1)
    return -1


def may_fire(text: str, words: tuple[str, ...] | None = None) -> bool:
    """Whether ``text`` contains at least one trigger (of every code rule unless ``words`` is given): a word
    (``cuda``) as a whole word, a trigger that starts with punctuation (``.cu"``) anywhere."""
    for needle, kind, members in _plan(words if words is not None else trigger_words()):
        if _matches(text, needle, kind, members, True):
            return True
    return False
