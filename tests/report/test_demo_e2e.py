"""End to end: ``mpsready demo`` on the bundled example project, every stage for real (about 15 s).

The expected values are what the bundled project truly contains (see its README): flash-attn in
requirements.txt with SDPA as the alternative, a CUDAExtension with a try/except fallback, device
selection that ignores MPS, torch.cuda.synchronize in train.py, and a NumPy float64 buffer.
"""

from __future__ import annotations

import json

import pytest

from mpsready.cli import main

pytest.importorskip("torch", reason="the demo traces and records the example step with PyTorch")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    code = main(["demo", "--out", str(out)])
    return code, out


def test_demo_writes_the_reports_and_exits_0(demo, capsys):
    code, out = demo
    assert code == 0
    rep = out / "report"
    assert {p.name for p in rep.iterdir()} >= {"report.md", "report.html", "report.json", "scan.json", "env.json",
                                               "trace.json", "records"}
    assert sorted(p.name for p in (rep / "records").iterdir()) == ["cpu"]  # never claims mps (or cuda) here


def test_demo_verdict_and_checklist(demo):
    _, out = demo
    doc = json.loads((out / "report" / "report.json").read_text())
    v = doc["verdict"]
    assert (v["name"], v["basis"], v["if_predictions_hold"]) == ("mac_for_dev", "predicted", "mac_for_dev")
    assert v["situation"]["name"] == "extensions" and v["situation"]["inferred"] is True
    assert {c["number"]: c["label"] for c in doc["checklist"]} == {
        1: "failed (predicted)", 2: "passed (static review)", 3: "not checked (predicted to pass)",
        4: "failed (predicted)", 5: "not checked", 6: "not checked (predicted to pass)", 7: "passed", 8: "not checked"}
    item1 = doc["checklist"][0]
    assert item1["workaround"] == "flash-attn -> torch.nn.functional.scaled_dot_product_attention (has an MPS path)"
    assert ("if flash-attn is replaced by torch.nn.functional.scaled_dot_product_attention (has an MPS path), the "
            "static blockers drop from 2 to 1") in v["would_change"]
    # The float64 leak (tinyformer/model.py:62, NumPy positions -> buffer) is what fails item 4: on the emulated
    # device (the default trace) once, where a Mac raises it, in model.to("mps") (the CPU trace counted 2: the
    # buffer's reload in the checkpoint stage too)
    item4 = doc["checklist"][3]
    assert item4["summary"] == "predicted to fail on MPS: DTY201 (float64) (no MPS run observed)"
    assert [e["text"].split(". On MPS")[0] for e in item4["evidence"] if e["basis"] == "predicted"] == [
        "DTY201 Predicted (emulated MPS device): a float64 tensor reaches MPS in stage to_device (the runner's "
        "Module.to of the Step's model); the tensor was made at tinyformer/model.py:62 (aten::_to_copy)"]
    assert ("casting the float64/complex128 tensors to float32 where they are made (tinyformer/model.py:62) "
            "removes 1 dtype blocker(s)") in v["would_change"]
    assert any(e["text"].startswith("cpu: all 9 stages passed") and e["basis"] == "observed"
               for e in item4["evidence"])
    assert doc["stages_skipped"] == {"compare": "no --baseline record given (for example one recorded on the "
                                                "CUDA server)"}


def test_demo_traces_on_the_emulated_device(demo):
    _, out = demo
    trace = json.loads((out / "report" / "trace.json").read_text())
    assert (trace["basis"], trace["traced_on"]["device"], trace["traced_on"]["emulated"]) == ("predicted", "mps", True)
    assert [(f["code"], f["location"].get("path"), f["location"].get("line"), f["location"].get("stage"))
            for f in trace["findings"]] == [("DTY201", "tinyformer/model.py", 62, "to_device")]
    assert [s["status"] for s in trace["stages"]] == ["passed"] * 9
    assert trace["summary"]["verdicts"]["error"] == 0 and trace["summary"]["verdicts"]["fallback"] == 0


def test_demo_report_json_is_valid(demo):
    import jsonschema

    from tests.report.test_schema import SCHEMA

    _, out = demo
    jsonschema.validate(json.loads((out / "report" / "report.json").read_text()), SCHEMA)


def test_demo_findings_are_the_example_projects(demo):
    _, out = demo
    scan = json.loads((out / "report" / "scan.json").read_text())
    found = sorted((f["code"], f["location"].get("path"), f["location"].get("line")) for f in scan["findings"])
    assert found == [("API102", "train.py", 36), ("API104", "train.py", 14), ("API105", "train.py", 10),
                     ("DEP101", "requirements.txt", 4), ("DEP107", "tinyformer/attention.py", 8),
                     ("EXT101", "csrc/fused_gelu.cu", None), ("EXT102", "setup.py", 11)]
    assert scan["outlook"]["verdict"] == "mac_for_dev"


def test_demo_html_and_markdown_agree_with_json(demo):
    _, out = demo
    md = (out / "report" / "report.md").read_text()
    html = (out / "report" / "report.html").read_text()
    assert "## Verdict: **Mac for development and tests, CUDA for the main work** (`mac_for_dev`, predicted)" in md
    assert 'data-verdict="mac_for_dev"' in html
    assert 'id="item-4" class="critical" data-status="failed" data-basis="predicted"' in html


def test_report_rebuilt_from_the_stage_outputs_matches_check(demo, capsys):
    _, out = demo
    rep = out / "report"
    capsys.readouterr()
    code = main(["report", "--scan", str(rep / "scan.json"), "--env", str(rep / "env.json"),
                 "--trace", str(rep / "trace.json"), "--record", str(rep / "records" / "cpu"),
                 "--steps", "20000", "--format", "json"])
    again = json.loads(capsys.readouterr().out)
    first = json.loads((rep / "report.json").read_text())
    assert code == 1
    assert again["verdict"]["name"] == first["verdict"]["name"]
    assert [c["label"] for c in again["checklist"]] == [c["label"] for c in first["checklist"]]
    assert again["verdict"]["would_change"] == first["verdict"]["would_change"]
