"""Every real case in /work/shared/cases/mps_cases.json that a static scan should catch, caught.

Each case's repro is written to a temporary project and scanned; the expected rule code must be
among the findings. A case that the scan cannot catch would be listed in EXPECTED_MISSES with the
reason (none at present).
"""

import json
from pathlib import Path

import pytest

from mpsready.scan import scan_path

CASES_FILE = Path("/work/shared/cases/mps_cases.json")
REPO_CASES = Path(__file__).parent / "fixtures" / "mps_cases_static.json"

EXPECTED = {
    "whisper_sparse_alignment_heads": ("API118", 10),  # register_buffer(..., keep.to_sparse())
    "float64_numpy_aifeynman": ("DTY102", 5),  # torch.from_numpy(float64 table).to(dev)
    "bf16_embedding_macos14_torch20": ("DTY103", 3),
    "microsam_manual_nms_cpu_roundtrip": ("API116", 10),  # nms(boxes.cpu(), ...).to(dev)
    "hardcoded_cuda_model_move": ("API103", 6),  # net.to(device=loader_default), loader_default = "cuda"
    "nccl_init_on_macos": ("API107", 8),
    "cuda_amp_silently_disabled": ("API108", 8),  # torch.autocast(device_type="cuda")
    "bitsandbytes_quantization_mac": ("DEP107", 4),
    "xformers_install_m1": ("DEP107", 5),
    "mmcv_custom_op_no_mps": ("DEP107", 6),
    "whisper_default_cuda_or_cpu": ("API104", 5),  # "cuda" if torch.cuda.is_available() else "cpu"
    "nanogpt_device_type_mps_as_cpu": ("API115", 4),  # "cuda" if "cuda" in dev else "cpu"
    "cross_device_seed_a1111": ("API117", 4),  # torch.Generator(device=dev)
}
EXPECTED_MISSES: dict[str, str] = {}


def _static_cases():
    source = CASES_FILE if CASES_FILE.exists() else REPO_CASES
    cases = json.loads(source.read_text(encoding="utf-8"))
    return [c for c in cases if "static_scan" in c.get("detectable_by", [])]


def test_every_static_case_is_expected_or_a_listed_miss():
    ids = {c["id"] for c in _static_cases()}
    assert ids == set(EXPECTED) | set(EXPECTED_MISSES)


@pytest.mark.parametrize("case", _static_cases(), ids=lambda c: c["id"])
def test_case_repro_is_caught(case, tmp_path):
    if case["id"] in EXPECTED_MISSES:
        pytest.skip(EXPECTED_MISSES[case["id"]])
    (tmp_path / "repro.py").write_text(case["repro"], encoding="utf-8")
    code, line = EXPECTED[case["id"]]
    found = {(f.code, f.location.line) for f in scan_path(tmp_path).findings}
    assert (code, line) in found, sorted(found)
