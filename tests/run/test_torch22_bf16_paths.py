"""torch 2.2 and bfloat16 on Apple silicon, path by path (issue 33, round 7): which check fires for a factory, a copy
onto MPS and an op whose output is bfloat16, at macOS 13 and 14. All three reach one check: at::detail::empty_mps's
"BFloat16 is not supported on MPS" (EmptyTensor.cpp of the 2.2 era, no macOS condition), because native
empty_strided_mps (TensorFactory.cpp) allocates with empty_mps({0}) before it resizes, and both a copy onto MPS
(_to_copy allocates with empty_strided) and a structured op's output allocate that way. getMPSDataType's default branch
("Trying to convert BFloat16 to the MPS backend...") is therefore not what 2.2 prints at these lines. The look-alikes:
the same programs on 2.3, which allocates bfloat16 from macOS 14 (PR #119641) and refuses it below with its own text."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

# a tokenizer-free toy: an embedding table kept in bfloat16 on the host, moved onto the device
MOVE = '''\
import torch
table = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(torch.bfloat16)
print("host", table.dtype)
on_dev = table.to("mps")
print("never", on_dev.shape)
'''

# a scratch buffer asked for in bfloat16 directly on the device
FACTORY = '''\
import torch
print("start")
scratch = torch.full((2, 5), 0.5, dtype=torch.bfloat16, device="mps")
print("never", scratch.shape)
'''

# a float32 device tensor reduced with a bfloat16 accumulator dtype: the op's output is allocated as bfloat16
OUTPUT = '''\
import torch
acts = torch.linspace(0, 1, 16, device="mps").reshape(4, 4)
print("rows", acts.shape[0])
summed = acts.mean(dim=1, dtype=torch.bfloat16)
print("never", summed.shape)
'''

CASES = [(MOVE, 4, "aten::_to_copy", "host torch.bfloat16\n"),
         (FACTORY, 3, "aten::full", "start\n"),
         (OUTPUT, 4, "aten::mean.dim", "rows 4\n")]


@pytest.mark.parametrize("macos", ["13.6", "14.3"])
@pytest.mark.parametrize(("text", "line", "op", "printed"), CASES, ids=["move", "factory", "output"])
def test_torch22_refuses_bfloat16_with_the_allocation_text_on_every_path(tmp_path, macos, text, line, op, printed):
    _, doc, out, _ = emulate(write(tmp_path, text), torch="2.2", macos=macos)
    ff = doc["first_failure"]
    assert (doc["outcome"], out) == ("failed", printed)
    assert (ff["kind"], ff["exception"], ff["message"], ff["location"]["line"], ff["dtype"], ff["op"]) == (
        "dtype", "TypeError", "BFloat16 is not supported on MPS", line, "bfloat16", op)
    # 2.3.0 allocates bfloat16 from macOS 14 only
    assert ff["fixed_in"] == ("2.3.0" if macos == "14.3" else None)


@pytest.mark.parametrize(("text", "tail"), [(MOVE, "never torch.Size([3, 4])\n"),
                                           (FACTORY, "never torch.Size([2, 5])\n"),
                                           (OUTPUT, "never torch.Size([4])\n")], ids=["move", "factory", "output"])
def test_look_alike_torch23_on_macos14_allocates_bfloat16(tmp_path, text, tail):
    _, doc, out, _ = emulate(write(tmp_path, text), torch="2.3", macos="14.3")
    assert (doc["outcome"], out.splitlines(keepends=True)[-1]) == ("completed", tail)


def test_look_alike_torch23_below_macos14_has_its_own_text(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, MOVE), torch="2.3", macos="13.6")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "TypeError", "MPS BFloat16 is only supported on MacOS 14 or newer", 4)
