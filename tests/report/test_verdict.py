"""Verdict and checklist states for evidence combinations (hand-made stage outputs)."""

from __future__ import annotations

import pytest

from mpsready.findings import Basis, Verdict
from mpsready.report.build import build_report
from mpsready.report.checklist import Status
from mpsready.report.evidence import Evidence
from mpsready.report.evidence import compare, env, record, scan, trace
from tests.report import fixtures as fx


def states(report) -> dict[int, str]:
    return {it.number: it.label for it in report.checklist}


def assert_no_unobserved_pass(report) -> None:
    """The spec's rule: a check that did not run is never passed; a prediction never passes one (item 2 aside)."""
    for it in report.checklist:
        if it.status is Status.PASSED and it.number != 2:
            assert it.basis is Basis.OBSERVED, it
        if it.status is Status.PASSED and it.number == 2:
            assert it.evidence is not None and report.evidence.scan is not None


def clean_evidence(tmp_path, mps=False) -> Evidence:
    ev = Evidence(scan=scan.from_doc(fx.scan_doc()), env=env.from_doc(fx.env_doc()),
                  trace=trace.from_doc(fx.trace_doc()),
                  records=[record.load(fx.write_record(tmp_path / "cpu", "cpu"))])
    if mps:
        ev.env = env.from_doc(fx.env_doc(mac=True, memory_gb=32, fallback=False))
        ev.records.append(record.load(fx.write_record(tmp_path / "mps", "mps")))
    return ev


def test_clean_project_predicted_only_is_mac_for_dev_predicting_runs_on_mac(tmp_path):
    rep = build_report(clean_evidence(tmp_path))
    assert states(rep) == {
        1: "not checked (predicted to pass)", 2: "passed (static review)", 3: "not checked (predicted to pass)",
        4: "not checked (predicted to pass)", 5: "not checked", 6: "not checked (predicted to pass)",
        7: "passed", 8: "not checked",
    }
    v = rep.verdict
    assert (v.verdict, v.basis, v.predicted) == (Verdict.MAC_FOR_DEV, Basis.PREDICTED, Verdict.RUNS_ON_MAC)
    assert v.situation.situation.value == "prototype" and v.situation.inferred
    assert [r.item for r in v.reasons] == [1, 3, 4]
    assert all(r.cap is Verdict.MAC_FOR_DEV for r in v.reasons)
    assert "if the predictions hold when observed on a Mac, the verdict becomes runs_on_mac" in v.would_change
    assert_no_unobserved_pass(rep)


def test_clean_project_observed_on_mps_runs_on_mac(tmp_path):
    rep = build_report(clean_evidence(tmp_path, mps=True))
    assert states(rep) == {1: "passed", 2: "passed (static review)", 3: "passed", 4: "passed",
                           5: "not checked", 6: "passed", 7: "passed", 8: "not checked"}
    assert (rep.verdict.verdict, rep.verdict.basis) == (Verdict.RUNS_ON_MAC, Basis.OBSERVED)
    assert rep.verdict.would_change == []
    assert_no_unobserved_pass(rep)


