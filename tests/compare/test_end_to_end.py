"""Records written by the real ``mpsready record`` (subprocess, CPU), then compared."""

from __future__ import annotations

from pathlib import Path

import pytest

recorder = pytest.importorskip("mpsready.record.recorder")
pytestmark = pytest.mark.slow

from mpsready.compare import compare_records  # noqa: E402

HERE = Path(__file__).resolve().parent
ENTRY = "tests/compare/e2e_entries.py"
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    d = tmp_path_factory.mktemp("real")

    def rec(name, fn, **kw):
        return recorder.record_entry(f"{ENTRY}:{fn}", device="cpu", steps=2, out=d / name, save_tensors=True,
                                     cwd=str(ROOT), **kw).path

    # four subprocess recordings, about 4.5 s of CPU each (torch import dominates); the functional-dropout
    # ones run the same worker in this process (isolate=False: same record, no torch import each)
    return {"a": rec("a", "cnn"), "ref": rec("ref", "cnn", dtype="float64"),
            "d0": rec("d0", "cnn_dropout", seed=0), "d1": rec("d1", "cnn_dropout", seed=1),
            "f0": rec("f0", "cnn_functional_dropout", seed=0, isolate=False),
            "f1": rec("f1", "cnn_functional_dropout", seed=1, isolate=False),
            "n0": rec("n0", "cnn_functional_no_dropout", seed=0, isolate=False),
            "n1": rec("n1", "cnn_functional_no_dropout", seed=1, isolate=False)}


def test_real_float64_reference_passes(real):
    ref = compare_records(real["ref"], real["a"], trust_checksums=False)
    assert {t.key for t in ref.tensors if t.step == 0} >= {"activation:0#0", "activation:4#0", "loss:loss",
                                                           "grad:4.weight", "param:0.weight"}
    assert ref.ok, [(t.key, t.metrics.max_abs) for t in ref.failed]
    assert {t.dtype_a for t in ref.tensors if t.kind == "activation"} == {"float64"}
    three = compare_records(real["a"], real["a"], reference=real["ref"])
    assert three.summary()["three_way"]["b_worse"] == 0


def test_real_dropout_runs_flagged(real):
    comp = compare_records(real["d0"], real["d1"])
    assert not comp.ok
    assert comp.first_forward.key == "activation:4#0" and comp.first_forward.module_type == "Dropout"
    # the recorder saw the mask being drawn: nn.Dropout -> F.dropout -> bernoulli_ on the CPU (Dropout.cpp)
    assert comp.random_ops == ["aten::bernoulli_.float"]
    assert "NUM105" in {f.code for f in comp.findings}


def test_real_functional_dropout_flagged_from_the_manifest(real):
    """No nn.Dropout module: only the recorder's random_ops can tell compare the runs drew random numbers."""
    from mpsready.record.layout import RunRecord

    for key in ("f0", "f1"):
        assert RunRecord.open(real[key]).manifest["random_ops"] == {
            # one bernoulli_ per training forward; only step 0 is watched, and the eval inference draws none
            "aten::bernoulli_.float": {"calls": 1, "stages": ["forward"]}}
    comp = compare_records(real["f0"], real["f1"])
    assert not comp.ok
    assert comp.first_forward.key == "activation:fc#0" and comp.first_forward.module_type == "Linear"
    assert comp.random_ops == ["aten::bernoulli_.float"]
    num105 = next(f for f in comp.findings if f.code == "NUM105")
    assert num105.evidence["random_ops"] == ["aten::bernoulli_.float"] and num105.evidence["diverged"] is True
    assert num105.message.startswith("Random operators in the runs: aten::bernoulli_.float; first divergence at "
                                     "activation:fc#0.")
    num101 = next(f for f in comp.findings if f.code == "NUM101" and "forward order" in f.message)
    assert "Random operators differ between the runs (aten::bernoulli_.float)" in num101.message


def test_real_model_without_random_ops_not_flagged(real):
    for key in ("n0", "n1"):
        assert _manifest(real[key])["random_ops"] == {}
    comp = compare_records(real["n0"], real["n1"])
    assert comp.ok and comp.random_ops == []
    assert "NUM105" not in {f.code for f in comp.findings}


def _manifest(path):
    from mpsready.record.layout import RunRecord

    return RunRecord.open(path).manifest
