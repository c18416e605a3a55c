"""The pytest plugin (``pytest --mps-emulate``) on a small suite run by pytester in a subprocess: each test's own
outcome, its verdict on the emulated Mac, the summary, the JSON document, the gate, the markers and fixture,
``mpsready report --tests`` and ``mpsready run -- pytest``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytest.importorskip("torch")

SRC = Path(__file__).parents[2] / "src"

SUITE = '''\
import sys

import pytest
import torch
import torch.nn.functional as F

dev = "mps" if torch.backends.mps.is_available() else "cpu"


def test_clean():
    x = torch.ones(3, device=dev)
    assert (x * 2).sum().item() == 6.0


def test_cuda():
    x = torch.ones(3).cuda()
    assert x.sum().item() == 3.0


def test_float64():
    x = torch.ones(3, dtype=torch.float64, device=dev)
    assert x.sum().item() == 3.0


def test_ctc():
    logits = torch.randn(30, 2, 5, device=dev, requires_grad=True)
    targets = torch.randint(1, 5, (2, 8), device=dev)
    lens = torch.full((2,), 30, dtype=torch.long)
    tl = torch.full((2,), 8, dtype=torch.long)
    loss = F.ctc_loss(logits.log_softmax(-1), targets, lens, tl)
    loss.backward()


def test_cpu_only():
    assert sys.platform == "darwin"  # the Mac's identity in the project's files
    assert torch.ones(2).sum().item() == 2.0


def test_own_bug():
    x = torch.ones(3, device=dev)
    assert x.sum().item() == 4.0


@pytest.mark.mps_not_mac(reason="uses CUDA graphs")
def test_not_mac():
    raise AssertionError("never runs on the emulated Mac")


@pytest.mark.mps_mac
def test_mac_caught():
    try:
        torch.ones(3, dtype=torch.float64, device=dev)
    except TypeError:
        pass


@pytest.mark.mps_mac
def test_mac_clean():
    assert torch.zeros(2, device=dev).device.type == "mps"


def test_caught_unmarked():
    try:
        torch.ones(3, dtype=torch.float64, device=dev)
    except TypeError:
        pass


def test_expect(emulated_mac):
    with emulated_mac.expect_failure(kind="dtype", dtype="float64") as caught:
        torch.ones(2, dtype=torch.float64, device="mps")
    assert (caught.failure["op"], caught.failure["location"]["line"]) == ("aten::ones", 71)
    assert emulated_mac.target["torch"] == "2.5.1"
'''

EXPECTED = {  # nodeid -> (outcome, verdict, failures as (kind, op, dtype, line))
    "test_clean": ("passed", "clean", []),
    "test_cuda": ("failed", "mac_failure", [("cuda_api", None, None, 16)]),
    "test_float64": ("failed", "mac_failure", [("dtype", "aten::ones", "float64", 21)]),
    "test_ctc": ("failed", "mac_failure", [("missing", "aten::_ctc_loss.Tensor", "float32", 30)]),
    "test_cpu_only": ("passed", "no_mps", []),
    "test_own_bug": ("failed", "inconclusive", []),
    "test_not_mac": ("skipped", "not_run", []),
    "test_mac_caught": ("failed", "mac_failure", [("dtype", "aten::ones", "float64", 52)]),
    "test_mac_clean": ("passed", "clean", []),
    "test_caught_unmarked": ("passed", "mac_failure", [("dtype", "aten::ones", "float64", 64)]),
    "test_expect": ("passed", "clean", []),
}


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("PYTORCH_ENABLE_MPS_FALLBACK", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def _run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider", *args)


def _tests(doc):
    return {t["nodeid"].split("::")[1]: (t["outcome"], t["mac"], [(f["kind"], f["op"], f["dtype"],
                                                                   f["location"]["line"]) for f in t["failures"]])
            for t in doc["tests"]}


def _ci_jobs():
    """docs/ci.md's jobs for the plugin: (GitHub Actions job, GitLab job, the gate command, the report command)."""
    import re

    import yaml

    doc = (SRC.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)]
    github, gitlab = blocks[3]["jobs"]["tests-on-emulated-mac"], blocks[4]["tests-on-emulated-mac"]
    runs = [s["run"] for s in github["steps"] if "run" in s]
    return github, gitlab, runs[1], runs[2].split(" >> ")[0]