def test_cuda_only_package_without_alternative_stays_on_cuda(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.scan = scan.from_doc(fx.scan_doc([fx.APEX_NO_ALT], outlook="stay_on_cuda"))
    rep = build_report(ev)
    st = states(rep)
    assert st[1] == "failed (predicted)" and st[2] == "failed (predicted)"
    assert rep.checklist[0].workaround is None
    assert rep.checklist[0].summary == ("1 dependency predicted not to install (or not to work) on macOS: apex")
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    assert rep.verdict.reasons[0].item == 1 and rep.verdict.reasons[0].cap is Verdict.STAY_ON_CUDA
    assert ("a portable replacement for apex (none is known) would remove 1 of the 1 static blocker(s)"
            in rep.verdict.would_change)
    assert_no_unobserved_pass(rep)


def test_cuda_only_package_with_alternative_is_mac_for_dev_and_names_the_swap(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.scan = scan.from_doc(fx.scan_doc([fx.FLASH_ATTN], outlook="mac_for_dev"))
    rep = build_report(ev)
    assert states(rep)[1] == "failed (predicted)"
    assert states(rep)[2] == "passed (static review)"
    assert rep.checklist[0].workaround == "flash-attn -> torch.nn.functional.scaled_dot_product_attention"
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert rep.verdict.predicted is Verdict.MAC_FOR_DEV  # a predicted failure stays a failure
    assert ("if flash-attn is replaced by torch.nn.functional.scaled_dot_product_attention, the static blockers "
            "drop from 1 to 0") in rep.verdict.would_change


def test_missing_operator_with_fallback(tmp_path):
    ev = clean_evidence(tmp_path)
    ops = fx.CLEAN_OPS + [fx.op("aten::_ctc_loss", "fallback", calls=2, fixed_in="2.14", stage="loss"),
                          fx.op("aten::_ctc_loss_backward", "fallback", calls=1, fixed_in="2.14", stage="backward")]
    ev.trace = trace.from_doc(fx.trace_doc(ops, fallback_share=0.3))
    rep = build_report(ev)
    st = states(rep)
    assert st[4] == "not checked (predicted to pass)"
    assert st[6] == "failed (predicted)"
    assert rep.checklist[5].summary == ("2 operator(s) predicted to fall back to the CPU (needs "
                                        "PYTORCH_ENABLE_MPS_FALLBACK=1), about 30% of step time")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert ("PyTorch 2.14 fixes the two operators predicted to fail or fall back "
            "(aten::_ctc_loss, aten::_ctc_loss_backward): upgrade PyTorch to >= 2.14 (mpsready trace --torch 2.14 "
            "checks it)") in rep.verdict.would_change
    assert [f.code for f in rep.outlook.findings] == ["PRF202"]


def test_trace_error_fixed_in_a_release_is_mac_for_dev_not_stay_on_cuda(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.trace = trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [
        fx.op("aten::_amp_foreach_non_finite_check_and_unscale_", "error", where="train.py:30", fixed_in="2.8.0")]))
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.status, item4.basis, item4.workaround) == (
        Status.FAILED, Basis.PREDICTED, "aten::_amp_foreach_non_finite_check_and_unscale_: PyTorch 2.8.0")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert not any("no known way" in r.text for r in rep.verdict.reasons)
    assert ("PyTorch 2.8.0 fixes the one operator predicted to fail or fall back "
            "(aten::_amp_foreach_non_finite_check_and_unscale_): upgrade PyTorch to >= 2.8.0 (mpsready trace "
            "--torch 2.8 checks it)") in rep.verdict.would_change


def test_missing_operator_without_release_fix_fails_item4_with_the_fallback_as_way_around(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.trace = trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [fx.op("aten::_linalg_eig", "error", where="m.py:7")]))
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.status, item4.basis) == (Status.FAILED, Basis.PREDICTED)
    assert item4.workaround == "aten::_linalg_eig: PYTORCH_ENABLE_MPS_FALLBACK=1 (runs on the CPU)"
    assert item4.evidence[0].text == ("aten::_linalg_eig x1 (float32) at m.py:7 [forward]: error on MPS; "
                                      "no fix in any release known")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert ("no PyTorch release has an MPS kernel for aten::_linalg_eig: rewriting those calls, or accepting the "
            "CPU fallback (PYTORCH_ENABLE_MPS_FALLBACK=1), is the way forward") in rep.verdict.would_change


def test_sparse_error_without_way_around_stays_on_cuda(tmp_path):
    ev = clean_evidence(tmp_path)
    sparse = fx.op("aten::_sparse_coo_tensor_with_dims_and_tensors", "error", where="whisper/model.py:40",
                   stage="to_device", dtypes=("bool",), problems=("sparse",))
    ev.trace = trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [sparse]))
    rep = build_report(ev)
    assert (rep.checklist[3].label, rep.checklist[3].workaround) == ("failed (predicted)", None)
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    assert rep.verdict.reasons[0].text.startswith("item 4 (representative step on MPS) failed (predicted), "
                                                  "critical, no known way around it")
    assert ("no PyTorch release fixes aten::_sparse_coo_tensor_with_dims_and_tensors (sparse problem): changing "
            "the call at whisper/model.py:40 removes it") in rep.verdict.would_change


def test_comparison_failing_on_mps_in_long_training_stays_on_cuda(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "mps", failed=2))
    rep = build_report(ev)
    assert rep.verdict.situation.situation.value == "long_training"  # inferred from the comparison
    item5 = rep.checklist[4]
    assert (item5.label, item5.summary) == ("failed", "cuda vs mps: 2 tensor(s) out of tolerance, first at "
                                            "activation:blocks.1")
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    assert rep.verdict.basis is Basis.OBSERVED  # set by an observed comparison of an MPS run


