"""``mpsready trace``: formats, exit codes, bad input."""
from __future__ import annotations

import argparse
import json

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError  # noqa: E402
from mpsready.trace import cli  # noqa: E402

from .helpers import ENTRIES, line_of  # noqa: E402


def run_cli(argv: list[str]) -> int:
    """What mpsready.cli.main does for the trace subcommand (UsageError -> 2)."""
    parser = argparse.ArgumentParser(prog="mpsready")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError:
        return 2


def test_json_output_is_the_versioned_envelope_with_predicted_basis(tmp_path):
    out = tmp_path / "t.json"
    # the entries here build CPU tensors: the CPU trace (--device cpu) judges every op of the step
    rc = run_cli(["trace", f"{ENTRIES}:eig", "--torch", "2.13", "--macos", "14.4", "--device", "cpu",
                  "--format", "json", "--output", str(out)])
    assert rc == 1
    doc = json.loads(out.read_text())
    assert doc["schema"] == {"name": "mpsready.trace", "version": 1}
    assert doc["basis"] == "predicted" and doc["summary"]["basis"] == "predicted"
    assert doc["target"] == {"torch": "2.13.0", "macos": "14.4", "mps_fallback": False, "basis": "predicted"}
    assert doc["traced_on"] == {"device": "cpu", "emulated": False, "torch": doc["traced_on"]["torch"],
                                "basis": "observed"}
    assert all(o["basis"] == "predicted" for o in doc["ops"])
    assert all(f["basis"] == "predicted" for f in doc["findings"])
    assert [(f["code"], f["location"]["operator"], f["location"]["line"]) for f in doc["findings"]] == [
        ("OPS101", "aten::linalg_eig", line_of("eig"))]
    eig = next(o for o in doc["ops"] if o["op"] == "aten::linalg_eig")
    assert (eig["verdict"], eig["fixed_in"], eig["count"]) == ("error", None, 1)
    assert [s["stage"] for s in doc["stages"]] == ["build", "step"]
    assert doc["summary"]["predicted_errors"] == 1 and doc["exit_code"] == 1


def test_markdown_and_terminal_say_prediction_on_every_line(tmp_path, capsys):
    md = tmp_path / "t.md"
    assert run_cli(["trace", f"{ENTRIES}:ctc", "--torch", "2.13", "--mps-fallback", "--format", "md",
                    "-o", str(md)]) == 0  # fallback is a degradation, not a blocker
    text = md.read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| predicted")]
    assert len(rows) == 4  # 2 ops + 2 findings
    assert "`aten::_ctc_loss.Tensor`" in text and "falls back to CPU" in text and "| 2.14.0 |" in text
    assert run_cli(["trace", f"{ENTRIES}:ctc", "--torch", "2.13"]) == 1
    term = capsys.readouterr().out
    assert term.startswith("mpsready trace: PREDICTED for MPS with torch 2.13.0")
    assert "OPS101" in term and "aten::_ctc_loss.Tensor" in term


@pytest.mark.parametrize("argv, msg", [
    (["--device", "xpu"], "--device must be cpu, cuda or mps"),
    (["--torch", "1.9"], "no MPS support table for torch 1.9"),
    (["--macos", "sonoma"], "is not a macOS version such as 14.4"), (["--macos", "16.0"], "there is no macOS 16"),
])
def test_bad_options_exit_2(argv, msg, capsys):
    parser = argparse.ArgumentParser(prog="mpsready")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["trace", f"{ENTRIES}:cnn", *argv])
    with pytest.raises(UsageError, match=msg):
        args.run(args)


def test_missing_entry_exits_2(tmp_path):
    assert run_cli(["trace", f"{tmp_path / 'nope.py'}:step"]) == 2
    assert run_cli(["trace", "not-a-spec"]) == 2


def test_json_output_validates_against_the_shipped_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("mpsready.trace").joinpath("data/trace.schema.json").read_text())
    for name, extra in (("sparse_buffer", ["--torch", "2.5"]), ("ctc", ["--mps-fallback"]),
                        ("float64_loss", []), ("failing_loss", [])):
        out = tmp_path / f"{name}.json"
        run_cli(["trace", f"{ENTRIES}:{name}", "--format", "json", "-o", str(out), *extra])
        jsonschema.validate(json.loads(out.read_text()), schema)


