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


class _Marks:
    """A set of tensors by identity, holding them weakly. Membership costs one dict lookup and one
    dereference (``torch.utils.weak.WeakIdKeyDictionary`` builds a reference object per lookup): the dispatch
    mode asks it for every argument of every call."""

    __slots__ = ("_refs",)

    def __init__(self):
        self._refs: dict[int, weakref.ref] = {}

    def __contains__(self, t) -> bool:
        r = self._refs.get(id(t))
        return r is not None and r() is t

    def __setitem__(self, t, _value) -> None:
        key = id(t)
        r = self._refs.get(key)
        if r is not None and r() is t:
            return
        refs = self._refs

        def gone(ref, key=key):
            if refs.get(key) is ref:
                del refs[key]
        self._refs[key] = weakref.ref(t, gone)

    def pop(self, t, default=None):
        if t in self:
            del self._refs[id(t)]
            return True
        return default

    def keys(self):
        return [t for t in (r() for r in list(self._refs.values())) if t is not None]

    def clear(self) -> None:
        self._refs.clear()


_MARKS = _Marks()


def on_mps(t: torch.Tensor) -> bool:
    """True iff ``t`` was created on, moved to, or computed from tensors on the emulated MPS device."""
    return t in _MARKS


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
