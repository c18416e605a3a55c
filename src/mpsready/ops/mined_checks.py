"""Kernel dtype checks read from the mined release binaries (issue 33, class 3: complex inputs), as entries of the
judge's ``dtype_checks`` (the vocabulary of ``data/curated/mps_dtype_checks.yaml``), appended after the curated ones
(a curated entry of the same op and dtype wins: the judge takes the first check that refuses).

An MPS kernel that refuses complex inputs says so with a ``TORCH_CHECK(!input.is_complex(), "...")`` (or a check
on ``isComplexType``) whose text is in that release's ``libtorch_cpu.dylib``: ``python -m mpsready.ops.build.facts``
mined every such string of every shipped macOS arm64 wheel 2.2.2-2.14.1 and tied it to the aten overloads of the
kernel that prints it (``data/mined/mps_facts.json.gz`` ``messages``, kind ``dtype``; each with the releases whose
own binary holds it, ``range: read``). A message naming complex inputs ("complex", "cfloat") is a refusal of
``complex64`` (and ``complex32``) by those overloads in exactly those releases: without it a complex call on the
emulated Mac reaches the CPU kernel, which refuses complex for most of these ops with its own dispatch error, and the
run ended ``unverified`` (a CPU refusal) where the Mac raises this text at that line. ``RuntimeError``: TORCH_CHECK.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_COMPLEX_WORDS = ("complex", "cfloat")


def _runs(releases: list[str], every: list[str]) -> list[tuple[str, str]]:
    """``releases`` (a subset of ``every``, the mined releases oldest first) as runs of consecutive mined releases,
    each ``(first, last)``: a specifier ``>=first,<=last`` then holds exactly the releases read."""
    have = set(releases)
    out: list[tuple[str, str]] = []
    start = prev = None
    for rel in every:
        if rel in have:
            start = start or rel
            prev = rel
        elif start is not None:
            out.append((start, prev or start))
            start = prev = None
    if start is not None:
        out.append((start, prev or start))
    return out


@lru_cache(maxsize=1)
def complex_checks() -> tuple[dict[str, Any], ...]:
    """The mined complex refusals as ``dtype_checks`` entries (module docstring), one per message and run of
    releases."""
    from mpsready.ops import mined

    doc = mined.load()
    every = list(doc["releases"])
    out: list[dict[str, Any]] = []
    for m in doc["messages"]:
        text = m.get("message") or ""
        if m.get("kind") != "dtype" or not m.get("ops") or not any(w in text.lower() for w in _COMPLEX_WORDS):
            continue
        for first, last in _runs(m["releases"], every):
            out.append({
                "ops": list(m["ops"]), "torch": f">={first},<={last}", "refuses": ["complex64", "complex32"],
                "exception": "RuntimeError", "message": text,
                "source": f"mined: {m.get('source') or 'libtorch_cpu.dylib'} (data/mined/mps_facts.json.gz)",
                "range": f"read: the message is in the macOS libtorch_cpu.dylib of every mined release {first} to "
                         f"{last} (each read in its own wheel)"})
    return tuple(out)