def test_suite_on_the_emulated_mac(suite, monkeypatch, capsys):
    """The suite run by the gate command of docs/ci.md's jobs, then their report command on its document."""
    import shlex

    _github, _gitlab, gate, report_cmd = _ci_jobs()
    argv = shlex.split(gate)
    assert argv[:2] == ["pytest", "--mps-emulate=2.5,14.4"]
    result = _run(suite, *argv[1:], "-v", "-rs")
    out = suite.path / "mpsready-tests.json"
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=5, failed=5, skipped=1)
    text = result.stdout.str()
    # the Mac failures are told apart from the project's own failure (they still count as failed)
    assert [ln.split(" ")[1] for ln in result.stdout.lines if ln.startswith("test_suite.py::")
            and (" FAILED" in ln or " MAC-FAILED" in ln)] == ["MAC-FAILED"] * 3 + ["FAILED", "MAC-FAILED"]
    assert "SKIPPED [1] test_suite.py:44: not_mac: uses CUDA graphs" in text
    assert "predicted Mac failure at test_suite.py:30: kind missing, op aten::_ctc_loss.Tensor, dtype float32; " \
           "predicted fixed in torch 2.14.0" in text
    assert "/mpsready/emulate/" not in text  # the emulator's frames are cut from the tracebacks
    assert "marked mps_mac (must pass on the emulated Mac), but the emulated Mac raised a failure the test caught" in text
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["basis_class"]) == ({"name": "mpsready.pytest", "version": 1}, "predicted")
    assert (doc["target"]["torch"], doc["target"]["macos"], doc["target"]["fallback"]) == ("2.5.1", "14.4", False)
    assert _tests(doc) == EXPECTED
    s = doc["summary"]
    assert {k: s[k] for k in ("tests", "clean", "mac_failure", "inconclusive", "no_mps", "not_run", "fallback")} == {
        "tests": 11, "clean": 3, "mac_failure": 5, "inconclusive": 1, "no_mps": 1, "not_run": 1, "fallback": 0}
    assert [(c["kind"], c["op"], c["dtype"], c["tests"], c["first"].split("::")[1]) for c in s["by_cause"]] == [
        ("dtype", "aten::ones", "float64", 3, "test_float64"), ("cuda_api", None, None, 1, "test_cuda"),
        ("missing", "aten::_ctc_loss.Tensor", "float32", 1, "test_ctc")]
    assert doc["gate"] == {"fail_on": "mac-failure", "allow_empty": False, "failed": True,
                           "reason": "5 test(s) with a predicted Mac failure"}
    assert doc["collection_errors"] == [] and doc["summary"]["collection_errors"] == 0
    by_id = {t["nodeid"].split("::")[1]: t for t in doc["tests"]}
    assert [t for t in by_id if by_id[t]["failed_by_mac"]] == ["test_cuda", "test_float64", "test_ctc",
                                                               "test_mac_caught"]
    assert by_id["test_not_mac"]["markers"] == ["mps_not_mac"] and by_id["test_mac_clean"]["markers"] == ["mps_mac"]
    # the summary table
    assert "│ clean on the emulated Mac                  │     3 │" in text
    assert "│ dtype    │ aten::ones             │ float64 │     3 │ test_suite.py:21 │ test_suite.py::test_float64 │" \
        in text
    assert "mpsready gate (--mps-fail-on=mac-failure): failed: 5 test(s) with a predicted Mac failure" in text

    # mpsready report --tests: predicted evidence for checklist item 4, never a pass
    from mpsready.report.checklist import item_step
    from mpsready.report.evidence import Evidence
    from mpsready.report.evidence import tests as tests_ev

    item = item_step(Evidence(tests=tests_ev.load(out)))
    assert (item.label, item.summary) == (
        "failed (predicted)", ("predicted to fail on MPS: aten::ones (float64) in 3 tests (first at test_suite.py:21), "
                               "cuda_api in 1 test (first at test_suite.py:16), aten::_ctc_loss.Tensor (float32) in 1 "
                               "test (first at test_suite.py:30) (no MPS run observed)"))
    assert item.workaround == (
        "aten::ones at test_suite.py:21: cast the float64 tensors to float32 before they reach the device; cuda_api at "
        "test_suite.py:16: replace the CUDA-only calls by device-agnostic ones (.to(device), torch.accelerator.*); "
        "aten::_ctc_loss.Tensor at test_suite.py:30: upgrade PyTorch to >= 2.14.0 (mpsready run --torch 2.14 checks "
        "it) or PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU (cost: each call runs on the CPU, its tensors copied "
        "off the device and back; mpsready run --fallback predicts its share of time)")
    import jsonschema

    from mpsready.report.build import build_report
    from mpsready.report.formats import json as json_fmt

    report = json.loads(json_fmt.render(build_report(Evidence(tests=tests_ev.load(out)))))
    jsonschema.validate(report, json.loads((SRC / "mpsready/report/schema/report-v1.schema.json").read_text()))
    assert (report["stages_present"], report["checklist"][3]["evidence"][0]["kind"]) == (["tests"], "tests")
    assert item.evidence[0].text == ("emulated Mac tests: test_suite.py::test_cuda: cuda_api at test_suite.py:16: "
                                     "Torch not compiled with CUDA enabled")
    # the jobs' report command (its exit status is the verdict's: below runs_on_mac, so the job must not gate on it)
    from mpsready.cli import main

    monkeypatch.chdir(suite.path)
    capsys.readouterr()
    assert main(shlex.split(report_cmd)[1:]) == 1
    assert "| 4 | representative step on MPS (critical) | **FAIL (predicted)** | predicted | predicted to fail on MPS: " \
        "aten::ones (float64) in 3 tests (first at test_suite.py:21)," in capsys.readouterr().out


