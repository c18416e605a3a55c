"""Shared helpers of the trace tests: trace an entry once, classify it for several releases."""
from __future__ import annotations

import functools
from pathlib import Path

from mpsready.ops.api import load_db, shipped_versions
from mpsready.step import load_entry
from mpsready.trace.predict import predict
from mpsready.trace.recorder import record_entry

HERE = Path(__file__).resolve().parent
ENTRIES = HERE / "entries.py"


def line_of(marker: str, path: Path = ENTRIES) -> int:
    """1-based line of the ``# at: marker`` comment in ``path``."""
    tag = f"# at: {marker}"
    hits = [i for i, text in enumerate(path.read_text().splitlines(), 1) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def composite_anywhere(name: str) -> bool:
    """Expand an op when any shipped release calls it composite, so one trace serves every release."""
    return _composite(name)


@functools.lru_cache(maxsize=None)
def _composite(name: str) -> bool:
    return any(load_db(v).lookup(name).status == "composite" for v in shipped_versions())


@functools.lru_cache(maxsize=None)
def trace_of(spec: str):
    entry = load_entry(spec if ":" in spec and "/" in spec else f"{ENTRIES}:{spec}")
    # SDPA as MPS runs it from 2.5 on: the math decomposition wherever grad is on (api.sdpa_math_stages)
    return record_entry(entry, device="cpu", expand=composite_anywhere, sdpa_math="grad")


def prediction(spec: str, torch: str, macos: str = "14.4", fallback: bool = False):
    return predict(trace_of(spec), torch=torch, macos=macos, fallback=fallback)


def problems(pred) -> dict[str, tuple[str, tuple[str, ...], str | None]]:
    """``{op: (verdict, problem kinds, fixed_in)}`` for every op with a problem."""
    return {o.op: (o.verdict, tuple(p.kind for p in o.problems), o.fixed_in) for o in pred.ops if o.problems}
