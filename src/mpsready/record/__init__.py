"""Run records: what a representative step did on one device (``mpsready record``).

The on-disk format lives in :mod:`mpsready.record.layout`, which reads without PyTorch,
so ``compare`` and ``report`` work on any machine. ``record_entry(spec, device, steps, out,
...) -> RunRecord`` makes one (in a child process; see :mod:`mpsready.record.recorder`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpsready.record.layout import RecordError, RunRecord, TensorEntry, TensorStats

# the format's names are imported on first use: the rule registry imports record.rules without the format
_LAYOUT = ("RecordError", "RunRecord", "TensorEntry", "TensorStats")


def __getattr__(name: str) -> Any:
    if name in _LAYOUT:
        from mpsready.record import layout

        return getattr(layout, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def record_entry(*args, **kwargs) -> RunRecord:
    """See :func:`mpsready.record.recorder.record_entry` (imported lazily: it needs no torch either)."""
    from mpsready.record.recorder import record_entry as _record_entry

    return _record_entry(*args, **kwargs)


__all__ = ["RunRecord", "RecordError", "TensorEntry", "TensorStats", "record_entry"]
