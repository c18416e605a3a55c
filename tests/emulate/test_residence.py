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