def test_gate_levels():
    from mpsready.pytest_plugin.document import gate

    summary = {"tests": 3, "mac_failure": 0, "wrong_result": 0, "fallback": 2}
    assert gate(summary, "mac-failure") == {"fail_on": "mac-failure", "allow_empty": False, "failed": False,
                                            "reason": None}
    assert gate(summary, "fallback") == {"fail_on": "fallback", "allow_empty": False, "failed": True,
                                         "reason": "2 test(s) with CPU fallbacks"}
    assert gate({**summary, "mac_failure": 1}, "never")["failed"] is False
    assert gate({**summary, "wrong_result": 1}, "mac-failure")["reason"] == "1 test(s) with a predicted wrong result"


def test_off_without_the_option(pytester, monkeypatch):
    """Without --mps-emulate: markers registered (strict markers pass), not_mac runs, emulated_mac skips, and
    the plugin imports neither torch nor the emulator."""
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_plain='''
import sys
import pytest

@pytest.mark.not_mac
def test_not_mac():
    assert "torch" not in sys.modules and "mpsready.emulate" not in sys.modules

@pytest.mark.mac
def test_mac():
    pass

def test_fixture(emulated_mac):
    pass
''')
    result = pytester.runpytest_subprocess("-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider",
                                           "--strict-markers", "-rs")
    result.assert_outcomes(passed=2, skipped=1)
    assert "SKIPPED [1] test_plain.py:12: emulated_mac needs pytest --mps-emulate" in result.stdout.str()


def test_a_bare_flag_leaves_the_next_word_a_path():
    from mpsready.pytest_plugin import _bare_flag

    args = ["--mps-emulate", "tests/", "-q"]
    assert (_bare_flag(args), args) == (True, ["--mps-emulate=", "tests/", "-q"])
    args = ["--mps-emulate", "2.5,14.4", "tests/"]
    assert (_bare_flag(args), args) == (False, ["--mps-emulate", "2.5,14.4", "tests/"])


def test_xdist_roles(monkeypatch):
    from types import SimpleNamespace

    from mpsready.pytest_plugin import xdist_role

    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert [xdist_role(SimpleNamespace(numprocesses=n)) for n in (None, 0, "0", 4, "auto")] == \
        [None, None, None, "controller", "controller"]
    assert xdist_role(SimpleNamespace()) is None
    assert xdist_role(SimpleNamespace(numprocesses=None, tx=["popen"], dist="load")) == "controller"
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert xdist_role(SimpleNamespace(numprocesses=2)) == "worker"
    # a pytest started by a test inside a worker inherits the variable but is no worker
    assert xdist_role(SimpleNamespace(numprocesses=None)) is None