def test_comparison_failing_is_only_mac_for_dev_for_a_prototype(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "mps", failed=2))
    rep = build_report(ev, situation="prototype")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert not rep.verdict.situation.inferred


def test_comparison_passing_on_mps_with_long_training_runs_on_mac(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "mps", failed=0))
    rep = build_report(ev)
    assert states(rep)[5] == "passed"
    assert (rep.verdict.verdict, rep.verdict.basis) == (Verdict.RUNS_ON_MAC, Basis.OBSERVED)


def test_cpu_vs_cuda_comparison_never_passes_item5(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "cpu", failed=0))
    rep = build_report(ev)
    assert states(rep)[5] == "not checked (predicted to pass)"
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "cpu", failed=1))
    assert states(build_report(ev))[5] == "failed (predicted)"


def test_no_evidence_at_all_checks_nothing_and_stays_on_cuda():
    rep = build_report(Evidence())
    assert all(it.status is Status.NOT_CHECKED and it.prediction is None for it in rep.checklist)
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    assert rep.verdict.reasons[0].text.startswith("no scan, no trace and no run")


@pytest.mark.parametrize("present", ["scan", "env", "trace", "records", "compare"])
def test_one_stage_alone_never_passes_a_check_it_did_not_make(tmp_path, present):
    ev = Evidence()
    if present == "scan":
        ev.scan = scan.from_doc(fx.scan_doc())
    elif present == "env":
        ev.env = env.from_doc(fx.env_doc())
    elif present == "trace":
        ev.trace = trace.from_doc(fx.trace_doc())
    elif present == "records":
        ev.records = [record.load(fx.write_record(tmp_path / "cpu", "cpu"))]
    else:
        ev.compare = compare.from_doc(fx.compare_doc("cuda", "cpu"))
    rep = build_report(ev)
    passed = {it.number for it in rep.checklist if it.status is Status.PASSED}
    # item 8 (data handling) passes only on a person's sign-off of a kit's manifest, never on a stage output
    expected = {"scan": {2}, "env": {7}, "trace": set(), "records": {7}, "compare": set()}[present]
    assert passed == expected
    assert rep.verdict.verdict is not Verdict.RUNS_ON_MAC
    assert_no_unobserved_pass(rep)


def test_step_failing_on_mps_is_observed_failure(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps2", "mps", failed_stage="backward"))
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.label, item4.summary) == ("failed", "the step failed on mps in backward")
    # PyTorch's missing-operator text names the op, and the CPU fallback is the way around it.
    assert item4.workaround == "aten::foo: PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU"
    assert (rep.verdict.verdict, rep.verdict.basis) == (Verdict.MAC_FOR_DEV, Basis.OBSERVED)
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps7", "mps", failed_stage="forward",
                                                error_type="RuntimeError", error="MPSNDArray error: buffer overflow"))
    rep = build_report(ev)
    assert rep.checklist[3].workaround is None
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA  # critical, observed, no way around it known


def test_mps_built_but_not_available_fails_item3(tmp_path):
    ev = Evidence(scan=scan.from_doc(fx.scan_doc()), env=env.from_doc(fx.env_doc(mac=True, mps_available=False)))
    rep = build_report(ev)
    assert states(rep)[3] == "failed"
    assert rep.checklist[2].evidence[0].text == ("macOS 14.4.1, arm64, Python 3.12.3, torch 2.13.0: mps "
                                                 "is_built=True, is_available=False")


def test_observed_fallback_ops_fail_item6_and_small_share_does_not_cap(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps3", "mps",
                                                fallback={"enabled": True, "checked": True,
                                                          "calls": {"aten::_ctc_loss": 4}}))
    rep = build_report(ev)
    assert states(rep)[6] == "failed"
    assert rep.checklist[5].evidence[1].text == "aten::_ctc_loss: 4 call(s) ran on the CPU"
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV  # share unknown: capped
    ev.trace = trace.from_doc(fx.trace_doc(fallback_share=0.02))
    assert build_report(ev).verdict.verdict is Verdict.RUNS_ON_MAC


