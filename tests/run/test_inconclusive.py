"""An exception the emulated Mac did not raise is not a Mac failure; a failure a release or the fallback clears
is not ``stay_on_cuda`` (found on Pytorch-UNet without torchvision, and on nanoGPT with torch.amp)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from mpsready.report.build import build_report  # noqa: E402
from mpsready.report.evidence import Evidence  # noqa: E402
from mpsready.report.evidence import run as run_ev  # noqa: E402
from mpsready.run.render import render_terminal  # noqa: E402

from .helpers import emulate, write  # noqa: E402

MISSING_MODULE = '''\
import torch
dev = torch.device("mps")
net = torch.nn.Linear(4, 2).to(dev)
y = net(torch.ones(3, 4, device=dev)).sum()
y.backward()
import mpsready_no_such_dependency
'''
MISSING_FILE = '''\
import torch
x = torch.ones(2, device="mps")
open("data/imgs/0001.png", "rb")
'''
OWN_BUG = '''\
import torch
x = torch.ones(2, device="mps")
cfg = {}
lr = cfg["lr"]
'''
OWN_EXIT = '''\
import sys
import torch
x = torch.ones(2, device="mps")
sys.exit(3)
'''
NCCL = '''\
import sys
import torch.distributed as dist
dist.init_process_group("nccl", init_method="file://" + sys.argv[1], rank=0, world_size=1)
'''
AMP_UNSCALE = '''\
import torch
dev = torch.device("mps")
g = torch.ones(4, device=dev)
found_inf = torch.zeros(1, device=dev)
inv_scale = torch.ones(1, device=dev)
torch._amp_foreach_non_finite_check_and_unscale_([g], found_inf, inv_scale)
print(found_inf.item())
'''


def _report(tmp_path, doc):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    report = build_report(Evidence(run=run_ev.load(path)))
    return {i.number: i for i in report.checklist}, report.verdict, str(path)


def test_missing_module_is_an_environment_error_not_a_mac_failure(tmp_path):
    _r, doc, _o, err = emulate(write(tmp_path, MISSING_MODULE), torch="2.5", macos="14.4")
    pe = doc["program_error"]
    assert (doc["outcome"], doc["exit_code"], doc["failures"]) == ("inconclusive", 2, [])
    assert (pe["kind"], pe["exception"], pe["message"], pe["missing"], pe["mac"], pe["location"]["line"]) == (
        "environment", "ModuleNotFoundError", "No module named 'mpsready_no_such_dependency'",
        "module mpsready_no_such_dependency", False, 6)
    assert doc["first_failure"] == pe and "basis" not in pe
    assert "ModuleNotFoundError: No module named 'mpsready_no_such_dependency'" in err
    text = render_terminal(doc)
    assert "first failure on the Mac" not in text
    assert ("not a Mac failure: the program stopped at script.py:6 on an error of its own or of this environment\n"
            "  ModuleNotFoundError: No module named 'mpsready_no_such_dependency'\n"
            "  missing here: module mpsready_no_such_dependency; install the package that provides it in the "
            "environment that runs mpsready (the project's own requirements), then run again\n"
            "  this run proves nothing about the Mac beyond script.py:6: ") in text


def test_missing_module_leaves_item_4_not_checked_and_the_verdict_mac_for_dev(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, MISSING_MODULE), torch="2.5", macos="14.4")
    items, verdict, path = _report(tmp_path, doc)
    i4 = items[4]
    assert (i4.status.value, i4.basis, i4.label, i4.prediction) == ("not_checked", None, "not checked", None)
    assert i4.summary == ("the step itself failed here (the emulated run stopped at script.py:6 on "
                          "ModuleNotFoundError, module mpsready_no_such_dependency missing), for a reason that does "
                          "not involve CUDA: nothing about MPS can be concluded until it runs")
    assert i4.next_step == ("provide module mpsready_no_such_dependency in the environment that runs mpsready (the "
                            "project's own requirements or data), then mpsready run again")
    assert [(e.kind, e.basis, e.source) for e in i4.evidence] == [("run", None, path)]
    assert i4.evidence[0].text == (
        "emulated Mac run stopped at script.py:6 on ModuleNotFoundError: No module named "
        "'mpsready_no_such_dependency'; not a Mac failure (this environment lacks module "
        "mpsready_no_such_dependency): nothing is known about the Mac beyond that point")
    assert items[6].prediction is None and items[6].status.value == "not_checked"
    assert verdict.verdict.value == "mac_for_dev"
    assert not any("no known way" in r.text for r in verdict.reasons)
    assert [r.text for r in verdict.reasons if r.item == 4] == [
        f"item 4 (representative step on MPS) not checked, critical: runs_on_mac needs it observed ({i4.summary})"]
    assert (f"the emulated run ({path}) stopped at script.py:6 on ModuleNotFoundError, which is not a Mac failure: "
            "providing module mpsready_no_such_dependency and running `mpsready run -- python script.py` again "
            "checks item 4 past it") in verdict.would_change


@pytest.mark.parametrize("script,want", [
    (MISSING_FILE, ("environment", "FileNotFoundError", "file data/imgs/0001.png", 3)),
    (OWN_BUG, ("program_error", "KeyError", None, 4)),
    (OWN_EXIT, ("exit", "SystemExit", None, 4)),
])
def test_other_exceptions_of_the_program_are_inconclusive(tmp_path, script, want):
    _r, doc, _o, _e = emulate(write(tmp_path, script))
    pe = doc["program_error"]
    assert (doc["outcome"], doc["exit_code"], doc["failures"]) == ("inconclusive", 2, [])
    assert (pe["kind"], pe["exception"], pe["missing"], pe["location"]["line"] if pe["location"] else 4) == want
    items, verdict, _p = _report(tmp_path, doc)
    assert (items[4].status.value, verdict.verdict.value) == ("not_checked", "mac_for_dev")


def test_nccl_process_group_is_a_marked_mac_failure(tmp_path):
    pytest.importorskip("torch.distributed")
    _r, doc, _o, _e = emulate(write(tmp_path, NCCL), argv=[str(tmp_path / "store")])
    ff = doc["first_failure"]
    assert (doc["outcome"], doc["exit_code"], ff["kind"], ff["exception"], ff["mac"], ff["location"]["line"]) == (
        "failed", 1, "cuda_api", "RuntimeError", True, 3)
    assert doc["program_error"] is None


def test_a_failure_fixed_in_a_release_with_a_fallback_is_mac_for_dev(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, AMP_UNSCALE), torch="2.5", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["op"], ff["fixed_in"], ff["mac"]) == (
        "failed", "missing", "aten::_amp_foreach_non_finite_check_and_unscale_", "2.8.0", True)
    items, verdict, path = _report(tmp_path, doc)
    i4 = items[4]
    op = "aten::_amp_foreach_non_finite_check_and_unscale_"
    assert (i4.status.value, i4.label) == ("failed", "failed (predicted)")
    assert i4.workaround == (
        f"{op} at script.py:6: upgrade PyTorch to >= 2.8.0 (mpsready run --torch 2.8 checks it) or "
        "PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU (cost: each call runs on the CPU, its tensors copied off "
        "the device and back; mpsready run --fallback predicts its share of time)")
    assert verdict.verdict.value == "mac_for_dev"
    r4 = [r for r in verdict.reasons if r.item == 4]
    assert [(r.cap.value, r.basis.value) for r in r4] == [("mac_for_dev", "predicted")]
    assert r4[0].text.startswith(f"item 4 (representative step on MPS) failed (predicted), critical: predicted to "
                                 f"fail on MPS: {op} at script.py:6 (no MPS run observed); way around: {op} at "
                                 "script.py:6: upgrade PyTorch to >= 2.8.0")
    assert verdict.would_change[:2] == [
        f"upgrading PyTorch to >= 2.8.0 clears what the emulated run predicts to fail ({op} at script.py:6) "
        f"({path}): `mpsready run --torch 2.8 -- python script.py` checks the rest of the program on it",
        f"PYTORCH_ENABLE_MPS_FALLBACK=1 runs {op} at script.py:6 ({path}) on the CPU instead of failing (cost: "
        "each call runs on the CPU, its tensors copied off the device and back); `mpsready run --fallback -- python "
        "script.py` predicts their share of the run's time"]


def test_the_same_failure_cleared_by_the_fallback_run(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, AMP_UNSCALE), torch="2.5", macos="14.4", fallback=True)
    assert (doc["outcome"], doc["exit_code"], doc["failures"]) == ("completed", 0, [])
    items, verdict, path = _report(tmp_path, doc)
    assert (items[4].status.value, items[4].prediction) == ("not_checked", "pass")
    assert (items[6].status.value, items[6].workaround) == (
        "failed", "runs with those operators on the CPU; fixed in PyTorch 2.8.0")
    assert verdict.verdict.value == "mac_for_dev"
    assert (f"PyTorch 2.8.0 has MPS kernels for aten::_amp_foreach_non_finite_check_and_unscale_, which the "
            f"emulated run ({path}) ran on the CPU: `mpsready run --torch 2.8 -- python script.py` checks it") \
        in verdict.would_change


def test_a_failure_nothing_clears_stays_on_cuda(tmp_path):
    """The ladder's bottom still holds: a crash-free refusal with no fix release and no fallback."""
    from mpsready.report.checklist import run_failure_way
    from mpsready.report.evidence.run import RunFailure

    f = RunFailure(kind="shape", op="aten::conv_transpose3d", dtype="float32", message="m", where="a.py:3",
                   fixed_in=None)
    assert run_failure_way(f) is None
    assert run_failure_way(RunFailure("shape", "aten::x", None, "m", None, "2.8.0")) == (
        "aten::x: upgrade PyTorch to >= 2.8.0 (mpsready run --torch 2.8 checks it)")
    assert run_failure_way(RunFailure("macos", "aten::y", None, "m", "b.py:2", None)) == (
        "aten::y at b.py:2: a newer macOS, where MPS has the kernel (the support table's macOS condition)")
    assert run_failure_way(RunFailure("sparse", "aten::z", "bool", "m", None, None)) is None


def test_old_documents_without_the_mac_flag_read_program_error_kinds_as_not_mac(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, OWN_BUG))
    old = dict(doc, outcome="failed", exit_code=1, program_error=None)
    old["failures"] = [{k: v for k, v in doc["program_error"].items() if k != "mac"}]
    ev = run_ev.from_doc(old)
    assert (ev.failures, ev.program_error.kind, ev.program_error.exception) == ([], "program_error", "KeyError")