def test_xdist_workers_give_the_verdicts_of_one_process(suite):
    """``-n 2``: each worker emulates the Mac, the controller merges their verdicts into one document: the
    per-test verdicts (in collection order), summary, target and gate of the one-process run
    (:func:`test_suite_on_the_emulated_mac` asserts the same ``EXPECTED`` with ``-n`` absent), the Mac failures
    still shown MAC-FAILED."""
    pytest.importorskip("xdist")
    result = _run(suite, "--mps-emulate=2.5,14.4", "--mps-json=doc.json", "-n", "2", "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=5, failed=5, skipped=1)
    assert sum(" MAC-FAILED " in ln for ln in result.stdout.lines) == 4, result.stdout.str()
    assert "mpsready gate (--mps-fail-on=mac-failure): failed: 5 test(s) with a predicted Mac failure" in \
        result.stdout.str()
    doc = json.loads((suite.path / "doc.json").read_text())
    assert _tests(doc) == EXPECTED
    assert [t["nodeid"].split("::")[1] for t in doc["tests"]] == list(EXPECTED)
    s = doc["summary"]
    assert {k: s[k] for k in ("tests", "clean", "mac_failure", "inconclusive", "no_mps", "not_run", "fallback")} == {
        "tests": 11, "clean": 3, "mac_failure": 5, "inconclusive": 1, "no_mps": 1, "not_run": 1, "fallback": 0}
    assert doc["gate"] == {"fail_on": "mac-failure", "allow_empty": False, "failed": True,
                           "reason": "5 test(s) with a predicted Mac failure"}
    assert (doc["target"]["torch"], doc["target"]["macos"], doc["target"]["fallback"]) == ("2.5.1", "14.4", False)
    assert (doc["session_finished"], doc["workers"]) == (True, {"lost": [], "tests_not_judged": 0})


def test_xdist_worker_that_dies_fails_the_gate(pytester, monkeypatch):
    """A test ending its worker (``os._exit``) loses that worker's verdicts: its tests are ``inconclusive``
    (``worker_lost``) and the gate fails naming the worker, even with ``--mps-fail-on never``."""
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_die='''
import os
import torch

def test_a_clean():
    assert torch.ones(2, device="mps").sum().item() == 2.0

def test_b_dies():
    os._exit(0)
''')
    result = _run(pytester, "--mps-emulate=2.5,14.4", "--mps-json=doc.json", "--mps-fail-on=never", "-n", "1",
                  "-p", "no:randomly", "--max-worker-restart=0")
    doc = json.loads((pytester.path / "doc.json").read_text())
    assert result.ret != 0
    by_id = {t["nodeid"].split("::")[1]: (t["outcome"], t["mac"], t.get("worker_lost", False)) for t in doc["tests"]}
    assert by_id == {"test_a_clean": ("passed", "inconclusive", True), "test_b_dies": ("failed", "inconclusive", True)}
    assert doc["gate"]["failed"] is True
    assert doc["gate"]["reason"].startswith("2 test(s) not judged: pytest-xdist worker(s) ended before handing over "
                                            "their verdicts (gw0: ")
    assert doc["workers"]["tests_not_judged"] == 2


def test_a_release_without_a_table_is_refused():
    from mpsready.pytest_plugin import _parse_target

    assert _parse_target("2.5,14.4") == ("2.5", "14.4")
    with pytest.raises(pytest.UsageError) as err:
        _parse_target("1.9")
    assert str(err.value).endswith("; --mps-emulate takes TORCH[,MACOS], e.g. --mps-emulate=2.5,14.4 (got '1.9')")
    with pytest.raises(pytest.UsageError, match=r"^--mps-emulate: 'x' is not a macOS version such as 14.4$"):
        _parse_target("2.5,x")


