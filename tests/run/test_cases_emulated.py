"""The public MPS bug reports (/work/shared/cases, copied in tests/trace/data) re-run under the emulated Mac.

Each repro runs unmodified with ``dev = "mps"``: the run must end as the report says a Mac ended (same op, same
kind of error or fallback, same dtype refusal, the repro's line), for the release and macOS reported (the
oldest shipped table when the report names none or an older one), and be predicted fixed after the fix.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.ops.api import resolve_version, shipped_versions  # noqa: E402

from .helpers import emulate, write  # noqa: E402

CASES_FILE = Path(__file__).resolve().parents[1] / "trace" / "data" / "mps_cases.json"
CASES = {c["id"]: c for c in json.loads(CASES_FILE.read_text())}


def _target(cid: str) -> str:
    v = CASES[cid]["torch_version"]
    try:
        return resolve_version(v) if v else shipped_versions()[0]
    except ValueError:
        return shipped_versions()[0]


def _run(cid, tmp_path, torch=None, macos="14.4", fallback=False, unset_variable=False, **kw):
    repro = CASES[cid]["repro"]
    if unset_variable:  # the report's run without the variable (same line numbers)
        repro = repro.replace('os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"',
                              'os.environ.pop("PYTORCH_ENABLE_MPS_FALLBACK", None)')
    script = write(tmp_path, repro, "repro.py")
    return emulate(script, torch=torch or _target(cid), macos=macos, fallback=fallback, **kw)


# case id -> (macOS, fallback, first failure (kind, exception, op named, dtype, line), fixed in)
FAILS = {
    "whisper_sparse_alignment_heads": ("14.4", False,
                                       ("sparse", "NotImplementedError", "aten::_sparse_coo_tensor_with_dims_and_tensors",
                                        "bool", 12), "2.9.0"),
    "grid_sampler_3d_comfyui": ("14.4", False, ("missing", "NotImplementedError", "aten::grid_sampler_3d", "float32", 6),
                                "2.9.0"),
    # the report names the structured out= overload, as MPS's fallback does for index_copy_
    "litgpt_index_copy_kv_cache": ("14.4", False, ("missing", "NotImplementedError", "aten::index_copy.out",
                                                   "float16", 6), "2.8.0"),
    "float64_numpy_aifeynman": ("14.4", False, ("dtype", "TypeError", "aten::_to_copy", "float64", 5), None),
    "bf16_embedding_macos14_torch20": ("13.6", False, ("dtype", "TypeError", "aten::_to_copy", "bfloat16", 4), None),
    "kraken_ctc_fallback_slower_than_cpu": ("14.4", False, ("missing", "NotImplementedError", "aten::_ctc_loss.Tensor",
                                                            "float32", 13), "2.14.0"),
    "gpytorch_cholesky_solve_fallback": ("14.4", False, ("missing", "NotImplementedError", "aten::linalg_cholesky_ex.L",
                                                         "float32", 8), "2.7.0"),
    "placeholder_empty_zero_size": ("14.4", False, ("shape", "RuntimeError", "aten::baddbmm", "float32", 6), None),
    "rosetta_macos_version_bf16": ("13.5", False, ("dtype", "TypeError", "aten::_to_copy", "bfloat16", 10), None),
}
# case id -> (macOS, ops that fall back and their calls): the repros set PYTORCH_ENABLE_MPS_FALLBACK=1 before
# importing torch, as the reports did; the emulator honours that moment
FALLS_BACK = {
    "kraken_ctc_fallback_slower_than_cpu": ("14.4", {"aten::_ctc_loss.Tensor": 20,
                                                     "aten::_ctc_loss_backward.Tensor": 20}),
    "gpytorch_cholesky_solve_fallback": ("14.4", {"aten::_cholesky_solve_helper": 1, "aten::linalg_cholesky_ex.L": 1}),
}
# runs to the end on the Mac of the report's release, printing what the report says (the program's own lines)
COMPLETES = {
    "hardcoded_cuda_model_move": "fails on a Mac: Torch not compiled with CUDA enabled\nmps:0\n",
    "nccl_init_on_macos": "init failed: Distributed package doesn't have NCCL built in\ngloo 2.0\n",
    "whisper_default_cuda_or_cpu": "hoped for mps - running on cpu\n",
    "nanogpt_device_type_mps_as_cpu": "cpu nullcontext GradScaler enabled: True\n",
}
NOT_RUN = {
    "mpsndarray_dim_product_2pow31": "a 2 GiB attention matrix; the report's own size pattern (32 crashes, 48 does not) "
                                     "is not a rule the data can state",
    "microsam_manual_nms_cpu_roundtrip": "needs torchvision (not installable beside torch 2.13 here)",
    "mmcv_custom_op_no_mps": "needs mmcv, a compiled extension",
}


@pytest.mark.parametrize("cid", sorted(FAILS))
def test_case_fails_as_on_the_mac(cid, tmp_path):
    macos, fallback, want, fixed = FAILS[cid]
    result, doc, _out, err = _run(cid, tmp_path, macos=macos, fallback=fallback, unset_variable=True)
    assert doc["outcome"] == "failed" and doc["exit_code"] == 1
    ff = doc["first_failure"]
    got = (ff["kind"], ff["exception"], ff["op"], ff["dtype"], ff["location"]["line"])
    assert got == want
    assert ff["location"]["path"] == "repro.py"
    assert ff["fixed_in"] == fixed
    # the Mac's message, as printed in the traceback a user would search for
    assert f"{want[1]}: {ff['message']}" in err
    if want[0] == "missing":
        assert ff["message"].startswith(f"The operator '{want[2]}' is not currently implemented for the MPS device.")


@pytest.mark.parametrize("cid", sorted(cid for cid, v in FAILS.items() if v[3]))
def test_case_predicted_fixed_after_the_fix(cid, tmp_path):
    macos, fallback, want, fixed = FAILS[cid]
    _r, doc, _o, _e = _run(cid, tmp_path, torch=fixed, macos=macos, fallback=fallback, unset_variable=True)
    assert not [f for f in doc["failures"] if f["op"] == want[2]], doc["failures"]


@pytest.mark.parametrize("cid", sorted(FALLS_BACK))
def test_case_falls_back_with_the_variable(cid, tmp_path):
    macos, ops = FALLS_BACK[cid]
    _r, doc, _o, err = _run(cid, tmp_path, macos=macos, fallback=False)
    assert doc["outcome"] == "completed" and doc["exit_code"] == 0
    assert doc["target"]["fallback"] is True and doc["target"]["fallback_requested"] is False
    assert {f["op"]: f["calls"] for f in doc["fallbacks"]} == ops
    for f in doc["fallbacks"]:
        assert 0 < f["share"] < 1 and f["location"]["path"] == "repro.py"
        assert (f"UserWarning: The operator '{f['op']}' is not currently supported on the MPS backend and will "
                "fall back to run on the CPU.") in err


@pytest.mark.parametrize("cid", sorted(COMPLETES))
def test_case_completes_as_the_report_says(cid, tmp_path):
    _r, doc, out, _e = _run(cid, tmp_path, torch="2.13")
    assert (doc["outcome"], doc["first_failure"]) == ("completed", None)
    assert out == COMPLETES[cid]


def test_cuda_autocast_is_disabled_with_pytorchs_warning(tmp_path):
    _r, doc, out, _e = _run("cuda_amp_silently_disabled", tmp_path, torch="2.13")
    assert doc["outcome"] == "completed"
    # PyTorch 2.13's own words (torch/amp/autocast_mode.py); older releases said "User provided device_type of
    # 'cuda', but CUDA is not available. Disabling" (the report)
    assert out == "torch.float32 ['CUDA is not available or torch_xla is imported. Disabling autocast.']\n"


def test_bf16_runs_from_macos_14(tmp_path):
    # from torch 2.3 (the case's 2.0.1 has no table: the oldest, 2.2.2, has no bfloat16 on any macOS)
    _r, doc, _o, _e = _run("bf16_embedding_macos14_torch20", tmp_path, torch="2.3", macos="14.0")
    assert doc["outcome"] == "completed"
    _r, doc, _o, _e = _run("bf16_embedding_macos14_torch20", tmp_path, macos="14.0")
    ff = doc["first_failure"]
    assert (doc["target"]["torch"], ff["message"], ff["fixed_in"]) == ("2.2.2", "BFloat16 is not supported on MPS",
                                                                       "2.3.0")


def test_every_case_is_asserted_or_listed():
    asserted = set(FAILS) | set(FALLS_BACK) | set(COMPLETES) | set(NOT_RUN) | {"cuda_amp_silently_disabled"}
    numeric = {cid for cid, c in CASES.items() if c["kind"] in ("wrong_result", "rng", "cuda_package")}
    left = set(CASES) - asserted - numeric
    assert left == {"hf_whisper_std_mean", "int64_abs_t5_relative_position", "int64_cumsum_macos133",
                    "linear_stride0_input_buffer_assert"}