def test_from_json_classifies_a_saved_trace_for_another_release(tmp_path, capsys):
    saved = tmp_path / "nanmedian.json"
    # recorded with torch 2.13: the callee of the composite is its own out variant nanmedian.dim_values, which the
    # 2.7 table gives no MPS kernel: a blocker there too (ops.judge Judge.own_variant, as mpsready run judges it)
    assert run_cli(["trace", f"{ENTRIES}:nanmedian", "--torch", "2.7", "--device", "cpu", "--format", "json",
                    "-o", str(saved)]) == 1
    again = tmp_path / "again.json"
    assert run_cli(["trace", "--from-json", str(saved), "--torch", "2.8", "--format", "json", "-o", str(again)]) == 0
    doc = json.loads(again.read_text())
    assert doc["target"]["torch"] == "2.8.0" and doc["findings"] == []
    assert run_cli(["trace", "--from-json", str(saved), "--format", "json", "-o", str(again)]) == 1  # 2.7 again
    assert [(f["code"], f["location"]["operator"]) for f in json.loads(again.read_text())["findings"]] == [
        ("OPS101", "aten::nanmedian.dim_values")]
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": {"name": "mpsready.record", "version": 1}}')
    assert run_cli(["trace", "--from-json", str(bad)]) == 2
    assert run_cli(["trace", f"{ENTRIES}:cnn", "--from-json", str(saved)]) == 2
    assert run_cli(["trace"]) == 2


def test_a_failed_stage_says_incomplete_in_terminal_and_markdown(tmp_path, capsys):
    # A broken ENTRY (nanoGPT with a non-contiguous target) used to end in "... Exit code 0." and nothing else.
    assert run_cli(["trace", f"{ENTRIES}:failing_loss", "--torch", "2.13", "--device", "cpu"]) == 0
    term = " ".join(capsys.readouterr().out.split())
    assert ("INCOMPLETE: stage(s) loss failed on the trace device (cpu (CPU trace)), so their ops and the stages after them "
            "are missing from this prediction.") in term
    md = tmp_path / "t.md"
    assert run_cli(["trace", f"{ENTRIES}:failing_loss", "--torch", "2.13", "--format", "md", "-o", str(md)]) == 0
    # the default, emulated trace: the same stage fails on the emulated device, labelled so
    assert "**INCOMPLETE: stage(s) loss failed on the trace device (emulated mps)" in md.read_text()
    assert run_cli(["trace", f"{ENTRIES}:cnn", "--torch", "2.13"]) == 0
    assert "INCOMPLETE" not in capsys.readouterr().out


def test_stage_failure_message_ending_in_a_period_is_not_doubled():
    from types import SimpleNamespace

    from mpsready.trace.predict import _stage_findings

    trace = SimpleNamespace(device="cpu", stages=[{"stage": "forward", "status": "failed", "error_type": "RuntimeError",
                                                   "error": "view size is not compatible. Use .reshape(...) instead."}])
    [f] = _stage_findings(trace)
    assert f.message == ("Stage forward failed on the trace device (cpu): RuntimeError: view size is not compatible. "
                         "Use .reshape(...) instead. Ops after the failure are not in the prediction.")


def test_json_on_stdout_stays_valid_when_the_step_prints(tmp_path, capsys):
    # nanoGPT prints "number of parameters: ..." while building the model; that went to stdout before the JSON.
    entry = tmp_path / "chatty.py"
    entry.write_text("import torch\nfrom mpsready.step import Step\n\n"
                     "def step():\n    print('number of parameters: 0.01M')\n"
                     "    return Step(model=torch.nn.Linear(4, 2), batch=torch.ones(3, 4), loss_fn=lambda o: o.sum())\n")
    assert run_cli(["trace", f"{entry}:step", "--torch", "2.13", "--format", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["schema"] == {"name": "mpsready.trace", "version": 1}
    assert "number of parameters: 0.01M" in captured.err


def test_an_entry_whose_import_fails_exits_2_with_the_reason(tmp_path, capsys):
    # vit-pytorch's package __init__ imports torchvision; without it the trace died with a raw traceback, exit 1.
    entry = tmp_path / "needs_missing.py"
    entry.write_text("import torch\nimport mpsready_no_such_dependency\n\ndef step():\n    pass\n")
    parser = argparse.ArgumentParser(prog="mpsready")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["trace", f"{entry}:step"])
    with pytest.raises(UsageError) as info:
        args.run(args)
    assert str(info.value) == (f"importing ENTRY {entry}:step raised ModuleNotFoundError: No module named "
                               "'mpsready_no_such_dependency' (install the project's dependencies in this environment)")
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "needs_missing.py\", line 2" in err
