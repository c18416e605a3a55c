"""Wrong results of compiled regions and the known refusal narrowed to the forms its source shows (issue 33, 33a):
a compiled train-mode batch norm on 2.12 in one threadgroup pass completes with wrong statistics (PR #184328, a
missing barrier), its looped form fails to compile (PR #184502), a split one is not established (unverified)."""

from __future__ import annotations

import pytest

from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex

from .helpers import emulate, write

BATCH_NORM = """\
import torch
import torch.nn as nn

dev = "mps"
bn = nn.BatchNorm2d(8).to(dev).{mode}()
step = torch.compile(bn)
for _ in range(2):
    step(torch.randn({shape}).to(dev))
print(bn.running_mean.cpu()[:3].tolist())
"""


def _run(tmp_path, torch, shape, mode="train"):
    script = write(tmp_path, BATCH_NORM.format(mode=mode, shape=shape))
    _, doc, _, _ = emulate(script, torch=torch, macos="15.5")
    return doc


def test_a_single_pass_compiled_batch_norm_on_2_12_completes_with_wrong_statistics(tmp_path):
    doc = _run(tmp_path, "2.12", "16, 8, 4, 4")  # 256 elements per channel: one threadgroup pass
    assert (doc["outcome"], doc["unverified"], doc["first_failure"]) == ("completed", [], None)
    [w] = doc["wrong_results"]
    assert (w["id"], w["op"], w["dtype"], w["fixed_in"], w["location"]["line"], w["calls"]) == (
        "compiled-welford-missing-barrier", "aten::native_batch_norm", "float32", "2.13.0", 8, 2)
    assert w["report"] == "https://github.com/pytorch/pytorch/pull/184328"


def test_the_same_batch_norm_on_2_13_is_right_and_in_eval_mode_reduces_nothing(tmp_path):
    doc = _run(tmp_path, "2.13", "16, 8, 4, 4")
    assert (doc["outcome"], doc["unverified"], doc["wrong_results"]) == ("completed", [], [])
    doc = _run(tmp_path, "2.12", "16, 8, 4, 4", mode="eval")  # look-alike: no Welford reduction, no advisory
    assert (doc["outcome"], doc["unverified"], doc["wrong_results"]) == ("completed", [], [])


def test_a_looped_compiled_batch_norm_on_2_12_fails_to_compile(tmp_path):
    doc = _run(tmp_path, "2.12", "4, 8, 32, 32")  # 4096 elements per channel: the multistage loop of PR #184502
    f = doc["first_failure"]
    assert (doc["outcome"], f["kind"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
        "failed", "compile", "InductorError", "SyntaxError: failed to compile", 8, "2.13.0")
    assert doc["wrong_results"] == []


def test_a_split_compiled_batch_norm_on_2_12_is_unverified_not_completed(tmp_path):
    doc = _run(tmp_path, "2.12", "8, 8, 64, 64")  # 32768 elements per channel, 8 channels: split on every Mac
    assert (doc["outcome"], doc["first_failure"], doc["wrong_results"]) == ("unverified", None, [])
    [u] = doc["unverified"]
    assert (u["kind"], u["location"]["line"]) == ("compile", 8)
    assert u["reason"].startswith("compiled region with aten::native_batch_norm (welford_split): torch 2.12.1's "
                                  "Inductor is known to refuse other forms of this reduction (SyntaxError: failed "
                                  "to compile), and whether it compiles this one correctly is not established "
                                  "(https://github.com/pytorch/pytorch/pull/184502)")


@pytest.mark.parametrize(("kind", "compiled", "hit"), [
    ("welford", True, True), ("welford_multistage", True, False), (None, True, False), ("welford", False, False)])
def test_the_compiled_welford_condition(kind, compiled, hit):
    index = AdvisoryIndex("2.12.1", "15.5")
    facts = AdvisoryFacts(dtypes=("float32",), shapes=((16, 8, 4, 4),), contiguous=(True,), compiled=compiled,
                          compiled_welford=kind)
    got = index.match("aten::native_batch_norm", facts)
    assert (got.id if got else None) == ("compiled-welford-missing-barrier" if hit else None)
