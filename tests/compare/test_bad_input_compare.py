"""``mpsready compare`` on damaged records and unwritable outputs: exit 2 and one clear line, never a traceback."""

from __future__ import annotations

import json
import shutil
import struct

import pytest

from mpsready.cli import main


def damaged(recs, tmp_path, name="b"):
    out = tmp_path / name
    shutil.copytree(recs["a"], out)
    return out


def err_line(capsys):
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return cap.err.strip()


def test_output_in_a_missing_directory_is_refused_before_comparing(recs, tmp_path, capsys):
    target = tmp_path / "missing" / "out.md"
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--no-config", "--output", str(target)]) == 2
    assert err_line(capsys) == f"mpsready compare: error: --output {target}: directory {target.parent} does not exist"


def test_output_that_is_a_directory(recs, tmp_path, capsys):
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--no-config", "--format", "json",
                 "--output", str(tmp_path)]) == 2
    assert err_line(capsys) == f"mpsready compare: error: --output {tmp_path}: is a directory (give a file name)"


def test_plots_directory_that_cannot_be_made(recs, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--no-config", "--plots", str(blocker / "plots")]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: --plots {blocker / 'plots'}: cannot create the directory: "
                                "Not a directory")


def test_record_json_nested_too_deeply(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    (b / "record.json").write_text("[" * 100_000)
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: cannot read {b / 'record.json'}: maximum recursion depth "
                                "exceeded while decoding a JSON array from a unicode string")


@pytest.mark.parametrize("line, why", [
    ("[1, 2]", "a JSON list, not an object"),
    ('{"name": 5}', "no 'key' field"),
    ("[" * 100_000, "JSON nested too deeply"),
])
def test_bad_tensors_jsonl_lines(recs, tmp_path, capsys, line, why):
    b = damaged(recs, tmp_path)
    lines = (b / "tensors.jsonl").read_text().splitlines()
    lines[1] = line
    (b / "tensors.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'tensors.jsonl'}:2: malformed tensor entry: {why}"


def test_safetensors_header_nested_too_deeply(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    raw = sorted((b / "tensors").glob("*.safetensors"))[0]
    header = b"[" * 50_000
    raw.write_bytes(struct.pack("<Q", len(header)) + header)
    assert main(["compare", str(recs["a"]), str(b), "--no-config", "--verify-bytes"]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: {raw}: unreadable safetensors header: maximum recursion "
                                "depth exceeded while decoding a JSON array from a unicode string")


def test_reference_from_another_model_is_a_structure_difference(recs, capsys, tmp_path):
    from collections import OrderedDict

    from torch import nn

    from tests.compare.recorder import record_run

    def other():  # same layer names, other widths: 42 of the 60 tensors have another shape
        return nn.Sequential(OrderedDict([("fc1", nn.Linear(8, 32)), ("act1", nn.ReLU()), ("fc2", nn.Linear(32, 32)),
                                          ("act2", nn.Tanh()), ("head", nn.Linear(32, 4))]))

    ref = record_run(tmp_path / "other", steps=3, model_fn=other)
    # its three-way judgements used to read "unknown" in silence (or compare unrelated losses), exit 0
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--no-config", "--reference", str(ref),
                 "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["message"] for f in doc["findings"] if f["code"] == "NUM104"] == [
        "the reference C has no tensor of the same shape for 42 of 60 compared tensors (another model or entry?); "
        "their three-way judgement is unknown"]


def test_matching_reference_adds_no_structure_difference(recs, capsys):
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--no-config", "--reference", str(recs["ref64"]),
                 "--format", "json"]) == 0
    assert [f["code"] for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "NUM104"] == []


@pytest.mark.parametrize("text, why", [
    ("tool = 5\n", "{cfg}: [tool] must be a table"),  # used to raise AttributeError: 'int' object has no attribute 'get'
    ("[tool]\nmpsready = 5\n", "{cfg}: [tool.mpsready] must be a table"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "cannot read {cfg}: TOML nested too deeply to read"),  # RecursionError
])
def test_odd_config_files(recs, tmp_path, capsys, text, why):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(text)
    assert main(["compare", str(recs["a"]), str(recs["a_rerun"]), "--config", str(cfg)]) == 2
    assert err_line(capsys) == "mpsready compare: error: " + why.format(cfg=cfg)


@pytest.mark.parametrize("change, why", [
    (lambda d: d.__setitem__("stages", 5), "field 'stages' must be a list, not a number"),  # used: TypeError
    (lambda d: d.__setitem__("stages", [1]), "stages[0] must be an object, not a number"),  # used: AttributeError
    (lambda d: d.__setitem__("stages", [{"stage": 3}]), "stages[0] must have 'stage' and 'status' strings"),
    (lambda d: d.__setitem__("step_metrics", [{"index": 0, "loss": "1.0"}]),
     "step_metrics[0].loss must be a number or null, not a string"),
    (lambda d: d.__setitem__("device", None), "field 'device' must be a string, not null"),
    (lambda d: d.__setitem__("env", [1]), "field 'env' must be an object or null, not a list"),
])
def test_record_json_fields_of_the_wrong_type(recs, tmp_path, capsys, change, why):
    b = damaged(recs, tmp_path)
    doc = json.loads((b / "record.json").read_text())
    change(doc)
    (b / "record.json").write_text(json.dumps(doc))
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'record.json'}: {why}"
