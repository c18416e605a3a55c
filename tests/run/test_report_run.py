"""``mpsready report --run RUN.json``: an emulated Mac run is predicted evidence for checklist items 4 and 6."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from mpsready.cli import main  # noqa: E402
from mpsready.report.build import build_report  # noqa: E402
from mpsready.report.evidence import Evidence, EvidenceError  # noqa: E402
from mpsready.report.evidence import run as run_ev  # noqa: E402

from .helpers import emulate, write  # noqa: E402
from .test_research_scripts import CTC  # noqa: E402

CLEAN = "import torch\nx = torch.ones(3, device='mps')\nprint((x * 2).sum().item())\n"


def _items(tmp_path, script, **kw):
    _r, doc, _o, _e = emulate(write(tmp_path, script), **kw)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    report = build_report(Evidence(run=run_ev.load(path)))
    return {i.number: i for i in report.checklist}, path


def test_failed_run_fails_item_4_as_predicted(tmp_path):
    items, _p = _items(tmp_path, CTC, torch="2.13")
    i4 = items[4]
    assert (i4.status.value, i4.basis.value, i4.label, i4.prediction) == ("failed", "predicted", "failed (predicted)",
                                                                          "fail")
    assert i4.summary == "predicted to fail on MPS: aten::_ctc_loss.Tensor at script.py:8 (no MPS run observed)"
    assert i4.evidence[0].kind == "run" and i4.evidence[0].text.startswith(
        "emulated Mac run: aten::_ctc_loss.Tensor (float32) at script.py:8: The operator")


def test_fallback_run_fails_item_6_with_share(tmp_path):
    items, _p = _items(tmp_path, CTC, torch="2.13", fallback=True)
    i6 = items[6]
    assert (i6.status.value, i6.basis.value, i6.prediction) == ("failed", "predicted", "fail")
    assert i6.summary.startswith("emulated Mac run: 2 operator(s) fell back to the CPU: "
                                 "aten::_ctc_loss.Tensor, aten::_ctc_loss_backward.Tensor, about ")
    assert i6.workaround == "runs with those operators on the CPU; fixed in PyTorch 2.14.0"
    assert items[4].prediction == "pass" and items[4].status.value == "not_checked"


def test_clean_run_predicts_pass_never_passed(tmp_path):
    items, path = _items(tmp_path, CLEAN, torch="2.13")
    assert (items[4].status.value, items[4].prediction) == ("not_checked", "pass")
    assert "emulated Mac run (torch 2.13.0, macOS 15.5): completed" in items[4].summary
    assert (items[6].status.value, items[6].prediction) == ("not_checked", "pass")
    assert main(["report", "--run", str(path), "--format", "json"]) in (0, 1)


def test_a_run_that_never_reached_mps_is_its_own_statement(tmp_path):
    """Issue 31: "no tensor reached the emulated MPS device" stays a statement of its own under item 4, never
    "completed, 0 MPS operators judged, none predicted to fail" and never a predicted pass."""
    items, _path = _items(tmp_path, "import torch\nprint(torch.ones(3).sum().item())\n", torch="2.13")
    i4 = items[4]
    assert (i4.status.value, i4.prediction, i4.label) == ("not_checked", None, "not checked")
    assert i4.summary == ("no MPS run observed; emulated Mac run (torch 2.13.0, macOS 15.5): completed, but no tensor "
                          "reached the emulated MPS device, so nothing about MPS was judged")
    assert [(e.kind, e.text, e.basis) for e in i4.evidence] == [(
        "run", "emulated Mac run: no tensor reached the emulated MPS device: on a Mac this program runs on the CPU "
               "(a device selection that checks only CUDA, or no --device mps given); not a pass, nothing was judged",
        None)]


def test_bad_run_document_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": {"name": "mpsready.run", "version": 1}, "outcome": "exploded"}))
    with pytest.raises(EvidenceError):
        run_ev.load(bad)
    assert main(["report", "--run", str(bad)]) == 2


def test_run_documents_validate_against_the_shipped_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    from tests.emulate.test_device_model import KEEP_GOING
    from .test_inconclusive import AMP_UNSCALE, MISSING_MODULE

    schema = json.loads(resources.files("mpsready.run").joinpath("data/run.schema.json").read_text())
    for i, (script, kw) in enumerate([(CTC, {"torch": "2.13"}), (CTC, {"torch": "2.13", "fallback": True}),
                                      (CLEAN, {}), (KEEP_GOING, {"torch": "2.5", "keep_going": True}),
                                      (MISSING_MODULE, {}), (AMP_UNSCALE, {"torch": "2.5"})]):
        sub = tmp_path / str(i)
        sub.mkdir()
        _r, doc, _o, _e = emulate(write(sub, script), **kw)
        jsonschema.validate(json.loads(json.dumps(doc)), schema)


def test_unverified_run_predicts_no_pass_and_lists_what_was_not_judged(tmp_path):
    from .test_unverified import SAFE_SOFTMAX

    items, _p = _items(tmp_path, SAFE_SOFTMAX, torch="2.5")
    i4, i6 = items[4], items[6]
    assert (i4.status.value, i4.prediction) == ("not_checked", None)
    assert "emulated Mac run (torch 2.5.1, macOS 15.5): unverified" in i4.summary
    assert "1 judged on no data (not verified)" in i4.summary
    assert any(e.text.startswith("emulated Mac run: aten::isneginf.out at script.py:3 not verified "
                                 "(callee_of_other_release)") for e in i4.evidence)
    assert (i6.status.value, i6.prediction) == ("not_checked", None)
    assert i6.summary == ("emulated Mac run (unverified): no operator fell back to the CPU, but 1 call(s) were "
                          "judged on no data")