def test_mpsready_run_pytest_with_the_fallback(suite):
    """``mpsready run --fallback -- pytest ARGS``: the program is pytest, the plugin attached to the run's emulator
    (PYTORCH_ENABLE_MPS_FALLBACK=1 there); ``--mps-fail-on=never`` leaves a caught Mac failure to the document."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PYTORCH_ENABLE_MPS_FALLBACK", None)
    proc = subprocess.run([sys.executable, "-m", "mpsready", "run", "--torch", "2.13", "--fallback", "--format", "json",
                           "-o", "run.json", "--", "pytest", "-p", "no:cacheprovider", "-k",
                           "ctc or caught_unmarked or clean or cuda", "--mps-fail-on=never", "--mps-json=fb.json"],
                          check=False, cwd=suite.path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # test_cuda fails: pytest exits 1, the run has a Mac failure
    # the summary line is cut to the terminal's width (COLUMNS, which another test may have set): its start is fixed
    assert "MAC-FAILED test_suite.py::test_cuda - AssertionError: Torch not compiled with" in proc.stdout
    assert "1 failed, 4 passed, 6 deselected" in proc.stdout
    doc = json.loads((suite.path / "run.json").read_text())
    assert (doc["outcome"], doc["program"]["kind"], doc["program"]["target"]) == ("failed", "module", "pytest")
    # the failure the emulator raised (caught by test_caught_unmarked), then the one it only marked (test_cuda)
    assert [(f["kind"], f["op"], f["exception"], f["location"]["line"], f["mac"]) for f in doc["failures"]] == [
        ("dtype", "aten::ones", "TypeError", 64, True), ("cuda_api", None, "AssertionError", 16, True)]
    tests = json.loads((suite.path / "fb.json").read_text())
    assert tests["target"]["fallback"] is True
    assert {k: v[:2] for k, v in _tests(tests).items()} == {
        "test_clean": ("passed", "clean"), "test_cuda": ("failed", "mac_failure"), "test_ctc": ("passed", "fallback"),
        "test_mac_clean": ("passed", "clean"), "test_caught_unmarked": ("passed", "mac_failure")}
    ctc = next(t for t in tests["tests"] if t["nodeid"].endswith("test_ctc"))
    assert [(f["op"], f["calls"], f["location"]["line"]) for f in ctc["fallbacks"]] == [
        ("aten::_ctc_loss.Tensor", 1, 30), ("aten::_ctc_loss_backward.Tensor", 1, 31)]
    assert tests["gate"] == {"fail_on": "never", "allow_empty": False, "failed": False, "reason": None}
    assert tests["summary"]["fallback_ops"] == {"aten::_ctc_loss.Tensor": 1, "aten::_ctc_loss_backward.Tensor": 1}


def test_entry_point_is_declared():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"mpsready.pytest_plugin": "mpsready.pytest_plugin"}


def test_pytest_in_the_program_words():
    from mpsready.run.command import parse_program

    prog = parse_program(["--", "pytest", "-q", "tests/"], cwd="/tmp")
    assert (prog.kind, prog.target, prog.argv, prog.root) == ("module", "pytest", ("pytest", "-q", "tests/"), "/tmp")


def test_ci_jobs_in_the_docs():
    """docs/ci.md: the GitHub Actions and GitLab jobs of the plugin run the same gate and report commands (the
    suite test above runs them); the report step never fails the job, the documents are kept."""
    github, gitlab, gate, report_cmd = _ci_jobs()
    assert [s.get("continue-on-error") for s in github["steps"] if s.get("name") == "Checklist"] == [True]
    assert gitlab["artifacts"] == {"when": "always", "paths": ["mpsready-tests.json", "mpsready-tests.md"]}
    assert gitlab["script"][2] == gate and gitlab["after_script"] == [f"{report_cmd} > mpsready-tests.md"]
    assert report_cmd == "mpsready report --tests mpsready-tests.json --format md"


# ------------------------------------------------------------------------------------------- the gate (issue 31)
EXT_MODULE = '''\
import torch
import fused_cuda_ext  # a CUDA extension built at import: fails on a Mac too


def test_fused():
    assert fused_cuda_ext.add(torch.ones(2)).sum().item() == 4.0
'''
OK_MODULE = '''\
import torch


def test_ok():
    assert torch.ones(2, device="mps").sum().item() == 2.0
'''
EXT_ERROR = {"module": "test_ext.py", "message": "ModuleNotFoundError: No module named 'fused_cuda_ext'"}


def test_gate_fails_on_a_collection_error(pytester, monkeypatch):
    """A module that fails at import never ran: the gate fails (even at --mps-fail-on=never), the document records
    the module and its error, and ``report --tests`` says "not run: collection error" under item 4."""
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_ext=EXT_MODULE, test_ok=OK_MODULE)
    result = _run(pytester, "--mps-emulate=2.5,14.4", "--mps-json=t.json", "--mps-fail-on=never",
                  "--continue-on-collection-errors")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=1)
    doc = json.loads((pytester.path / "t.json").read_text())
    assert doc["collection_errors"] == [EXT_ERROR]
    assert (doc["summary"]["tests"], doc["summary"]["clean"], doc["summary"]["collection_errors"]) == (1, 1, 1)
    assert doc["gate"] == {"fail_on": "never", "allow_empty": False, "failed": True,
                           "reason": "1 test module(s) not run (collection error): test_ext.py"}
    text = result.stdout.str()
    assert "mpsready gate (--mps-fail-on=never): failed: 1 test module(s) not run (collection error): test_ext.py" \
        in text
    assert "│ test_ext.py │ ModuleNotFoundError: No module named 'fused_cuda_ext' │" in text

    from mpsready.report.checklist import item_step
    from mpsready.report.evidence import Evidence
    from mpsready.report.evidence import tests as tests_ev

    ev = tests_ev.load(pytester.path / "t.json")
    assert ev.collection_errors == [("test_ext.py", "ModuleNotFoundError: No module named 'fused_cuda_ext'")]
    item = item_step(Evidence(tests=ev))
    assert (item.label, item.summary) == (
        "not checked", "the step itself failed here (1 test module not run: collection error), for a reason that "
                       "does not involve CUDA: nothing about MPS can be concluded until it runs")
    assert [(e.text, e.basis) for e in item.evidence] == [
        ("emulated Mac tests: test_ext.py not run: collection error: ModuleNotFoundError: No module named "
         "'fused_cuda_ext'", None)]
    assert item.next_step == ("make the test modules import here (pytest --mps-emulate --collect-only shows each "
                              "error), then run the suite again")


def test_gate_fails_on_a_suite_that_never_ran(pytester, monkeypatch):
    """The case of issue 31: every module fails at import, pytest stops (exit 2), "total 0" must not read "passed"."""
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_ext=EXT_MODULE)
    result = _run(pytester, "--mps-emulate=2.5,14.4", "--mps-json=t.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    doc = json.loads((pytester.path / "t.json").read_text())
    assert doc["collection_errors"] == [EXT_ERROR]
    assert doc["gate"]["reason"] == ("1 test module(s) not run (collection error): test_ext.py; no test ran on the "
                                     "emulated Mac (nothing collected; --mps-allow-empty accepts an empty suite)")
    assert "mpsready gate (--mps-fail-on=mac-failure): failed: 1 test module(s) not run" in result.stdout.str()


def test_gate_on_an_empty_suite(pytester, monkeypatch):
    """Nothing collected: the gate fails unless --mps-allow-empty (pytest's own status for it, 5, stays)."""
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_ok=OK_MODULE)
    result = _run(pytester, "--mps-emulate=2.5,14.4", "--mps-json=t.json", "-k", "nothing_matches")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    doc = json.loads((pytester.path / "t.json").read_text())
    assert (doc["collection_errors"], doc["gate"]) == ([], {
        "fail_on": "mac-failure", "allow_empty": False, "failed": True,
        "reason": "no test ran on the emulated Mac (nothing collected; --mps-allow-empty accepts an empty suite)"})
    result = _run(pytester, "--mps-emulate=2.5,14.4", "--mps-json=t.json", "-k", "nothing_matches",
                  "--mps-allow-empty")
    doc = json.loads((pytester.path / "t.json").read_text())
    assert doc["gate"] == {"fail_on": "mac-failure", "allow_empty": True, "failed": False, "reason": None}
    assert "mpsready gate (--mps-fail-on=mac-failure): passed" in result.stdout.str()