def test_raw_tensors_are_a_fact_of_item8_which_stays_not_checked_and_caps_only_for_deployment(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records[0] = record.load(fx.write_record(tmp_path / "cpu_raw", "cpu", raw=True))
    rep = build_report(ev)
    item8 = rep.checklist[7]
    assert (item8.label, item8.basis) == ("not checked", None)
    assert item8.evidence[0].text == "cpu: raw tensors saved (--save-tensors): they hold data"
    assert rep.verdict.verdict is Verdict.RUNS_ON_MAC
    dep = build_report(ev, situation="deployment")
    assert dep.verdict.verdict is Verdict.MAC_FOR_DEV  # item 8 critical and not checked


def test_extension_with_fallback_infers_extensions_situation(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.scan = scan.from_doc(fx.scan_doc([fx.CUDA_EXT_WITH_FALLBACK]))
    rep = build_report(ev)
    assert rep.verdict.situation.situation.value == "extensions"
    assert rep.verdict.situation.why == "the scan found 1 CUDA extension finding(s) (EXT101 setup.py:9)"
    assert states(rep)[2] == "passed (static review)"
    assert rep.checklist[1].evidence[0].text.endswith("-> alternative: fallback present")


def test_memory_over_the_macs_caps_long_training(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records.append(record.load(fx.write_record(tmp_path / "cuda", "cuda", peak=40 * 2**30)))
    rep = build_report(ev, job_steps=20000)
    assert rep.verdict.situation.situation.value == "long_training"
    assert [f.code for f in rep.outlook.findings] == ["PRF201"]
    assert rep.outlook.findings[0].message == "peak 40.0 GiB on cuda against 32.0 GiB on the Mac"
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    cuda = rep.outlook.timing("cuda")
    assert cuda.step_seconds == pytest.approx(0.1) and cuda.projected_seconds == pytest.approx(2000.0)


def test_time_budget(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    rep = build_report(ev, job_steps=100_000, time_budget_hours=1.0, situation="long_training")
    assert [f.code for f in rep.outlook.findings] == ["PRF203"]
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA


def test_step_failing_on_cpu_for_a_cuda_reason_predicts_failure_on_mps(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.records = [record.load(fx.write_record(tmp_path / "cpu2", "cpu", failed_stage="to_device",
                                              error_type="AssertionError",
                                              error="Torch not compiled with CUDA enabled"))]
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.label, item4.summary) == ("failed (predicted)", "predicted to fail on MPS: stage to_device on cpu "
                                            "(no MPS run observed)")
    assert item4.workaround == ("replace the CUDA-only calls by device-agnostic ones (.to(device), "
                                "torch.accelerator.*)")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    ev.records = [record.load(fx.write_record(tmp_path / "cpu2b", "cpu", failed_stage="forward",
                                              error_type="RuntimeError",
                                              error="fused_gelu: x must be a CUDA tensor"))]
    rep = build_report(ev)
    assert (rep.checklist[3].label, rep.checklist[3].workaround) == ("failed (predicted)", None)
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA


def test_step_broken_on_cpu_for_another_reason_is_not_checked_never_failed_or_passed(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.records = [record.load(fx.write_record(tmp_path / "cpu3", "cpu", failed_stage="forward",
                                              error_type="RuntimeError",
                                              error="view size is not compatible with input tensor's size"))]
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.status, item4.prediction) == (Status.NOT_CHECKED, None)
    assert item4.summary == ("the step itself failed here (stage forward on cpu), for a reason that does not "
                             "involve CUDA: nothing about MPS can be concluded until it runs")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV and rep.verdict.predicted is Verdict.MAC_FOR_DEV


def test_same_backend_comparison_predicts_nothing(tmp_path):
    ev = clean_evidence(tmp_path)
    ev.compare = compare.from_doc(fx.compare_doc("cpu", "cpu", failed=0))
    item5 = build_report(ev).checklist[4]
    assert (item5.label, item5.prediction) == ("not checked", None)
    assert item5.summary == "cpu vs cpu agree within tolerance: a rerun on the same backend says nothing about MPS"


def test_float64_blocker_on_a_running_op_fails_item4_with_the_cast_as_way_around(tmp_path):
    ev = clean_evidence(tmp_path)
    f64 = fx.finding("DTY201", "blocker", "a float64 tensor made by aten::lift_fresh at model.py:62 is used on the "
                     "device", operator="aten::_to_copy", fix="cast to float32", dtype="float64")
    ev.trace = trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [fx.op("aten::_to_copy", stage="to_device")], [f64]))
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.label, item4.summary) == ("failed (predicted)", "predicted to fail on MPS: DTY201 (float64) "
                                            "(no MPS run observed)")
    assert item4.workaround == "DTY201: cast to float32"
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV


def test_uncounted_fallback_is_not_a_pass(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps4", "mps", fallback={
        "enabled": True, "checked": False, "calls": {}, "warned_ops": []}))
    ev.trace = None
    assert build_report(ev).checklist[5].label == "not checked"
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps5", "mps", fallback={
        "enabled": True, "checked": False, "calls": {}, "warned_ops": ["aten::_ctc_loss"]}))
    item6 = build_report(ev).checklist[5]
    assert item6.label == "failed"
    assert item6.evidence[1].text == ("aten::_ctc_loss: ran on the CPU (named in PyTorch's fallback warning, "
                                      "not counted)")


