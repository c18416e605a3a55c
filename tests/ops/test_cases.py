"""The real-world `missing_op` cases of /work/shared/cases/mps_cases.json against the shipped data.

Each case's facts are copied here (id, op, reported release) so the test runs without the shared folder;
when the folder exists, a test checks the copy still matches it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpsready.ops.api import load_db, shipped_versions

CASES_FILE = Path("/work/shared/cases/mps_cases.json")

# (case id, op, release to check, expected status there, expected first release with support)
MISSING_OP_CASES = [
    # https://github.com/pytorch/pytorch/issues/141711, torch 2.5.1: moving a sparse COO buffer to MPS fails on
    # the SparseMPS key. yaml 2.5.1: no SparseMPS key on the constructor; SparseMPS is added in 2.9.1.
    ("whisper_sparse_alignment_heads", "aten::_sparse_coo_tensor_with_dims_and_tensors", "2.5.1", "missing", None),
    # https://github.com/Comfy-Org/ComfyUI/issues/6041 (no version given; Dec 2024): yaml has no MPS key for
    # grid_sampler_3d before 2.9.1 (research note §1.2 "since 2.9").
    ("grid_sampler_3d_comfyui", "aten::grid_sampler_3d", "2.5.1", "missing", "2.9.0"),
    # https://github.com/Lightning-AI/litgpt/issues/498 (no version; 2023): index_copy.out has MPS from 2.8.0.
    ("litgpt_index_copy_kv_cache", "aten::index_copy.out", "2.3.1", "missing", "2.8.0"),
]

# Disagreement, explained: https://github.com/pytorch/pytorch/issues/119663 (Feb 2024, i.e. torch 2.2) reports
# std_mean.correction missing on MPS, but every shipped table (2.3.1 onwards) has `MPS: std_mean_mps` in the
# yaml. The report predates our oldest release: the op was fixed by 2.3.1, outside what the data covers.
EXPLAINED = [("hf_whisper_std_mean", "aten::std_mean.correction")]


@pytest.mark.parametrize("case_id,op,release,status,since", MISSING_OP_CASES)
def test_missing_op_case_agrees(case_id, op, release, status, since):
    s = load_db(release).lookup(op)
    assert s.status == status, case_id
    assert s.runs_on_mps is False
    if since is not None:
        assert (s.since_torch, s.fixed_in) == (since, since)


def test_whisper_sparse_case_is_a_sparse_gap():
    # The dense MPS status of the constructor is "missing" in every release; what the case hits is SparseMPS:
    # absent in 2.5.1, present from 2.9.1 (yaml `SparseMPS:` key).
    assert load_db("2.5.1").lookup("_sparse_coo_tensor_with_dims_and_tensors").sparse_mps is False
    first_sparse = [v for v in shipped_versions()
                    if load_db(v).lookup("_sparse_coo_tensor_with_dims_and_tensors").sparse_mps]
    assert first_sparse[0] == "2.9.0"


def test_litgpt_case_bfloat16_rule():
    # same case, first failure: bfloat16 before macOS 14 (dylib string 2.3.1-2.8.0, PR #119641)
    rules = {r.dtype for r in load_db("2.3.1").dtype_rules(macos="13.6")}
    assert "bfloat16" in rules


def test_std_mean_case_agrees_since_the_2_2_table():
    # hf_whisper_std_mean (pytorch#119663, Feb 2024, torch 2.2): the 2.2.2 yaml gives std_mean.correction no MPS
    # kernel (the report's NotImplementedError); it has one from 2.3.0
    s = load_db("2.2.2").lookup("aten::std_mean.correction")
    assert (s.status, s.how, s.fixed_in) == ("missing", "yaml:none", "2.3.0")
    for release in shipped_versions()[1:]:
        s = load_db(release).lookup("aten::std_mean.correction")
        assert (s.status, s.how, s.since_torch) == ("kernel", "yaml:explicit", "2.3.0")


@pytest.mark.skipif(not CASES_FILE.exists(), reason="shared cases folder not present in this checkout")
def test_copied_cases_match_shared_file():
    cases = [c for c in json.loads(CASES_FILE.read_text()) if c["kind"] == "missing_op"]
    assert {c["id"]: c["aten_ops"] for c in cases} == {
        cid: [op] for cid, op, *_ in MISSING_OP_CASES + [(e[0], e[1]) for e in EXPLAINED]}
    assert {c["id"]: c["torch_version"] for c in cases}["whisper_sparse_alignment_heads"] == "2.5.1"