def test_collection_message():
    from mpsready.pytest_plugin import collection_message

    text = ("ImportError while importing test module '/p/test_ext.py'.\nTraceback:\ntest_ext.py:2: in <module>\n"
            "    import fused_cuda_ext\nE   ModuleNotFoundError: No module named 'fused_cuda_ext'\n")
    assert collection_message(text) == "ModuleNotFoundError: No module named 'fused_cuda_ext'"
    assert collection_message("SyntaxError somewhere\n\n") == "SyntaxError somewhere"
    assert collection_message("") == "collection failed"


def test_ini_options_and_the_deprecated_marker_names(pytester, monkeypatch):
    """Issue 37: every flag has an ini option (the command line wins), and `mac`/`not_mac` still work as deprecated
    aliases of `mps_mac`/`mps_not_mac`, with a deprecation warning."""
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makeini("[pytest]\nmps_emulate = 2.5,14.4\nmps_json = from-ini.json\nmps_fail_on = never\n")
    pytester.makepyfile(test_old="""
import pytest
import torch

@pytest.mark.not_mac(reason="old name")
def test_skipped_on_the_mac():
    pass

@pytest.mark.mac
def test_on_the_mac():
    torch.ones(2, device="mps").sum()
""")
    result = pytester.runpytest_subprocess("-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider",
                                           "--strict-markers", "-rs", "-W", "default")
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert "SKIPPED [1] test_old.py:4: not_mac: old name" in out
    assert "@pytest.mark.not_mac is deprecated: use @pytest.mark.mps_not_mac" in out
    assert "@pytest.mark.mac is deprecated: use @pytest.mark.mps_mac" in out
    doc = json.loads((pytester.path / "from-ini.json").read_text())
    assert doc["target"]["torch"] == "2.5.1" and doc["gate"]["fail_on"] == "never"  # 2.5 read as its last patch
    assert sorted(t["markers"] for t in doc["tests"]) == [["mps_mac"], ["mps_not_mac"]]
    # the command line wins over the ini file
    pytester.runpytest_subprocess("-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider",
                                  "--mps-fail-on=fallback", "--mps-json=cli.json")
    assert json.loads((pytester.path / "cli.json").read_text())["gate"]["fail_on"] == "fallback"


