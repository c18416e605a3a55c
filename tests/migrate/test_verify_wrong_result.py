"""``migrate --verify --torch 2.2,2.13`` of a copy whose migrated code runs GELU on a transposed tensor (builder h40,
2026-12-07): ``mpsready run --torch 2.2`` of that copy predicts a silent wrong result (advisory
gelu-noncontiguous, exit 1), but the verify table said ``2.2.2 completed -`` and ``verified: yes`` (exit 0): "it
runs" read as "it is right". The release's predicted wrong result is now its "no", with the advisory and line."""
from __future__ import annotations

import json

from mpsready.migrate.verify import CpuRun, VerifyResult, mac_result, render_verify

DOC = {"outcome": "completed", "mps_used": True, "steps": 1, "first_failure": None, "program_error": None,
       "target": {"torch": "2.2.2"},
       "wrong_results": [{"id": "gelu-noncontiguous", "op": "aten::gelu", "dtype": "float32", "calls": 1,
                          "fixed_in": "2.4.0", "location": {"path": "train.py", "line": 7, "function": "<module>"}},
                         {"id": "gelu-noncontiguous", "op": "aten::gelu_backward", "dtype": "float32", "calls": 1,
                          "fixed_in": "2.4.0", "location": {"path": "train.py", "line": 8, "function": "<module>"}}]}


def test_a_predicted_wrong_result_is_not_verified(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(DOC))
    r = mac_result(tmp_path, "2.2", path, 1, False, "", 300.0)
    assert (r.torch, r.outcome, r.failure, r.line) == (
        "2.2.2", "completed", "wrong result aten::gelu (float32) train.py:7 (advisory gelu-noncontiguous; fixed in "
        "2.4.0; +1 more)", "train.py:7")
    cpu = CpuRun(0, "1\n", "", steps=1, sha256="a")
    result = VerifyResult(["python", "train.py"], cpu, cpu, [r])
    assert result.verified is False
    assert result.reasons() == [{"check": "emulated Mac", "torch": "2.2.2", "line": "train.py:7",
                                 "reason": "predicted wrong result: MPS computes aten::gelu (float32) silently wrong on "
                                           "this release (advisory gelu-noncontiguous; fixed in 2.4.0; +1 more)"}]
    lines = render_verify(result).splitlines()
    assert lines[2].split()[:6] == ["2.2.2", "yes", "completed", "yes", "wrong", "result"]
    assert lines[-1] == "verified: no"
