"""Residence marks: by identity, weak, and gone with their tensor."""
from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate import residence  # noqa: E402


def test_marks_by_identity_and_weakly():
    residence.clear()
    a, b = torch.ones(2), torch.ones(2)
    residence.mark(a)
    assert residence.on_mps(a) is True
    assert residence.on_mps(b) is False
    assert list(residence.resident()) == [a]
    assert residence.resident_bytes() == 8  # two float32 elements
    residence.unmark(a)
    assert residence.on_mps(a) is False
    residence.mark(b)
    del b
    gc.collect()
    assert list(residence.resident()) == []
    residence.clear()


def test_views_share_storage_in_the_byte_count():
    residence.clear()
    a = torch.ones(4)
    v = a[:2]
    residence.mark(a)
    residence.mark(v)
    assert residence.resident_bytes() == 16
    residence.clear()
    assert list(residence.resident()) == []


def test_dead_marks_are_swept_and_never_match_a_new_tensor():
    residence.clear()
    marks = residence._MARKS
    keep = [torch.ones(1) for _ in range(3)]
    for t in keep:
        residence.mark(t)
    batch = [torch.ones(1) for _ in range(residence._MIN_SWEEP)]
    for t in batch:
        residence.mark(t)
    # the sweep ran when the map first held more than _MIN_SWEEP entries, all alive then
    assert len(marks._refs) == residence._MIN_SWEEP + 3
    assert marks._limit == 2 * (residence._MIN_SWEEP + 1)
    del batch, t
    gc.collect()
    assert residence.on_mps(torch.ones(1)) is False  # possibly at the id of a dead marked tensor
    assert sorted(map(id, residence.resident())) == sorted(map(id, keep))
    marks._sweep()
    assert sorted(marks._refs) == sorted(map(id, keep))
    assert marks._limit == residence._MIN_SWEEP
    residence.clear()


def test_the_map_by_id_is_one_dict_that_follows_the_marks():
    """``marks_by_id`` (the trace recorder reads it once and keeps it): the same dict through clears and sweeps."""
    residence.clear()
    m = residence.marks_by_id()
    a = torch.ones(2)
    residence.mark(a)
    assert m[id(a)]() is a
    residence.unmark(a)
    assert id(a) not in m
    residence.mark(a)
    residence.clear()
    assert residence.marks_by_id() is m and m == {}
