"""run-on-mac.sh runs to the end here in its documented dry run (MPSREADY_KIT_DEVICE=cpu, with this interpreter
as MPSREADY_KIT_PYTHON), replays the input spec of a CPU record, and report --mac-results reads what it packed."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from mpsready.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.torch]  # four torch processes: about 25 s of CPU time

DEMO = Path(__file__).resolve().parents[2] / "src" / "mpsready" / "examples" / "demo_project"


def test_demo_kit_dry_run_to_the_end_and_back(tmp_path, capsys):
    proj = tmp_path / "demo"
    shutil.copytree(DEMO, proj)
    ref = tmp_path / "ref"
    kit = tmp_path / "kit"
    cwd = os.getcwd()
    os.chdir(proj)
    try:
        assert main(["record", "mpsready_step.py:step", "--device", "cpu", "--steps", "1", "--out", str(ref)]) == 0
    finally:
        os.chdir(cwd)
    assert main(["kit", str(proj), "--entry", "mpsready_step.py:step", "-o", str(kit), "--record", str(ref),
                 "--steps", "2", "--tests"]) == 0
    spec = json.loads((kit / "inputs.json").read_text())
    assert spec["schema"] == {"name": "mpsready.inputs", "version": 1}
    assert [t["shape"] for t in spec["inputs"]["tensors"]] == [[8, 32], [8, 32]]
    env = {**os.environ, "MPSREADY_KIT_DEVICE": "cpu", "MPSREADY_KIT_PYTHON": sys.executable}
    res = subprocess.run(["sh", str(kit / "run-on-mac.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    archive = kit / "results.tar.gz"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"results/run.json", "results/kit-check.json", "results/env.json", "results/record-device/record.json",
            "results/record-cpu/record.json", "results/compare.json", "results/trace-device.json",
            "results/manifest.json"} <= names
    run = json.loads((kit / "results" / "run.json").read_text())
    assert (run["device"], run["kit_device"], run["dry_run"]) == ("cpu", "mps", True)
    steps = {s["name"]: s for s in run["steps"]}
    assert [n for n in steps] == ["install", "env", "ops-installed", "trace", "record-device", "record-cpu",
                                  "compare", "tests"]
    assert steps["install"]["skipped"] == "MPSREADY_KIT_PYTHON is set: its environment is used as it is"
    assert (steps["record-device"]["exit"], steps["record-cpu"]["exit"], steps["compare"]["exit"]) == (0, 0, 0)
    rec = json.loads((kit / "results" / "record-device" / "record.json").read_text())
    assert rec["synthetic_inputs"].endswith("inputs.json") and rec["device"] == "cpu"
    capsys.readouterr()
    assert main(["report", "--mac-results", str(archive), "--format", "json"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    item8 = doc["checklist"][7]
    assert (item8["status"], item8["basis"]) == ("not_checked", None)
    assert item8["summary"].startswith("a person must confirm that the data rules allow this environment; the kit "
                                       "that ran (manifest sha256 ")
    vs = doc["predicted_vs_observed"]
    assert vs["on_mac"] is False
    assert vs["note"] == "The results come from a dry run on cpu: nothing here was observed on a Mac"
    assert doc["inputs"]["mac_results"] == str(archive)
