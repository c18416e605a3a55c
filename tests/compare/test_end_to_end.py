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

    # four subprocess recordings, about 4.5 s of CPU each (torch import dominates)
    return {"a": rec("a", "cnn"), "ref": rec("ref", "cnn", dtype="float64"),
            "d0": rec("d0", "cnn_dropout", seed=0), "d1": rec("d1", "cnn_dropout", seed=1)}


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
    assert comp.random_ops == ["Dropout (4)"]
    assert "NUM105" in {f.code for f in comp.findings}
