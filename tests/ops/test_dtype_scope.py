"""The dtypes rows of `mpsready ops`: op-specific only where an MPS kernel runs the op (h33h).

A newcomer's finding: `ops aten::linalg_eig --torch 2.5` said `missing` and then listed the release's global dtype
rules (never float64, bfloat16 from macOS 14, ...) as the op's own, reading as if it ran on MPS in other dtypes.
"""

from __future__ import annotations

import json

import pytest

from mpsready.cli import main

RULES_25 = ["never: complex128, float64",
            "need newer macOS: bfloat16 (14.0+), complex64 (14.0+), complex32 (14.0+)",
            "limited: int64 (before 13.3)"]


def rows(capsys, monkeypatch, *argv) -> list[tuple[str, str]]:
    """(field, value) per printed table line from the macOS row to the fallback row, a wide terminal."""
    monkeypatch.setenv("COLUMNS", "400")  # one table row per value line
    assert main(["ops", *argv]) == 0
    out = []
    for line in capsys.readouterr().out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 2:
            out.append((cells[0], cells[1]))
    start = next(i for i, (field, _) in enumerate(out) if field == "macOS")
    end = next(i for i, (field, _) in enumerate(out) if field == "fallback")
    return out[start + 1:end]


def test_missing_op_terminal_rows(capsys, monkeypatch):
    assert rows(capsys, monkeypatch, "aten::linalg_eig", "--torch", "2.5") == [
        ("dtypes", "no MPS kernel in torch 2.5.1, so no dtype runs this op on MPS. With "
                   "PYTORCH_ENABLE_MPS_FALLBACK=1 it computes on the CPU in any dtype its CPU kernel takes; the "
                   "device-wide limits bind at most its MPS inputs and outputs"),
        ("device-wide", "generic MPS dtype limits of torch 2.5.1, not facts about this op:"),
        *[("", line) for line in RULES_25]]


def test_kernel_op_terminal_rows(capsys, monkeypatch):
    # an MPS kernel runs add.Tensor: the release's rules are its own, one row as before
    assert rows(capsys, monkeypatch, "aten::add.Tensor", "--torch", "2.5") == [
        ("dtypes", RULES_25[0]), *[("", line) for line in RULES_25[1:]]]


def test_missing_op_keeps_its_own_exceptions(capsys, monkeypatch):
    # common_mps.py 2.13.0 xfails nn.functional.ctc_loss for every dtype; _ctc_loss has no MPS kernel
    got = rows(capsys, monkeypatch, "aten::_ctc_loss", "--torch", "2.13", "--macos", "14.4")
    assert got[:3] == [
        ("dtypes", "no MPS kernel in torch 2.13.0, so no dtype runs this op on MPS. With "
                   "PYTORCH_ENABLE_MPS_FALLBACK=1 it computes on the CPU in any dtype its CPU kernel takes; the "
                   "device-wide limits bind at most its MPS inputs and outputs"),
        ("", "all dtypes: unsupported"),
        ("device-wide", "generic MPS dtype limits of torch 2.13.0, not facts about this op:")]
    assert got[3:] == [("", "never: complex128, float64")]  # macOS 14.4: no bfloat16 or int64 limits


def lookup(capsys, op, torch):
    assert main(["ops", op, "--torch", torch, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["results"][0]["dtypes"]


@pytest.mark.parametrize("op,torch,scope,note", [
    ("aten::add.Tensor", "2.5", "op", None),
    ("aten::linalg_eig", "2.5", "device",
     "no MPS kernel in torch 2.5.1, so no dtype runs this op on MPS. With "
     "PYTORCH_ENABLE_MPS_FALLBACK=1 it computes on the CPU in any dtype its CPU kernel takes; the device-wide "
     "limits bind at most its MPS inputs and outputs"),
    ("aten::embedding_renorm_", "2.13", "device",
     "torch 2.13.0 always computes this op on the CPU (MPSFallback.mm), in any dtype its CPU "
     "kernel takes; the device-wide limits bind at most its MPS inputs and outputs"),
    ("aten::_slow_conv2d_forward", "2.13", "routed",
     "no MPS kernel in torch 2.13.0; on MPS the call dispatches aten::_mps_convolution instead, "
     "and the device-wide limits apply to that path"),
    ("torchvision::nms", "2.13", "device",
     "the op is not in the table of torch 2.13.0, so nothing is known of its dtypes"),
])
def test_json_scope(capsys, op, torch, scope, note):
    d = lookup(capsys, op, torch)
    assert (d["scope"], d["note"]) == (scope, note)
    assert d["refused"] == ["complex128", "float64"]  # the device-wide rules stay, labelled by scope
    assert d["other_dtypes"].startswith("no per-op dtype list") if scope == "op" else (
        d["other_dtypes"] == "not applicable (see note)")
