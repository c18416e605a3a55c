"""The fresh-report scorer's comparison of a run document with an expectation (no runs: synthetic documents)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fresh_reports", ROOT / "benchmarks" / "fresh_reports.py")
fr = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("fresh_reports", fr)  # dataclasses look their module up there
_spec.loader.exec_module(fr)

FAIL = {"outcome": "failed", "exception": "RuntimeError", "message_contains": "Placeholder storage", "line": 8}


def _check(expected, name="r.py"):
    return fr.Check("r", "placement", "tune", "reported", "2.3", "14.5", Path(name), expected)


def _doc(outcome, exc=None, msg="", line=None, mac=True, path="r.py", **extra):
    ff = {"exception": exc, "message": msg, "location": {"path": path, "line": line}, "mac": mac} if exc else None
    return {"outcome": outcome, "first_failure": ff, **extra}


def test_a_matching_failure_holds():
    doc = _doc("failed", "RuntimeError", "Placeholder storage has not been allocated on MPS device!", 8)
    assert fr.compare(_check(FAIL), doc) == ([], "failed RuntimeError@8")


def test_each_difference_of_a_failure_is_named():
    doc = _doc("failed", "torch._dynamo.exc.BackendCompilerFailed", "other text", 9, path="lib.py")
    misses, _ = fr.compare(_check(FAIL), doc)
    assert misses == ["wrong exception (BackendCompilerFailed, the Mac raised RuntimeError)",
                      "wrong message ('other text' lacks 'Placeholder storage')",
                      "wrong line (lib.py:9, the Mac: r.py:8)"]


def test_completed_and_program_errors_are_misses_of_their_own_kind():
    assert fr.compare(_check(FAIL), _doc("completed"))[0] == ["completed where the Mac failed"]
    doc = _doc("inconclusive", "AttributeError", "module 'torch.mps' has no attribute 'x'", 6, mac=False)
    assert fr.compare(_check(FAIL), doc)[0] == [
        "inconclusive where the Mac failed (the program's own AttributeError: module 'torch.mps' has no attribute 'x')"]


def test_wrong_result_needs_a_non_empty_wrong_results_list():
    want = {"outcome": "completed", "wrong_result": True}
    assert fr.compare(_check(want), _doc("completed"))[0] == [
        "no predicted wrong result (the run document has no wrong_results list)"]
    assert fr.compare(_check(want), _doc("completed", wrong_results=[]))[0] == ["no predicted wrong result"]
    assert fr.compare(_check(want), _doc("completed", wrong_results=[{"op": "aten::remainder"}]))[0] == []
    assert fr.compare(_check({"outcome": "completed"}), _doc("completed", wrong_results=[{}]))[0] == [
        "a predicted wrong result the report does not give (1)"]


def test_scores_count_a_report_only_when_all_its_checks_hold():
    a = fr.Result(_check({"outcome": "completed"}))
    b = fr.Result(fr.Check("r", "placement", "tune", "after_fix", "2.4", "14.5", Path("r.py"), {"outcome": "completed"}),
                  misses=["completed where the Mac failed"])
    c = fr.Result(fr.Check("s", "works", "held_out", "reported", "2.5", "15.2", Path("s.py"), {"outcome": "completed"}))
    sc = fr.score([a, b, c])
    assert sc["total"] == [1, 2] and sc["checks"] == [2, 3]
    assert sc["half"] == {"held_out": (1, 1), "tune": (0, 1)}
    assert sc["cause"] == {"placement": (0, 1), "works": (1, 1)}


def test_checks_of_adds_the_after_fix_run():
    report = {"id": "x", "cause": "compile", "half": "tune", "torch": "2.3", "macos": "14.3",
              "expected": {"outcome": "completed"}, "after_fix": {"torch": "2.10", "outcome": "completed"}}
    got = fr.checks_of(report, Path("/d"))
    assert [(c.stage, c.torch, c.expected, c.script) for c in got] == [
        ("reported", "2.3", {"outcome": "completed"}, Path("/d/x.py")),
        ("after_fix", "2.10", {"outcome": "completed"}, Path("/d/x.py"))]


def test_a_report_from_an_intel_mac_runs_with_mac_intel(tmp_path):
    # `mac: intel` (fresh_reports_2026_12c stft_fft_r2c_intel_amd, 12d intel_amd_bf16_222): --mac intel
    base = {"id": "x", "cause": "dtype", "half": "tune", "torch": "2.2", "macos": "15.1",
            "expected": {"outcome": "completed"}}
    (check,) = fr.checks_of({**base, "mac": "intel"}, tmp_path)
    assert (check.mac, check.torch, check.script) == ("intel", "2.2", tmp_path / "x.py")
    (check,) = fr.checks_of(base, tmp_path)
    assert check.mac == "apple"
    marked = {r["id"] for d in ("fresh_reports_2026_12c/tune", "fresh_reports_2026_12d/tune")
              for r in fr.load_reports(ROOT / "benchmarks" / "data" / d / "reports.yaml") if r.get("mac") == "intel"}
    assert marked == {"stft_fft_r2c_intel_amd", "intel_amd_bf16_222"}
