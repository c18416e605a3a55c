"""Real-world cases (/work/shared/cases/mps_cases.json, copied in tests/trace/data) detectable by a trace.

Each repro runs with ``dev = "cpu"`` as a whole-step entry; the prediction must name the case's op
(same overload family) or dtype for the case's PyTorch version, or for the oldest shipped table when the
case has no version or one older than every table (2.3.0). Cases the trace cannot predict are listed in
EXPECTED_MISSES with the reason; a test checks that the two lists cover every op_trace/dtype_trace case.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.ops.api import resolve_version, shipped_versions  # noqa: E402
from mpsready.step import load_entry  # noqa: E402
from mpsready.trace.predict import predict  # noqa: E402
from mpsready.trace.recorder import record_entry  # noqa: E402

from .helpers import composite_anywhere  # noqa: E402

CASES_FILE = Path(__file__).resolve().parent / "data" / "mps_cases.json"
CASES = {c["id"]: c for c in json.loads(CASES_FILE.read_text())}
TRACEABLE = sorted(cid for cid, c in CASES.items() if {"op_trace", "dtype_trace"} & set(c["detectable_by"]))

# case id -> (torch to predict for, macOS, assume PYTORCH_ENABLE_MPS_FALLBACK=1, what the prediction must name)
# "ops": overload families that must be predicted error/fallback; "dtype": (dtype, line) of a DTY2xx finding.
PREDICTED = {
    "whisper_sparse_alignment_heads": ("2.5.1", "14.4", False,
                                       {"ops": ["aten::_sparse_coo_tensor_with_dims_and_tensors"]}),
    "grid_sampler_3d_comfyui": (None, "14.4", False, {"ops": ["aten::grid_sampler_3d"], "fixed_in": "2.9.0"}),
    # torch 2.2 (Feb 2024): the 2.2.2 table gives std_mean.correction no MPS kernel (a miss before it shipped)
    "hf_whisper_std_mean": (None, "14.4", False, {"ops": ["aten::std_mean.correction"], "fixed_in": "2.3.0"}),
    "litgpt_index_copy_kv_cache": (None, "14.4", False, {"ops": ["aten::index_copy.out"], "fixed_in": "2.8.0"}),
    "float64_numpy_aifeynman": (None, "14.4", False, {"dtype": ("float64", 5)}),
    "bf16_embedding_macos14_torch20": (None, "13.6", False, {"dtype": ("bfloat16", 3)}),
    "kraken_ctc_fallback_slower_than_cpu": (None, "14.4", True,
                                            {"ops": ["aten::_ctc_loss", "aten::_ctc_loss_backward"],
                                             "fixed_in": "2.14.0"}),
    "gpytorch_cholesky_solve_fallback": (None, "14.4", True,
                                         {"ops": ["aten::_cholesky_solve_helper", "aten::linalg_cholesky_ex"]}),
}

EXPECTED_MISSES = {
    "int64_cumsum_macos133": "torch 2.1 nightly on a macOS 13.3 beta regression: the version predates the tables; "
                             "at 2.3.1 with macOS < 13.3 the int64 rule (DTY205) fires, asserted separately",
    "int64_abs_t5_relative_position": "torch 1.13 nightly on macOS 12.4: the version predates the tables and no "
                                      "shipped release lacks int64 abs",
    "microsam_manual_nms_cpu_roundtrip": "imports torchvision, which cannot be installed beside torch 2.13 here; "
                                         "its MPS slowdown is a project-level CPU detour, not an op fact",
    "mmcv_custom_op_no_mps": "imports mmcv (a compiled extension not installed here); custom-namespace ops are "
                             "reported as OPS107 with unknown MPS status when a trace sees them",
    "mpsndarray_dim_product_2pow31": "a size limit (product of dims > 2**31) inside MPSNDArray, not an op or dtype "
                                     "gap; needs a 2 GiB tensor, so it is not run",
    "placeholder_empty_zero_size": "a zero-size-tensor assert inside the MPS baddbmm kernel; the support data has "
                                   "no shape conditions for it (baddbmm has a kernel)",
    "linear_stride0_input_buffer_assert": "a stride bug of the 2.8 MPS linear path; a CPU trace decomposes linear "
                                          "and the data has no stride conditions",
}
NOT_RUN = {"mpsndarray_dim_product_2pow31"}


def test_every_traceable_case_is_predicted_or_an_expected_miss():
    assert sorted(set(PREDICTED) | set(EXPECTED_MISSES)) == TRACEABLE
    assert not set(PREDICTED) & set(EXPECTED_MISSES)


def _trace_case(cid: str, tmp_path: Path):
    repro = CASES[cid]["repro"]
    assert repro.count('dev = "mps"') == 1, cid
    (tmp_path / "repro.py").write_text(repro.replace('dev = "mps"', 'dev = "cpu"'))
    (tmp_path / "entry.py").write_text("import runpy\nfrom pathlib import Path\n\n\ndef step():\n"
                                       "    return lambda: runpy.run_path(str(Path(__file__).with_name('repro.py')))\n")
    saved = dict(os.environ)
    try:
        return record_entry(load_entry(f"{tmp_path / 'entry.py'}:step"), device="cpu", expand=composite_anywhere)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _target(cid: str, torch_v: str | None) -> str:
    v = torch_v or CASES[cid]["torch_version"]
    try:
        return resolve_version(v) if v else shipped_versions()[0]
    except ValueError:
        return shipped_versions()[0]  # older than every table


def _family(op: str) -> str:
    return op.split("::")[1].split(".")[0].rstrip("_")


@pytest.mark.parametrize("cid", sorted(PREDICTED))
def test_case_is_predicted(cid, tmp_path):
    torch_v, macos, fallback, want = PREDICTED[cid]
    tr = _trace_case(cid, tmp_path)
    assert [s["status"] for s in tr.stages] == ["passed", "passed"], tr.stages
    target = _target(cid, torch_v)
    pred = predict(tr, torch=target, macos=macos, fallback=fallback)
    bad = {o.op: o for o in pred.ops if o.verdict in ("error", "fallback")}
    for op in want.get("ops", ()):
        hits = [o for name, o in bad.items() if _family(name) == _family(op)]
        assert hits, (cid, op, sorted(bad))
        assert hits[0].verdict == ("fallback" if fallback else "error")
        assert hits[0].frames and hits[0].frames[0].path == "repro.py"
        if "fixed_in" in want:
            assert hits[0].fixed_in == want["fixed_in"], (cid, hits[0].fixed_in)
    if "dtype" in want:
        dtype, line = want["dtype"]
        dty = [f for f in pred.findings if f.code.startswith("DTY") and f.evidence.get("dtype") == dtype]
        assert dty, (cid, [f.code for f in pred.findings])
        assert (dty[0].location.path, dty[0].location.line, dty[0].severity.value) == ("repro.py", line, "blocker")


# Exact predictions (op -> verdict, fixed_in, repro line) for the table release used above.
EXACT = {
    # _to_sparse/_to_dense: the repro's mask is a CPU tensor on a Mac too, but a whole-step CPU trace cannot
    # tell (docs/trace.md, limits); the constructor is the real blocker (the move of the buffer).
    "whisper_sparse_alignment_heads": {
        "aten::_sparse_coo_tensor_with_dims_and_tensors": ("error", "2.9.0", 10),
        "aten::_to_sparse": ("error", "2.9.0", 10), "aten::_to_dense": ("error", "2.9.0", 13)},
    "grid_sampler_3d_comfyui": {"aten::grid_sampler_3d": ("error", "2.9.0", 6)},
    "litgpt_index_copy_kv_cache": {"aten::index_copy_": ("error", "2.8.0", 6)},
    "kraken_ctc_fallback_slower_than_cpu": {"aten::_ctc_loss.Tensor": ("fallback", "2.14.0", 13),
                                            "aten::_ctc_loss_backward.Tensor": ("fallback", "2.14.0", 14)},
    "gpytorch_cholesky_solve_fallback": {"aten::_cholesky_solve_helper": ("fallback", "2.12.0", 9),
                                         "aten::linalg_cholesky_ex": ("fallback", "2.7.0", 8)},
    "float64_numpy_aifeynman": {},
    "bf16_embedding_macos14_torch20": {},
}


@pytest.mark.parametrize("cid", sorted(EXACT))
def test_case_prediction_exact(cid, tmp_path):
    torch_v, macos, fallback, _ = PREDICTED[cid]
    pred = predict(_trace_case(cid, tmp_path), torch=_target(cid, torch_v), macos=macos, fallback=fallback)
    got = {o.op: (o.verdict, o.fixed_in, o.frames[0].line if o.frames else None) for o in pred.ops if o.problems}
    assert got == EXACT[cid]


def test_case_targets():
    assert _target("whisper_sparse_alignment_heads", "2.5.1") == "2.5.1"
    assert _target("float64_numpy_aifeynman", None) == "2.2.2"  # 1.13.0a0 is older than every table
    assert _target("grid_sampler_3d_comfyui", None) == "2.2.2"  # no version in the report


def test_bf16_embedding_runs_from_macos_14(tmp_path):
    tr = _trace_case("bf16_embedding_macos14_torch20", tmp_path)
    assert not [f for f in predict(tr, torch="2.3", macos="14.0").findings if f.code == "DTY203"]
    (f,) = [f for f in predict(tr, torch="2.3", macos="13.6").findings if f.code == "DTY203"]
    assert (f.location.operator, f.evidence["how"]) == ("aten::_to_copy", "created")


def test_int64_cumsum_flags_int64_below_macos_13_3(tmp_path):
    tr = _trace_case("int64_cumsum_macos133", tmp_path)
    (f,) = [f for f in predict(tr, torch="2.3", macos="13.2").findings if f.code == "DTY205"]
    assert "aten::cumsum" in f.evidence["ops"]
    assert not [f for f in predict(tr, torch="2.3", macos="13.3").findings if f.code == "DTY205"]


@pytest.mark.parametrize("cid", sorted(set(EXPECTED_MISSES) - NOT_RUN))
def test_expected_miss_is_really_missed(cid, tmp_path):
    """A miss must stay a miss until the tool learns it: then move the case to PREDICTED."""
    tr = _trace_case(cid, tmp_path)
    pred = predict(tr, torch=_target(cid, None), macos="14.4")
    named = {_family(o.op) for o in pred.ops if o.verdict in ("error", "fallback")}
    case_ops = {_family(op) for op in CASES[cid]["aten_ops"]}
    assert not (named & case_ops), (cid, named & case_ops)
