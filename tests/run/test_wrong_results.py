"""Predicted silent wrong results in `mpsready run` (mps_wrong_results.yaml through the emulated Mac)."""
from __future__ import annotations

import json
from importlib import resources

import pytest

from mpsready.report.checklist import Status, item_comparison
from mpsready.report.evidence import Evidence
from mpsready.report.evidence.run import from_doc
from mpsready.run.render import render_terminal

from .helpers import emulate, write

ADDCDIV = """import torch
x = torch.rand(2, 3, device="mps").t()
y = torch.rand(2, 3, device="mps").t()
z = torch.rand(2, 3, device="mps").t()
for _ in range(3):
    x.addcdiv_(y, z)
print("done")
"""
CONTIGUOUS = ADDCDIV.replace(".t()", "")
FLOAT16 = ADDCDIV.replace('device="mps")', 'device="mps", dtype=torch.float16)')
UINT8_SHIFT = """import torch
u = torch.tensor([255], dtype=torch.uint8, device="mps")
v = u >> 4
w = u.int() >> 4
"""


def test_inside_the_range_one_entry_at_the_users_line(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    assert doc["outcome"] == "completed" and doc["failures"] == [] and out == "done\n"
    assert doc["exit_code"] == 1
    [w] = doc["wrong_results"]
    assert (w["id"], w["op"], w["dtype"], w["calls"], w["basis"]) == (
        "addcdiv-noncontiguous", "aten::addcdiv_", "float32", 3, "predicted")
    assert w["location"] == {"path": "script.py", "line": 6, "function": "<module>"}
    assert (w["fixed_in"], w["report"]) == ("2.4.0", "https://github.com/pytorch/pytorch/issues/118115")


def test_at_the_fixed_release_none(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.4")
    assert (doc["outcome"], doc["wrong_results"], doc["exit_code"]) == ("completed", [], 0)


def test_near_misses_none(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, CONTIGUOUS), torch="2.3")
    assert (doc["wrong_results"], doc["exit_code"]) == ([], 0)
    # the dtype condition: a uint8 shift at 2.5 matches, the int32 one on the next line does not
    _r, doc, _o, _e = emulate(write(tmp_path, UINT8_SHIFT, "shift.py"), torch="2.5", macos="15.2")
    assert [(w["id"], w["op"], w["dtype"], w["location"]["line"]) for w in doc["wrong_results"]] == [
        ("shift-uint8", "aten::__rshift__.Scalar", "uint8", 3)]


def test_other_dtype_still_matched_when_the_advisory_has_none(tmp_path):
    # addcdiv-noncontiguous names no dtypes: float16 matches too (the dtype recorded is the call's)
    _r, doc, _o, _e = emulate(write(tmp_path, FLOAT16), torch="2.3")
    assert [(w["id"], w["dtype"]) for w in doc["wrong_results"]] == [("addcdiv-noncontiguous", "float16")]


def test_document_validates_and_terminal_names_the_advisory(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("mpsready.run").joinpath("data/run.schema.json").read_text())
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    text = render_terminal(doc)
    assert "outcome: completed" in text
    assert "predicted wrong result(s): 1" in text
    assert "  script.py:6: aten::addcdiv_ float32 (3 call(s)) - " in text
    assert ("    advisory addcdiv-noncontiguous; fixed in torch 2.4.0; "
            "https://github.com/pytorch/pytorch/issues/118115") in text


def test_report_item_5_fails_on_a_predicted_wrong_result(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    item = item_comparison(Evidence(run=from_doc(json.loads(json.dumps(doc)))))
    assert (item.status, item.label, item.prediction) == (Status.FAILED, "failed (predicted)", "fail")
    assert item.summary.startswith("predicted wrong result: aten::addcdiv_ at script.py:6 matches advisory "
                                   "addcdiv-noncontiguous")
    assert item.workaround == "upgrade to PyTorch 2.4.0"
    assert "https://github.com/pytorch/pytorch/issues/118115" in item.evidence[0].text
    # without wrong results the item stays not checked (no comparison)
    _r, clean, _o, _e = emulate(write(tmp_path, CONTIGUOUS, "clean.py"), torch="2.3")
    assert item_comparison(Evidence(run=from_doc(json.loads(json.dumps(clean))))).status is Status.NOT_CHECKED
