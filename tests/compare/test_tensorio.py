"""The streaming safetensors reader against safetensors' own reader and torch."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from mpsready.compare.tensorio import RawTensorError, RawTensorFile, compute_dtype, iter_chunks


def test_reader_matches_safe_open(tmp_path):
    g = torch.Generator().manual_seed(0)
    tensors = {"f32": torch.randn(3, 5, generator=g), "f64": torch.randn(7, generator=g, dtype=torch.float64),
               "i64": torch.arange(6).reshape(2, 3), "u8": torch.arange(4, dtype=torch.uint8),
               "b": torch.tensor([True, False])}
    save_file(tensors, str(tmp_path / "t.safetensors"))
    with RawTensorFile(tmp_path / "t.safetensors") as f, \
            safe_open(str(tmp_path / "t.safetensors"), framework="np") as ref:
        assert set(f.tensors) == set(tensors)
        for name in tensors:
            want = ref.get_tensor(name).reshape(-1)
            got = f.read(name, np.dtype(np.float64))
            np.testing.assert_array_equal(got, want.astype(np.float64))
            assert f.tensors[name].shape == tuple(tensors[name].shape)
        assert f.tensors["f32"].dtype == "float32" and f.tensors["b"].dtype == "bool"


def test_bfloat16_and_float16_widen_exactly(tmp_path):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1000, generator=g) * 100
    save_file({"bf": x.to(torch.bfloat16), "h": x.to(torch.float16)}, str(tmp_path / "h.safetensors"))
    with RawTensorFile(tmp_path / "h.safetensors") as f:
        assert f.tensors["bf"].dtype == "bfloat16"
        np.testing.assert_array_equal(f.read("bf"), x.to(torch.bfloat16).float().numpy())
        np.testing.assert_array_equal(f.read("h"), x.to(torch.float16).float().numpy())
        assert f.read("bf").dtype == np.float32


@pytest.mark.parametrize("mapped, prefetch", [(True, False), (False, False), (False, True)])
def test_chunks_cover_the_tensor_once(tmp_path, mapped, prefetch):
    x = torch.arange(10, dtype=torch.float32)
    save_file({"x": x, "y": x * 2, "z": x.to(torch.bfloat16)}, str(tmp_path / "c.safetensors"))
    with RawTensorFile(tmp_path / "c.safetensors") as f:
        got = [(a.copy(), b.copy()) for a, b in iter_chunks(f, f.tensors["x"], f, f.tensors["y"],
                                                             np.dtype(np.float32), 4, prefetch, mapped)]
        bf = [b.copy() for _, b in iter_chunks(f, f.tensors["x"], f, f.tensors["z"], np.dtype(np.float64), 3,
                                               prefetch, mapped)]
    assert [len(a) for a, _ in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([b for _, b in got]), np.arange(10) * 2)
    assert [len(b) for b in bf] == [3, 3, 3, 1]
    np.testing.assert_array_equal(np.concatenate(bf), np.arange(10, dtype=np.float64))


def test_compute_dtype():
    assert compute_dtype("float32", "bfloat16") == np.float32
    assert compute_dtype("float32", "float64") == np.float64
    assert compute_dtype("int64", "int64") == np.float64
    assert compute_dtype("complex64", "float32") == np.complex128


@pytest.mark.parametrize("payload, msg", [
    (b"abc", "shorter than 8 bytes"),
    (struct.pack("<Q", 1 << 40) + b"{}", "header length"),
    (struct.pack("<Q", 5) + b"{nope", "unreadable safetensors header"),
    (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
])
def test_malformed_files_raise_clear_errors(tmp_path, payload, msg):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(payload)
    with pytest.raises(RawTensorError, match=msg):
        RawTensorFile(p)


def test_offsets_outside_the_file_are_refused(tmp_path):
    header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    p = tmp_path / "trunc.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    with pytest.raises(RawTensorError, match="outside the file"):
        RawTensorFile(p)
