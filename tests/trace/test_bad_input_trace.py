"""``mpsready trace`` on ENTRYs whose module raises or exits at import, and on odd --from-json input."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from mpsready.cli import main  # noqa: E402


def build_stage(capsys):
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    doc = json.loads(cap.out)
    return doc["stages"][0], [f["code"] for f in doc["findings"]]


def test_module_that_raises_at_import_is_an_input_error(tmp_path, capsys):
    # The trace CLI cannot trace anything: exit 2 (input error), never 1 (findings). `check` records the
    # same failure as a failed build stage instead (tests/report), since there it is evidence.
    (tmp_path / "boom.py").write_text("raise RuntimeError('boom at import')\n\ndef step():\n    pass\n")
    assert main(["trace", f"{tmp_path / 'boom.py'}:step", "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert f"importing ENTRY {tmp_path / 'boom.py'}:step raised RuntimeError: boom at import" in err


def test_module_that_exits_at_import_is_an_input_error(tmp_path, capsys):
    # a training script that parses its arguments at import exits; it used to exit 3, printing nothing
    (tmp_path / "script.py").write_text("import sys\nsys.exit(3)\n\ndef step():\n    pass\n")
    assert main(["trace", f"{tmp_path / 'script.py'}:step", "--format", "json"]) == 2
    assert "the module called sys.exit(3) while being imported" in capsys.readouterr().err


def test_library_call_records_an_import_failure_as_a_failed_build(tmp_path):
    from mpsready.trace.api import trace_entry

    (tmp_path / "boom.py").write_text("raise RuntimeError('boom at import')\n\ndef step():\n    pass\n")
    result = trace_entry(f"{tmp_path / 'boom.py'}:step")
    build = result.to_dict()["trace"]["stages"][0]
    assert (build["stage"], build["status"], build["error_type"], build["error"]) == (
        "build", "failed", "RuntimeError", "boom at import")
    assert [f.code for f in result.findings] == ["OPS108"]


def test_step_that_calls_sys_exit(tmp_path, capsys):
    (tmp_path / "quits.py").write_text("import sys\n\ndef step():\n    sys.exit(5)\n")
    assert main(["trace", f"{tmp_path / 'quits.py'}:step", "--format", "json"]) == 0  # used to exit 5
    build, _ = build_stage(capsys)
    assert (build["status"], build["error_type"], build["error"]) == ("failed", "SystemExit", "the step called sys.exit(5)")


def test_missing_function_is_still_a_usage_error(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("def step():\n    pass\n")
    assert main(["trace", f"{tmp_path / 'ok.py'}:nope"]) == 2
    assert capsys.readouterr().err == f"mpsready trace: error: {tmp_path / 'ok.py'} has no attribute 'nope'\n"


def test_from_json_nested_too_deeply(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert main(["trace", "--from-json", str(deep)]) == 2  # used to raise RecursionError
    assert capsys.readouterr().err == (f"mpsready trace: error: cannot read trace {deep}: maximum recursion depth "
                                       "exceeded while decoding a JSON array from a unicode string\n")


def saved_trace(tmp_path, capsys, change):
    assert main(["trace", "tests.record.entries:small_cnn",
                 "--format", "json", "--output", str(tmp_path / "t.json")]) == 0
    capsys.readouterr()
    doc = json.loads((tmp_path / "t.json").read_text())
    change(doc)
    (tmp_path / "t.json").write_text(json.dumps(doc))
    return tmp_path / "t.json"


@pytest.mark.parametrize("change, why", [
    (lambda d: d.__setitem__("trace", [1]), "'trace' must be an object, not a JSON list"),
    (lambda d: d["trace"].__setitem__("stages", [{"stage": 5}]),
     "trace stage 1 must be an object with 'stage' and 'status' strings"),  # used to raise KeyError in the render
    (lambda d: d["trace"].__setitem__("entry", None), "trace entry must be a string"),
    (lambda d: d["trace"].pop("device"), "no 'device' field"),
])
def test_from_json_of_the_wrong_shape(tmp_path, capsys, change, why):
    path = saved_trace(tmp_path, capsys, change)
    assert main(["trace", "--from-json", str(path)]) == 2
    assert capsys.readouterr().err == f"mpsready trace: error: cannot read trace {path}: {why}\n"


def test_from_json_with_a_target_that_is_not_an_object(tmp_path, capsys):
    path = saved_trace(tmp_path, capsys, lambda d: d.__setitem__("target", [1]))
    assert main(["trace", "--from-json", str(path), "--format", "json"]) == 0  # used to raise AttributeError
    assert json.loads(capsys.readouterr().out)["target"]["torch"] == "2.13.0"


def test_from_json_that_is_a_named_pipe_is_a_usage_error_not_a_hang(tmp_path, capsys):
    # issue 34 round 5: open() of a FIFO waited for a writer for ever
    import os

    from mpsready.cli import main

    os.mkfifo(tmp_path / "t.json")
    assert main(["trace", "--from-json", str(tmp_path / "t.json")]) == 2
    assert capsys.readouterr().err == (f"mpsready trace: error: cannot read trace {tmp_path / 't.json'}: "
                                       f"{tmp_path / 't.json'} is a named pipe, not a regular file\n")
