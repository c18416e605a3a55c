"""``--mps-json`` written safely (issue 34 items 2 and 5): through a fresh temporary file (never a fixed
``NAME.tmp`` a planted link could redirect), a folder refused before any test, and a document with a failed
gate on disk even when a test ends the process with ``os._exit`` after a predicted Mac failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytest.importorskip("torch")

SRC = Path(__file__).parents[2] / "src"

EXITS = '''\
import os

import torch


def test_float64_then_exit():
    try:
        torch.ones(3, dtype=torch.float64, device="mps")
    except TypeError:
        pass
    os._exit(0)
'''

CLEAN = '''\
def test_clean():
    assert True
'''


@pytest.fixture
def env(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("PYTORCH_ENABLE_MPS_FALLBACK", raising=False)
    return pytester


def _run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider", *args)


def test_os_exit_after_a_predicted_failure_leaves_a_failed_gate(env):
    env.makepyfile(test_exits=EXITS)
    res = _run(env, "--mps-emulate=2.5", "--mps-json=doc.json")
    assert res.ret == 0  # os._exit(0): the exit code is the test's; the document is what CI reads
    doc = json.loads((env.path / "doc.json").read_text())
    assert doc["session_finished"] is False
    assert doc["gate"] == {"fail_on": "mac-failure", "failed": True, "allow_empty": False,
                           "reason": "1 test(s) with a predicted Mac failure; the test process ended (os._exit(0)) "
                                     "before the session finished"}
    assert [(t["nodeid"], t["mac"], [f["kind"] for f in t["failures"]]) for t in doc["tests"]] == \
        [("test_exits.py::test_float64_then_exit", "mac_failure", ["dtype"])]


def test_a_finished_session_says_so(env):
    env.makepyfile(test_clean=CLEAN)
    res = _run(env, "--mps-emulate=2.5", "--mps-json=doc.json")
    assert res.ret == 0
    doc = json.loads((env.path / "doc.json").read_text())
    assert (doc["session_finished"], doc["gate"]["failed"]) == (True, False)
    assert sorted(p.name for p in env.path.iterdir() if "doc.json" in p.name) == ["doc.json"]


def test_a_planted_link_at_the_old_fixed_temporary_name_is_not_written_through(env, tmp_path):
    env.makepyfile(test_clean=CLEAN)
    victim = tmp_path / "victim.txt"
    victim.write_text("theirs")
    os.symlink(victim, env.path / "doc.json.tmp")
    res = _run(env, "--mps-emulate=2.5", "--mps-json=doc.json")
    assert res.ret == 0
    assert victim.read_text() == "theirs"
    assert json.loads((env.path / "doc.json").read_text())["session_finished"] is True


def test_a_folder_for_the_document_is_a_usage_error_before_any_test(env):
    env.makepyfile(test_clean=CLEAN)
    (env.path / "out").mkdir()
    res = _run(env, "--mps-emulate=2.5", "--mps-json=out")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: --mps-json out: cannot write: Is a directory" in res.stderr.lines
    assert not (env.path / "out.tmp").exists() and list((env.path / "out").iterdir()) == []
    assert "test_clean" not in res.stdout.str()
