"""``mpsready run --torch 2.3,2.13`` / ``--torch all``: one child per release, one table, one JSON document."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError
from mpsready.run import matrix
from mpsready.run.render import render_matrix_outputs, render_matrix_terminal

from .helpers import emulate, write

# aten::avg_pool3d.out has no MPS kernel in the shipped tables up to 2.8.0 and one from 2.9.0
# (torchgen/packaged/ATen/native/native_functions.yaml of the macOS arm64 wheels 2.8.0 and 2.9.1, as the tables
# record): a failure in 2.3, a clean run in 2.13.
# torch.ones, not randn: a random fill of a 5-D tensor before 2.7 is a named wrong result (random-fill-rank-above-4)
POOL = '''\
import torch
x = torch.ones(1, 2, 4, 4, 4, device="mps")
y = torch.nn.functional.avg_pool3d(x, 2)
print("pooled", tuple(y.shape))
'''
NOT_A_TABLE = "no MPS support table for torch 1.0: shipped tables cover 2.2.2 to 2.14.1"


def _schema(name):
    return json.loads(resources.files("mpsready.run").joinpath(f"data/{name}").read_text())


@pytest.fixture(scope="module")
def pool_matrix(tmp_path_factory):
    """One real 2-release matrix through the CLI: JSON to a file, the table on stderr."""
    tmp = tmp_path_factory.mktemp("matrix")
    (tmp / "train.py").write_text(POOL)
    import mpsready

    src = os.path.dirname(os.path.dirname(os.path.abspath(mpsready.__file__)))  # this checkout's, not an install's
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-m", "mpsready", "run", "--torch", "2.13,2.3", "--format", "json",
                        "-o", "m.json", "--", "python", "train.py"], cwd=tmp, capture_output=True, text=True,
                       timeout=300, env=env, check=False)
    return p, json.loads((tmp / "m.json").read_text()), tmp


def _row(text, release):
    return next(line.split() for line in text.splitlines() if line.startswith(release + " "))


def test_table_has_both_rows_with_exact_outcomes(pool_matrix):
    p, doc, _tmp = pool_matrix
    assert p.returncode == 1, p.stderr
    assert p.stdout == ""  # nothing of the program's own output leaks onto stdout
    old, new = (f"{e['seconds']:.1f}" for e in doc["releases"])
    assert _row(p.stderr, "2.3.1") == ["2.3.1", "failed", "missing", "aten::avg_pool3d.out", "(float32);", "fixed",
                                       "in", "2.9.0", "train.py:3", "0", "0", old]
    assert _row(p.stderr, "2.13.0") == ["2.13.0", "completed", "-", "-", "0", "0", new]
    assert "first release where it completes: 2.13.0\n" in p.stderr
    assert "run matrix: m.json" in p.stderr


def test_program_output_shown_only_for_the_failing_release(pool_matrix):
    p, _doc, _tmp = pool_matrix
    # the user's frames only (issue 38): the emulator's dispatch frames are counted on one line, not shown
    # (issue 39: the dispatch mode no longer runs inside Dynamo's disable shim, whose two frames, torch/_compile.py
    # and torch/_dynamo/eval_frame.py, were counted here; a Mac's traceback of a C++ op has the user's line only)
    head = "--- torch 2.3.1 (failed): program output, last 5 of 5 line(s) ---\n"
    assert head in p.stderr
    block = p.stderr.split(head, 1)[1]
    assert 'File "' in block and "line 3, in <module>" in block
    assert "frames inside PyTorch" not in block and "site-packages" not in block
    assert ("NotImplementedError: The operator 'aten::avg_pool3d.out' is not currently implemented for the MPS "
            "device.") in block
    assert "--- torch 2.13.0" not in p.stderr
    assert "pooled (1, 2, 2, 2, 2)" not in p.stderr


def test_json_validates_and_holds_one_run_document_per_release(pool_matrix):
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource

    _p, doc, _tmp = pool_matrix
    run_schema = _schema("run.schema.json")
    registry = Registry().with_resource(run_schema["$id"], Resource.from_contents(run_schema))
    jsonschema.Draft202012Validator(_schema("run_matrix.schema.json"), registry=registry).validate(doc)
    assert doc["schema"] == {"name": "mpsready.run_matrix", "version": 1}
    assert (doc["basis"], doc["basis_class"], doc["exit_code"]) == ("emulated", "predicted", 1)
    assert doc["target"] == {"torch_requested": "2.13,2.3", "macos": "15.5", "fallback": False}
    assert doc["summary"] == {"releases": ["2.3.1", "2.13.0"],
                              "by_outcome": {"failed": ["2.3.1"], "completed": ["2.13.0"]},
                              "first_completing": "2.13.0"}
    old, new = doc["releases"]
    for entry in (old, new):
        jsonschema.validate(entry["run"], run_schema)
        assert entry["run"]["schema"] == {"name": "mpsready.run", "version": 1}
    assert [(e["torch"], e["torch_requested"], e["outcome"], e["exit_code"], e["run"]["target"]["torch"])
            for e in (old, new)] == [("2.3.1", "2.3", "failed", 1, "2.3.1"), ("2.13.0", "2.13", "completed", 0,
                                                                              "2.13.0")]
    assert old["first_failure"] == {"kind": "missing", "op": "aten::avg_pool3d.out", "dtype": "float32",
                                    "exception": "NotImplementedError", "mac": True, "fixed_in": "2.9.0",
                                    "location": {"path": "train.py", "line": 3, "function": "<module>"}}
    assert new["first_failure"] is None
    assert (old["output"]["shown"], new["output"]) == ("tail", {"lines": 1, "shown": "none", "text": None})
    assert doc["settings"]["jobs"] == min(os.cpu_count() or 1, 2)


def test_no_temporary_file_left_next_to_the_output(pool_matrix):
    _p, _doc, tmp = pool_matrix
    assert sorted(os.listdir(tmp)) == ["m.json", "train.py"]


def test_all_is_every_shipped_minor_at_its_newest_patch():
    from mpsready.ops.api import shipped_versions

    got = matrix.parse_releases("all")
    assert [rel for _req, rel in got] == ["2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1",
                                          "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1"]
    minors = {tuple(v.split(".")[:2]) for v in shipped_versions()}
    assert len(got) == len(minors) and all(req == rel for req, rel in got)
    assert matrix.is_matrix("all") and matrix.is_matrix("2.3,2.13") and not matrix.is_matrix("2.5")
    assert not matrix.is_matrix(None)


def test_duplicates_collapse_and_releases_sort_oldest_first():
    assert matrix.parse_releases("2.13, 2.3,2.3.1,2.13.0,2.3.0") == [("2.3.0", "2.3.0"), ("2.3", "2.3.1"),
                                                                   ("2.13", "2.13.0")]


@pytest.mark.parametrize("arg,msg", [
    ("2.3,foo", "--torch release 'foo': not a version: 'foo'"),
    ("2.3,1.0", "--torch release '1.0': " + NOT_A_TABLE),
    ("1.0", NOT_A_TABLE),  # a single release: the single run's own check
    ("2.3,,2.5", "--torch '2.3,,2.5': an empty release in the list"),
    ("all,2.3", "--torch 'all,2.3': 'all' stands alone"),
    ("2.3,2", "--torch release '2': version '2' needs at least major.minor"),
])
def test_bad_releases_exit_2_naming_the_release(tmp_path, capsys, arg, msg):
    from mpsready.cli import main

    (tmp_path / "t.py").write_text("raise SystemExit('must not run')\n")
    assert main(["run", "--torch", arg, "--", str(tmp_path / "t.py")]) == 2
    assert msg in capsys.readouterr().err


def test_show_output_needs_several_releases(tmp_path, capsys):
    from mpsready.cli import main

    (tmp_path / "t.py").write_text("raise SystemExit('must not run')\n")
    assert main(["run", "--torch", "2.5", "--show-output", "--", str(tmp_path / "t.py")]) == 2
    assert "--show-output goes with several --torch releases" in capsys.readouterr().err


def _rr(release, outcome, code, status=0, fallbacks=(), output="a\nb\n"):
    doc = None if outcome == matrix.NO_RESULT else {
        "outcome": outcome, "exit_code": code, "first_failure": None, "fallbacks": list(fallbacks), "seconds": 0.5,
        "steps": 0, "stop_reason": None}
    return matrix.ReleaseRun(release, release, doc, status, output, 1.0)


@pytest.mark.parametrize("rows,code,first", [
    ([("2.3.1", "failed", 1), ("2.9.1", "completed", 0), ("2.13.0", "completed", 0)], 1, "2.9.1"),
    ([("2.3.1", "inconclusive", 2), ("2.13.0", "stopped", 0)], 2, "2.13.0"),
    ([("2.3.1", matrix.NO_RESULT, None), ("2.13.0", "inconclusive", 2)], 3, None),
    ([("2.3.1", matrix.NO_RESULT, None), ("2.13.0", "failed", 1)], 1, None),
    ([("2.3.1", "completed", 0), ("2.13.0", "stopped", 0)], 0, "2.3.1"),
])
def test_exit_code_rule_and_first_completing(rows, code, first):
    runs = [_rr(rel, out, c, status=-9) for rel, out, c in rows]
    assert (matrix.matrix_exit_code(runs), matrix.first_completing(runs)) == (code, first)


def test_fallback_counts_and_show_output(tmp_path):
    """A real 2.3 document with the fallback on: avg_pool3d runs on the CPU, counted in the table."""
    _r, doc, _o, _e = emulate(write(tmp_path, POOL), torch="2.3", fallback=True)
    doc = json.loads(json.dumps(doc))
    runs = [matrix.ReleaseRun("2.3", "2.3.1", doc, 0, "pooled (1, 2, 2, 2, 2)\n", 1.25),
            matrix.ReleaseRun("2.4", "2.4.1", None, -9, "", 0.5)]
    m = matrix.build_matrix_document(runs, "2.3,2.4", {"macos": "15.5", "fallback": True},
                                     {"kind": "script", "target": "/x/train.py", "argv": ["train.py"], "root": "/x"},
                                     {"keep_going": False, "max_steps": None, "time_limit": None, "jobs": 2},
                                     show_output=True)
    assert [(e["outcome"], e["exit_code"], e["fallback_ops"], e["fallback_calls"]) for e in m["releases"]] == [
        ("completed", 0, 1, 1), ("no_result", 3, 0, 0)]
    assert m["summary"]["first_completing"] == "2.3.1" and m["exit_code"] == 3
    text = render_matrix_terminal(m)
    assert _row(text, "2.3.1") == ["2.3.1", "completed", "-", "-", "1", "(1", "op)", "0",
                                   f"{doc['seconds']:.1f}"]
    assert _row(text, "2.4.1") == ["2.4.1", "no_result", "no", "result", "(child", "status", "-9)", "-", "0", "-",
                                   "-"]
    assert "\x1b[" not in text and "PYTORCH_ENABLE_MPS_FALLBACK=1" in text
    assert render_matrix_outputs(m) == (
        "--- torch 2.3.1 (completed): program output, all 1 line(s) ---\npooled (1, 2, 2, 2, 2)\n"
        "--- torch 2.4.1 (no_result): program output, all 0 line(s) ---\n")


def test_output_written_atomically(tmp_path, monkeypatch):
    from mpsready.output import write_text
    from mpsready.run import cli

    target = tmp_path / "m.json"
    target.write_text("old")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "replace", refuse)
    with pytest.raises(OSError):
        write_text(str(target), "new", atomic=True)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["m.json"]
    monkeypatch.undo()
    write_text(str(target), "new", atomic=True)
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["m.json"]


def test_parse_releases_raises_usage_error():
    with pytest.raises(UsageError, match=r"^--torch release 'foo': not a version: 'foo'$"):
        matrix.parse_releases("2.3,foo")


def test_matrix_table_shows_paths_and_ops_as_written_and_control_characters_escaped():
    # a file name with "[red]" stayed rich markup in the table, and an ESC in it drove the terminal
    ff = {"kind": "op", "op": "aten::foo", "mac": True, "location": {"path": "m[red]od\x1b[2J.py", "line": 3}}
    doc = {"outcome": "failed", "exit_code": 1, "first_failure": ff, "fallbacks": [], "seconds": 0.5, "steps": 0,
           "stop_reason": None}
    m = matrix.build_matrix_document([matrix.ReleaseRun("2.3", "2.3.1", doc, 1, "", 1.0)], "2.3",
                                     {"macos": "15.5", "fallback": False},
                                     {"kind": "script", "target": "/x/t\x07.py", "argv": ["t\x07.py"], "root": "/x"},
                                     {"keep_going": False, "max_steps": None, "time_limit": None, "jobs": 1},
                                     show_output=False)
    text = render_matrix_terminal(m, width=200)
    assert "\x1b" not in text and "\x07" not in text
    assert "m[red]od\\x1b[2J.py:3" in text and "program: t\\x07.py" in text


def test_an_output_shown_for_an_earlier_release_is_named_not_repeated():
    # the demo's train.py fails at the same line on all 13 releases: the same traceback was printed 13 times
    def release(torch, text):
        return {"torch": torch, "outcome": "failed", "output": {"shown": "tail", "text": text, "lines": 2}}

    doc = {"releases": [release("2.2.2", "Trace\nAssertionError\n"), release("2.3.1", "Trace\nAssertionError\n"),
                        release("2.4.1", "other\n"), release("2.5.1", "Trace\nAssertionError\n")]}
    assert render_matrix_outputs(doc) == (
        "--- torch 2.2.2 (failed): program output, last 2 of 2 line(s) ---\nTrace\nAssertionError\n"
        "--- torch 2.3.1 (failed): program output, last 2 of 2 line(s): the same as torch 2.2.2 ---\n"
        "--- torch 2.4.1 (failed): program output, last 2 of 2 line(s) ---\nother\n"
        "--- torch 2.5.1 (failed): program output, last 2 of 2 line(s): the same as torch 2.2.2 ---\n")
