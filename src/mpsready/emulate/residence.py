"""Which tensors live on the emulated MPS device.

A tensor "on MPS" is an ordinary CPU tensor whose Python object carries a residence mark. The marks are
kept in a weak identity map (:class:`_Marks`: ``id(tensor)`` -> weak reference), not on the tensor, so nothing
of the emulation is pickled by ``torch.save`` and a mark dies with its tensor. PyTorch keeps one Python object
per TensorImpl while C++ holds it (PyObject preservation, torch/csrc/autograd/python_variable.cpp), so a
gradient or optimizer state handed back to Python later is the same marked object.
"""

from __future__ import annotations

from typing import Iterator

import weakref

import torch

_ref = weakref.ref
_MIN_SWEEP = 4096  # entries before the first sweep of dead ones


class _Marks:
    """A set of tensors by identity, holding them weakly. Membership costs one dict lookup and one
    dereference (``torch.utils.weak.WeakIdKeyDictionary`` builds a reference object per lookup): the dispatch
    mode asks it for every argument of every call.

    The references carry no callback (a mark costs one ``weakref.ref``, which CPython shares between all
    callback-free references to one object, and no closure): a dead tensor's entry stays until its id is
    reused, when the identity check (``r() is t``) sees it stale and overwrites it, or until the map has
    doubled since it was last swept (:meth:`_sweep`, amortised O(1) per mark)."""

    __slots__ = ("_refs", "_limit", "hint", "learn")

    def __init__(self):
        self._refs: dict[int, weakref.ref] = {}
        self._limit = _MIN_SWEEP
        # a tensor known to be in the map, or None: set by the device function mode around a call whose first
        # argument it found resident, so that the dispatch mode's resident check of that call's aten op reads it
        # instead of the map (emulate/device.py, emulate/dispatch.py); unmarking anything or clearing resets it
        self.hint: object = None
        self.learn: list | None = None  # what direct.binary notes of the aten calls of one call, while it learns

    def __contains__(self, t) -> bool:
        r = self._refs.get(id(t))
        return r is not None and r() is t

    def __setitem__(self, t, _value) -> None:
        refs = self._refs
        key = id(t)
        r = refs.get(key)
        if r is not None and r() is t:
            return
        refs[key] = _ref(t)
        if len(refs) > self._limit:
            self._sweep()

    def _sweep(self) -> None:
        """Drop the entries of dead tensors; the next sweep comes when the live entries have doubled."""
        refs = self._refs
        for key in [k for k, r in refs.items() if r() is None]:
            del refs[key]
        self._limit = max(_MIN_SWEEP, 2 * len(refs))

    def pop(self, t, default=None):
        if t in self:
            del self._refs[id(t)]
            self.hint = None
            return True
        return default

    def keys(self):
        return [t for t in (r() for r in list(self._refs.values())) if t is not None]

    def clear(self) -> None:
        self._refs.clear()
        self._limit = _MIN_SWEEP
        self.hint = None


_MARKS = _Marks()


def on_mps(t: torch.Tensor) -> bool:
    """True iff ``t`` was created on, moved to, or computed from tensors on the emulated MPS device."""
    return t in _MARKS


def marks_by_id() -> dict[int, weakref.ref]:
    """The marks as kept: ``id(tensor)`` -> weak reference; ``t`` is resident iff ``m.get(id(t))`` is a reference
    whose referent is ``t``. The same dict for the life of the process (cleared and swept in place), for hot paths
    that ask once per call without a method call (the trace recorder on the emulated device). Read it only."""
    return _MARKS._refs


def mark(t: torch.Tensor) -> None:
    _MARKS[t] = True


def unmark(t: torch.Tensor) -> None:
    _MARKS.pop(t, None)


def resident() -> Iterator[torch.Tensor]:
    """The live tensors on the emulated device (for the emulated memory figures)."""
    for ref in list(_MARKS.keys()):
        yield ref


def resident_bytes() -> int:
    """Bytes of the distinct storages of live resident tensors (``torch.mps.current_allocated_memory`` here)."""
    seen: set[int] = set()
    total = 0
    for t in resident():
        try:
            st = t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse or otherwise storage-less
            continue
        ptr = st.data_ptr()
        if ptr in seen:
            continue
        seen.add(ptr)
        total += st.nbytes()
    return total


def clear() -> None:
    _MARKS.clear()