def test_long_training_states_the_projected_time_and_whether_it_was_judged(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.compare = compare.from_doc(fx.compare_doc("cuda", "mps", failed=0))
    rep = build_report(ev, job_steps=36_000)
    assert rep.verdict.verdict is Verdict.RUNS_ON_MAC
    assert [r.text for r in rep.verdict.reasons] == [
        "time: 36000 steps projected at 1.00 h on mps; not judged: give the study's budget with --time-budget-hours",
        "every critical item (1, 4, 5) was observed passed and no check failed"]
    rep = build_report(ev, job_steps=36_000, time_budget_hours=2)
    assert rep.verdict.reasons[0].text.endswith("; within the 2 h budget")


def test_whole_step_entry_on_mps_leaves_item4_not_checked(tmp_path):
    ev = clean_evidence(tmp_path, mps=True)
    ev.records[1] = record.load(fx.write_record(tmp_path / "mps6", "mps", whole=True))
    rep = build_report(ev)
    item4 = rep.checklist[3]
    assert (item4.label, item4.summary) == (
        "not checked (predicted to pass)",
        "the whole step ran on mps, but as one callable: checkpoint save/reload and inference were not exercised")
    assert (rep.verdict.verdict, rep.verdict.predicted) == (Verdict.MAC_FOR_DEV, Verdict.RUNS_ON_MAC)


def test_kernels_without_alternative_are_one_line_in_would_change(tmp_path):
    kernels = [fx.finding("EXT103", message=f"Triton kernel k{i}()", path="ops/k.py", line=10 * i + 1,
                          library="triton", no_alternative=True) for i in range(9)]
    ev = clean_evidence(tmp_path)
    ev.scan = scan.from_doc(fx.scan_doc(kernels + [fx.APEX_NO_ALT]))
    rep = build_report(ev)
    assert rep.verdict.verdict is Verdict.STAY_ON_CUDA
    assert rep.verdict.would_change[:2] == [
        "a portable replacement for apex (none is known) would remove 1 of the 10 static blocker(s)",
        "a portable replacement for the triton kernels (none is known) would remove 9 of the 10 static blocker(s)"]
    assert rep.checklist[1].summary.startswith("10 CUDA-only component(s) without a known alternative: apex, "
                                               "triton kernel at ops/k.py:1, ")


def test_a_pinned_old_torch_has_its_fix_as_the_way_around(tmp_path):
    """The scan marks components with no alternative (evidence.no_alternative); others have their fix."""
    pin = fx.finding("DEP109", message="torch==1.2.0 allows only PyTorch releases before 1.12: no MPS backend",
                     path="requirements.txt", line=5, package="torch", specifier="==1.2.0",
                     fix="Move the pin to a current PyTorch.")
    ev = clean_evidence(tmp_path)
    ev.scan = scan.from_doc(fx.scan_doc([pin]))
    rep = build_report(ev)
    assert (rep.checklist[0].label, rep.checklist[0].workaround) == ("failed (predicted)",
                                                                     "torch -> Move the pin to a current PyTorch.")
    assert rep.verdict.verdict is Verdict.MAC_FOR_DEV
    assert rep.verdict.would_change[0] == ("if torch is dealt with as the finding says (Move the pin to a current "
                                           "PyTorch), the static blockers drop from 1 to 0")
    guarded = fx.finding("DEP107", message="imports apex", path="m.py", line=3, package="apex", no_alternative=True,
                         guarded=True)
    ev.scan = scan.from_doc(fx.scan_doc([guarded]))
    assert build_report(ev).checklist[1].label == "passed (static review)"
