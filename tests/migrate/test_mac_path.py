"""Edits that change what a Mac runs are said so, and are held back where the PyTorch floor lacks what they need.

``fixtures/amp_no_floor`` and ``fixtures/amp_floor_2_8`` hold the same training script of the nanoGPT kind
(written for this test): before migration a Mac takes the CPU branch (``device_type == "cpu"``: no autocast,
float32) with an inert ``torch.cuda.amp.GradScaler``. The release numbers come from the shipped ops tables
(``mpsready ops aten::_amp_foreach_non_finite_check_and_unscale_``: kernel since 2.8.0).
"""

import json
import runpy
import shutil
from contextlib import nullcontext
from pathlib import Path

import pytest
import torch

from mpsready.migrate.apply import apply_plan
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.formats import render_json, render_summary
from mpsready.migrate.mac_path import autocast_release, floor_allows, gradscaler_release
from mpsready.scan import ScanConfig

HERE = Path(__file__).parent
CONFIG = ScanConfig(cache_dir=None)
OPS = "aten::_amp_foreach_non_finite_check_and_unscale_ and aten::_amp_update_scale_"
SCALER_OFF = (
    "  manual API108 train.py:11: GradScaler left off on MPS (on CUDA only, as before): on MPS it needs PyTorch 2.8.0 "
    f"(MPS kernels for {OPS}) and the PyTorch floor is not declared; to use it on MPS, declare torch>=2.8.0 and run "
    "migrate again")
TEST_KEPT = (
    "  manual API115 train.py:8: left as it is, to keep the Mac path: torch.device(...).type would give 'mps' on a Mac, "
    "turning on autocast and GradScaler there; on MPS GradScaler needs PyTorch 2.8.0 (MPS kernels for "
    f"{OPS}) and the PyTorch floor is not declared: declare torch>=2.8.0 and run migrate again, or rewrite by hand")
REVIEW_115 = (
    "changes the Mac path: the value is 'mps' on a Mac where it was 'cpu', so code keyed on it takes its accelerator "
    "path on MPS; autocast now active on MPS (from PyTorch 2.5.1: AutocastMPS registrations, listed from this release "
    f"in the shipped ops tables), GradScaler now active on MPS (from PyTorch 2.8.0: MPS kernels for {OPS}); "
    "the floor 2.8 allows it")
REVIEW_108 = (
    "changes the Mac path: GradScaler now active on MPS (the original was off without CUDA, an inert scaler); works on "
    f"MPS from PyTorch 2.8.0 (MPS kernels for {OPS}), the floor 2.8 allows it")


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(HERE / "fixtures" / name, dst)
    return dst


def test_release_numbers_come_from_the_shipped_ops_tables():
    assert (gradscaler_release(), autocast_release()) == ("2.8.0", "2.5.1")
    assert [floor_allows(f, "2.8.0") for f in (None, (2, 7), (2, 8), (2, 10))] == [False, False, True, True]
    assert floor_allows((2, 5), "2.5.1") is False  # torch>=2.5 admits 2.5.0
    assert floor_allows((2, 8), None) is False


@pytest.mark.parametrize("name", ["amp_no_floor", "amp_floor_2_8"])
def test_exact_output_and_a_second_run_is_a_no_op(name, tmp_path):
    target = _copy(name, tmp_path)
    assert apply_plan(migrate_path(target, config=CONFIG)).refused == []
    assert (target / "train.py").read_text() == (HERE / "expected" / name / "train.py").read_text()
    again = migrate_path(target, config=CONFIG)
    assert again.files == []


def _effort(auto: int, files: int, manual: int, kept: int) -> str:
    return (f"  migrate effort (plan): {auto} auto-fixable finding(s) in {files} file(s) (`mpsready migrate PATH` shows "
            f"the diff), {manual} manual, {kept} need no change")


def test_without_a_floor_the_mac_path_is_kept_and_the_mps_change_is_manual(tmp_path):
    plan = migrate_path(_copy("amp_no_floor", tmp_path), config=CONFIG)
    summary = render_summary(plan).splitlines()
    assert summary == [
        "mpsready migrate: 2 edits in 1 file (API103 1, API108 1) fixing 2 scan finding(s); 2 manual entries (1 code "
        "finding), 0 left as they are; PyTorch floor not declared", _effort(2, 1, 1, 0), TEST_KEPT, SCALER_OFF,
        "nothing written (review the diff, then run again with --apply)"]
    doc = json.loads(render_json(plan))
    assert [e for e in doc["files"][0]["edits"] if "changes_mac_path" in e] == []
    assert [(m["code"], m["line"]) for m in doc["manual"]] == [("API115", 8), ("API108", 11)]


def test_with_a_floor_that_has_the_kernels_each_edit_says_what_changes(tmp_path):
    plan = migrate_path(_copy("amp_floor_2_8", tmp_path), config=CONFIG)
    summary = render_summary(plan).splitlines()
    assert summary == [
        "mpsready migrate: 3 edits in 1 file (API103 1, API108 1, API115 1) fixing 3 scan finding(s); 0 manual entries, "
        "0 left as they are; PyTorch floor 2.8", _effort(3, 1, 0, 0),
        f"  review API115 train.py:8: {REVIEW_115}", f"  review API108 train.py:11: {REVIEW_108}",
        "nothing written (review the diff, then run again with --apply)"]
    edits = json.loads(render_json(plan))["files"][0]["edits"]
    assert [(e["code"], e.get("changes_mac_path"), e.get("needs_torch")) for e in edits] == [
        ("API103", None, None), ("API115", REVIEW_115, "2.8.0"), ("API108", REVIEW_108, "2.8.0")]


@pytest.mark.parametrize("name", ["amp_no_floor", "amp_floor_2_8"])
def test_the_cpu_runs_the_migrated_script_as_it_ran_the_original(name, tmp_path):
    # this machine has no CUDA: the original, configured for it (device = "cpu"), took the CPU branch with an inert
    # scaler (and warned about it); the migrated script selects the CPU itself and must do the same
    target = _copy(name, tmp_path)
    original = tmp_path / "original.py"
    original.write_text((target / "train.py").read_text().replace('device = "cuda"', 'device = "cpu"'))
    with pytest.warns(UserWarning):
        before = runpy.run_path(str(original))
    apply_plan(migrate_path(target, config=CONFIG))
    after = runpy.run_path(str(target / "train.py"))
    assert (before["device_type"], after["device"], after["device_type"]) == ("cpu", "cpu", "cpu")
    assert isinstance(after["ctx"], nullcontext) and isinstance(before["ctx"], nullcontext)
    assert (before["scaler"].is_enabled(), after["scaler"].is_enabled()) == (False, False)
    model, x = torch.nn.Linear(3, 1), torch.ones(2, 3)
    assert after["step"](model, x, torch.optim.SGD(model.parameters(), 0.1)).dtype == torch.float32
