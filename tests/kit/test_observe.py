"""The kit's pytest plugin observes the project's tests on the real device: outcomes, the first line of each
error classified with PyTorch's MPS texts, the operators the CPU-fallback warning names. It changes nothing."""

import json
import subprocess
import sys

from mpsready.record.mps import FALLBACK_WARNING, FLOAT64_REFUSAL, NOT_IMPLEMENTED

TESTS = f'''
import warnings
import pytest

def test_ok():
    assert 1 + 1 == 2

def test_missing_kernel():
    raise NotImplementedError({NOT_IMPLEMENTED.format(op="aten::_ctc_loss.Tensor")!r})

def test_float64():
    raise TypeError({FLOAT64_REFUSAL!r})

def test_fallback():
    warnings.warn({FALLBACK_WARNING.format(op="aten::sin")!r}, UserWarning)

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass
'''


def test_observer_writes_each_outcome_and_the_mps_texts(tmp_path):
    (tmp_path / "test_model.py").write_text(TESTS)
    out = tmp_path / "res" / "tests.json"
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "mpsready.kit.observe", "--kit-observe",
                          str(out), "-p", "no:cacheprovider", str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert res.returncode == 1, res.stdout  # the tests' own outcome: two failures, untouched
    doc = json.loads(out.read_text())
    assert doc["schema"] == {"name": "mpsready.kit.tests", "version": 1} and doc["basis"] == "observed"
    assert doc["counts"] == {"failed": 2, "passed": 2, "skipped": 1}
    tests = {t["nodeid"].split("::")[1]: t for t in doc["tests"]}
    assert (tests["test_missing_kernel"]["exception"], tests["test_missing_kernel"]["mps_kind"],
            tests["test_missing_kernel"]["op"]) == ("NotImplementedError", "op_not_implemented",
                                                    "aten::_ctc_loss.Tensor")
    assert (tests["test_float64"]["exception"], tests["test_float64"]["mps_kind"]) == ("TypeError", "float64_refused")
    assert tests["test_float64"]["message"] == FLOAT64_REFUSAL
    assert (tests["test_ok"]["outcome"], tests["test_skipped"]["outcome"]) == ("passed", "skipped")
    assert [f["op"] for f in doc["fallbacks"]] == ["aten::sin"]
    assert doc["fallbacks"][0]["first_test"].endswith("test_model.py::test_fallback")


MARKED = '''
import pytest

@pytest.mark.mps_mac
def test_marked():
    pass

@pytest.mark.not_mac(reason="needs CUDA")
def test_alias():
    pass

def test_plain():
    pass
'''


def test_the_observer_declares_and_keeps_mpsready_markers_without_the_installed_plugin(tmp_path):
    # On the Mac the kit runs mpsready from PYTHONPATH: the pytest11 entry point is absent (here: disabled). A
    # suite using mps_mac under --strict-markers failed to collect there (exit 2, no test observed).
    (tmp_path / "test_marked.py").write_text(MARKED)
    out = tmp_path / "tests.json"
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:mpsready.pytest_plugin", "--strict-markers",
                          "-p", "mpsready.kit.observe", "--kit-observe", str(out), "-p", "no:cacheprovider",
                          str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    tests = {t["nodeid"].split("::")[1]: t for t in json.loads(out.read_text())["tests"]}
    assert {k: (t["outcome"], t["markers"]) for k, t in tests.items()} == {
        "test_marked": ("passed", ["mps_mac"]), "test_alias": ("passed", ["mps_not_mac"]),
        "test_plain": ("passed", [])}
