"""``mpsready check --baseline``: a baseline run record made earlier is compared with this machine's run."""

from __future__ import annotations

import json
import shutil

import pytest

from mpsready.cli import main
from mpsready.check.demo import DEMO_ENTRY, demo_project

pytest.importorskip("torch", reason="check records the example step with PyTorch")


def test_check_with_a_baseline_runs_compare_and_embeds_its_plots(tmp_path, capsys):
    from mpsready.record import record_entry

    project = tmp_path / "proj"
    shutil.copytree(demo_project(), project, ignore=shutil.ignore_patterns("__pycache__"))
    baseline = tmp_path / "baseline"
    record_entry(DEMO_ENTRY, device="cpu", steps=3, out=baseline, cwd=str(project))
    out = tmp_path / "out"
    code = main(["check", str(project), "--entry", DEMO_ENTRY, "--baseline", str(baseline), "--out", str(out),
                 "--record-steps", "3",  # as many steps as the baseline, so the two records match
                 "--situation", "prototype"])
    doc = json.loads((out / "report.json").read_text())
    assert code == 1
    assert doc["stages_present"] == ["scan", "env", "trace", "record", "compare"]
    assert doc["stages_skipped"] == {}
    item5 = doc["checklist"][4]
    # A CPU rerun against a CPU baseline: compared, but it says nothing about MPS.
    assert item5["label"] == "not checked"
    assert item5["summary"].startswith("cpu vs cpu ")
    assert doc["verdict"]["situation"] == {"name": "prototype", "title": "coursework or prototype", "inferred": False,
                                           "why": "given with --situation", "critical_items": [1, 3, 4]}
    html = (out / "report.html").read_text()
    assert 'id="plot-loss_curves"' in html and 'id="plot-layer_errors"' in html
    assert sorted(p.name for p in (out / "compare-plots").iterdir()) == ["layer_error.svg", "loss.svg"]