def test_the_plugin_imports_under_a_pluggy_without_new_style_wrappers(monkeypatch):
    """pluggy < 1.1 knows only `hookwrapper=True`: `hookimpl(wrapper=True)` raised TypeError there at import,
    breaking every pytest run of an environment that merely had mpsready installed."""
    import importlib

    import mpsready.pytest_plugin as plugin

    real = pytest.hookimpl

    def old_hookimpl(function=None, *, hookwrapper=False, optionalhook=False, tryfirst=False, trylast=False,
                     specname=None):
        return real(function, hookwrapper=hookwrapper, optionalhook=optionalhook, tryfirst=tryfirst,
                    trylast=trylast, specname=specname)

    monkeypatch.setattr(pytest, "hookimpl", old_hookimpl)
    try:
        importlib.reload(plugin)  # raised TypeError: unexpected keyword argument 'wrapper'
    finally:
        monkeypatch.undo()
        importlib.reload(plugin)


def test_the_plugin_is_inert_under_a_pytest_older_than_its_floor(monkeypatch):
    """pytest 6.2 has no ``pytest.StashKey``: the module once built one at import, so merely having mpsready
    installed broke every pytest run there (AttributeError, seen in a venv with pytest 6.2.5 and pluggy 0.13.1;
    scripts/check_plugin_hosts.sh repeats it). Now it imports, and --mps-emulate is a usage error naming the
    floor."""
    import importlib

    import mpsready.pytest_plugin as plugin

    monkeypatch.delattr(pytest, "StashKey")
    monkeypatch.setattr(pytest, "__version__", "6.2.5")
    try:
        importlib.reload(plugin)  # raised AttributeError: module 'pytest' has no attribute 'StashKey'
        assert plugin._WATCH is None
        with pytest.raises(pytest.UsageError) as err:
            plugin._check_host()
        assert str(err.value) == ("--mps-emulate needs pytest >= 7.0 (this is pytest 6.2.5): "
                                  "pip install 'mpsready[pytest]'")
    finally:
        monkeypatch.undo()
        importlib.reload(plugin)


def test_mps_emulate_without_torch_is_a_usage_error(monkeypatch):
    import importlib.util

    from mpsready.pytest_plugin import _check_host

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(pytest.UsageError) as err:
        _check_host()
    assert str(err.value) == ("--mps-emulate needs PyTorch in this environment (the emulated Mac runs your tests "
                              "with it): pip install 'mpsready[torch]'")
