"""The range factories' dtypes on MPS per release (issue 33 item 2: creation ops on bfloat16): torch.arange reaches
arange_mps_out, whose AT_DISPATCH_MPS_TYPES (TensorFactory.h, read in each macOS wheel's headers) has no BFloat16
before 2.6.0 and never Bool; the AT_DISPATCH refusal is a RuntimeError before 2.8 and a NotImplementedError from it
(Dispatch.h of the wheels). Exact message, line, outcome and fixed release."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.ops.judge import Judge

from .helpers import emulate, write

ROPE = '''\
import torch
dev = "mps"
dim = 64
positions = torch.arange(16, device=dev).to(torch.bfloat16)
scale = torch.arange(0, dim, 2, dtype=torch.bfloat16, device=dev) / dim
print(scale.shape)
'''


@pytest.mark.parametrize("release", ["2.3", "2.4", "2.5"])
def test_bfloat16_arange_is_refused_before_2_6_even_on_macos_14(tmp_path, release):
    # the Forge Flux report (stable-diffusion-webui-forge PR 1264, 2024-09, Apple M3): "arange_mps" not implemented
    # for 'BFloat16'; a bfloat16 tensor itself is fine there (macOS 14): line 4 passes
    _, doc, out, _ = emulate(write(tmp_path, ROPE), torch=release, macos="14.6")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"], ff["dtype"],
            ff["fixed_in"], out) == ("failed", "dtype", "RuntimeError", "\"arange_mps\" not implemented for 'BFloat16'",
                                     5, "bfloat16", "2.6.0", "")


def test_bfloat16_arange_runs_from_2_6(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, ROPE), torch="2.6", macos="14.6")
    assert (doc["outcome"], out) == ("completed", "torch.Size([32])\n")


def test_on_2_2_the_allocation_refuses_bfloat16_first(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, ROPE), torch="2.2", macos="14.6")
    ff = doc["first_failure"]
    assert (ff["message"], ff["location"]["line"]) == ("BFloat16 is not supported on MPS", 4)


BOOL = '''\
import torch
flags = torch.arange(4, dtype=torch.bool, device="mps")
'''


@pytest.mark.parametrize(("release", "exception"), [("2.4", "RuntimeError"), ("2.7", "RuntimeError"),
                                                    ("2.8", "NotImplementedError"), ("2.13", "NotImplementedError")])
def test_bool_arange_is_refused_by_mps_before_the_cpu_speaks(tmp_path, release, exception):
    # the CPU refuses it too ("arange_cpu"): the Mac's "arange_mps" comes first; no release fixes it
    _, doc, _, _ = emulate(write(tmp_path, BOOL), torch=release, macos="15.5")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["exception"], ff["message"], ff["location"]["line"], ff["fixed_in"], ff["mac"]) == (
        "failed", exception, "\"arange_mps\" not implemented for 'Bool'", 2, None, True)


def test_landing_judges_the_factory_kernel_only_for_its_dtypes():
    assert Judge("2.4", "14.6").landing("float16", "aten::arange") is None
    assert Judge("2.4", "14.6").landing("bfloat16", "aten::zeros") is None  # zeros fills: no AT_DISPATCH_MPS_TYPES
    j = Judge("2.5", "14.6").landing("bfloat16", "aten::range")
    assert (j.exception, j.message, j.fixed_in) == ("RuntimeError", "\"arange_mps\" not implemented for 'BFloat16'",
                                                    "2.6.0")


def test_histc_dispatch_refusal_is_a_runtime_error_before_2_8():
    from mpsready.ops.judge import CallFacts

    j = Judge("2.7", "15.0").call("aten::histc", CallFacts(dtypes=("int32",)), False)
    assert (j.exception, j.message, j.fixed_in) == ("RuntimeError", "\"histogram_mps\" not implemented for 'Int'",
                                                    "2.12.0")
    j = Judge("2.10", "15.0").call("aten::histc", CallFacts(dtypes=("int32",)), False)
    assert (j.exception, j.fixed_in) == ("NotImplementedError", "2.12.0")
