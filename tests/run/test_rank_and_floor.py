"""Rank limits of MPSNDArray's scan and sort kernels, the availability floor per release, and the complex128
copy (issue 33, items 2-3): exact message, line and outcome."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.ops.judge import Judge

from .helpers import emulate, write

CUMSUM = '''\
import torch
x = torch.ones(1, 2, 3, 4, 5, device="mps")
ok = torch.cumsum(x, dim=1)
ok = torch.cumsum(x, dim=-4)
bad = torch.cumsum(x, dim=0)
print("never")
'''


def test_cumsum_along_an_axis_left_of_the_four_minor_ones_aborts(tmp_path):
    # pytorch#154881 (2.7.0): MPSNDArrayScan.mm "Axis = 4. This class only supports axis = 0, 1, 2, 3"
    _, doc, out, _ = emulate(write(tmp_path, CUMSUM), torch="2.7")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["effect"], ff["exception"], ff["op"], ff["location"]["line"], out) == (
        "failed", "shape", "crash", "MacCrash", "aten::cumsum", 5, "")
    assert ff["message"].endswith("failed assertion `(null)' Axis = 4. This class only supports axis = 0, 1, 2, 3")


def test_topk_abort_ends_in_2_9():
    facts = {"dtypes": ("float32",), "input_ndim": 5, "args": {"dim": 0, "k": 1}}
    from mpsready.ops.judge import CallFacts

    assert Judge("2.7", "15.0").op("aten::topk", CallFacts(**facts)).outcome == "crash"
    assert Judge("2.9", "15.0").op("aten::topk", CallFacts(**facts)).outcome == "runs"
    assert Judge("2.7", "15.0").op("aten::topk", CallFacts(**{**facts, "args": {"dim": 1}})).outcome == "runs"


AVAIL = '''\
import torch
print(torch.backends.mps.is_available())
x = torch.ones(2).to("mps")
'''


def test_torch_2_5_has_no_mps_device_on_macos_12_and_says_12_3(tmp_path):
    # pytorch#139425: 2.5.1 on macOS 12.7.6, no MPS device, the message still says 12.3+
    _, doc, out, _ = emulate(write(tmp_path, AVAIL), torch="2.5", macos="12.7")
    ff = doc["first_failure"]
    assert (doc["target"]["mps_available"], out, ff["kind"], ff["location"]["line"]) == (
        False, "False\n", "mps_unavailable", 3)
    assert ff["message"] == ("The MPS backend is supported on MacOS 12.3+.Current OS version can be queried using "
                             "`sw_vers`")
    assert (Judge("2.4", "12.7").available, Judge("2.5", "13.0").available, Judge("2.8", "12.7").available,
            Judge("2.9", "13.6").available, Judge("2.9", "14.0").available) == (True, True, False, False, True)


COMPLEX = '''\
import torch
z = torch.randn(3, 3, dtype=torch.complex128)
z_dev = z.to("mps")
'''


def test_complex128_refused_at_the_move_with_getmpsdatatype_text(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, COMPLEX), torch="2.4")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"], ff["message"]) == (
        "dtype", "TypeError", 3,
        "Trying to convert ComplexDouble to the MPS backend but it does not have support for that dtype.")
