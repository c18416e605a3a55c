"""Wrong results named by class (issue 33, h33e): an advisory keyed to a parameter regime across releases (rank, layout,
macOS), with its source, names every call in the regime and none outside it."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

RANK = '''\
import torch
noise = torch.randn(SHAPE, device="mps")
print(tuple(noise.shape))
'''

STRIDED = '''\
import torch
t = torch.ones(3, 2, 2, device="mps").permute(2, 0, 1)
noise = torch.rand_like(t)
print(tuple(noise.shape))
'''


def _named(tmp_path, text, torch, macos):
    _, doc, _, _ = emulate(write(tmp_path, text), torch=torch, macos=macos)
    assert doc["outcome"] == "completed"
    return [(w["id"], w["op"], w["location"]["line"], w["fixed_in"]) for w in doc["wrong_results"]]


def test_random_fill_of_rank_above_4_is_named_until_2_7(tmp_path):
    five = RANK.replace("SHAPE", "2, 1, 4, 4, 4")
    assert _named(tmp_path, five, "2.5", "15.2") == [
        ("random-fill-rank-above-4", "aten::normal_", 2, "2.7.0")]
    assert _named(tmp_path, five, "2.2", "14.4") == [
        ("random-fill-rank-above-4", "aten::normal_", 2, "2.7.0")]
    assert _named(tmp_path, five, "2.7", "15.2") == []
    assert _named(tmp_path, RANK.replace("SHAPE", "2, 4, 4, 4"), "2.5", "15.2") == []


def test_random_fill_of_a_strided_tensor_is_named_before_macos_15_and_2_10(tmp_path):
    assert _named(tmp_path, STRIDED, "2.2", "14.4") == [
        ("random-fill-noncontiguous-before-macos15", "aten::uniform_", 3, "2.10.0")]
    assert _named(tmp_path, STRIDED, "2.9", "14.6") == [
        ("random-fill-noncontiguous-before-macos15", "aten::uniform_", 3, "2.10.0")]
    assert _named(tmp_path, STRIDED, "2.9", "15.0") == []
    assert _named(tmp_path, STRIDED, "2.10", "14.6") == []
    assert _named(tmp_path, STRIDED.replace(".permute(2, 0, 1)", ""), "2.2", "14.4") == []
