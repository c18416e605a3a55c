"""Structure differences on hand-made records (RecordWriter, no torch): call counts,
renamed modules, shape differences, missing steps and stages."""

from __future__ import annotations

import numpy as np
from safetensors.numpy import save_file

from mpsready.compare import compare_records
from mpsready.record.layout import RecordWriter, TensorEntry, TensorStats, raw_file


def _entry(key, step, order, shape, module_type=None, seed=0):
    kind, name = key.split(":", 1)
    n = int(np.prod(shape))
    stats = TensorStats(n, float(seed), 1.0, -1.0, 1.0, float(n), 0, 0)
    return TensorEntry(key, kind, name, step, order, tuple(shape), "float32", stats, f"sum{key}{seed}", module_type)


def _write(path, specs, stages=("forward", "backward"), status=None, raw=True, losses=(1.0,)):
    status = status or {}
    st = [{"stage": s, "status": status.get(s, "passed"), "seconds": 0.0, "steps_run": 1} for s in stages]
    with RecordWriter(path, device="cpu", stages=st, raw_tensors=raw,
                      step_metrics=[{"index": i, "loss": x} for i, x in enumerate(losses)]) as w:
        by_step = {}
        for e in specs:
            w.add(e)
            by_step.setdefault(e.step, {})[e.key] = np.full(e.shape, e.stats.mean, dtype=np.float32)
        if raw:
            for step, tensors in by_step.items():
                (path / raw_file(step)).parent.mkdir(exist_ok=True)
                save_file(tensors, str(path / raw_file(step)))
    return path


def test_call_count_difference(tmp_path):
    a = _write(tmp_path / "a", [_entry("activation:block#0", 0, 0, (2,), "Linear"),
                                _entry("activation:block#1", 0, 1, (2,), "Linear"),
                                _entry("activation:block#2", 0, 2, (2,), "Linear")])
    b = _write(tmp_path / "b", [_entry("activation:block#0", 0, 0, (2,), "Linear"),
                                _entry("activation:block#1", 0, 1, (2,), "Linear")])
    comp = compare_records(a, b)
    assert [(i.type, i.message, i.keys_a) for i in comp.structure] == [
        ("call_count", "activation block: called 3 time(s) per step in A, 2 in B (step 0)", ["activation:block#2"])]
    assert len(comp.tensors) == 2 and not comp.ok


def test_renamed_module(tmp_path):
    a = _write(tmp_path / "a", [_entry("activation:enc.fc#0", 0, 0, (3, 2), "Linear"),
                                _entry("activation:out#0", 0, 1, (3,), "Linear")])
    b = _write(tmp_path / "b", [_entry("activation:encoder.fc#0", 0, 0, (3, 2), "Linear"),
                                _entry("activation:out#0", 0, 1, (3,), "Linear")])
    comp = compare_records(a, b)
    assert [i.type for i in comp.structure] == ["renamed"]
    assert comp.structure[0].keys_a == ["activation:enc.fc#0"]
    assert comp.structure[0].keys_b == ["activation:encoder.fc#0"]
    assert "renamed module?" in comp.structure[0].message


def test_shape_difference_is_incomparable_not_a_crash(tmp_path):
    a = _write(tmp_path / "a", [_entry("activation:fc#0", 0, 0, (3, 2))])
    b = _write(tmp_path / "b", [_entry("activation:fc#0", 0, 0, (2, 3))])
    comp = compare_records(a, b)
    t = comp.tensors[0]
    assert t.status == "incomparable" and t.metrics is None
    assert t.note == "shape differs: [3, 2] in A, [2, 3] in B"
    assert [i.type for i in comp.structure] == ["shape"]
    assert comp.first_forward is t


def test_missing_step_and_failed_stage(tmp_path):
    a = _write(tmp_path / "a", [_entry("loss:loss", 0, 0, ()), _entry("loss:loss", 1, 0, ())], losses=(1.0, 0.9))
    b = _write(tmp_path / "b", [_entry("loss:loss", 0, 0, ())], status={"backward": "failed"}, losses=(1.0,))
    comp = compare_records(a, b)
    msgs = [i.message for i in comp.structure]
    assert msgs == ["stage backward: passed in A, failed in B", "step 1 recorded in A only"]
    assert [(s.index, s.loss_a, s.loss_b, s.passed) for s in comp.steps] == [(0, 1.0, 1.0, True),
                                                                            (1, 0.9, None, None)]
    assert comp.tensors[0].metrics.method == "checksum"


def test_raw_values_compared_when_checksums_differ(tmp_path):
    a = _write(tmp_path / "a", [_entry("activation:fc#0", 0, 0, (4,), seed=1)])
    b = _write(tmp_path / "b", [_entry("activation:fc#0", 0, 0, (4,), seed=3)])
    t = compare_records(a, b).tensors[0]
    assert t.metrics.method == "raw" and t.metrics.max_abs == 2.0 and t.metrics.mismatched == 4


def test_nothing_in_common_is_not_a_pass(tmp_path):
    a = _write(tmp_path / "a", [], losses=())
    b = _write(tmp_path / "b", [], losses=())
    comp = compare_records(a, b)
    assert not comp.ok
    assert [i.message for i in comp.structure] == ["nothing to compare: the records share no tensor and no step loss"]


def test_synthetic_inputs_on_one_side_only(tmp_path):
    import json

    a = _write(tmp_path / "a", [_entry("input:inputs", 0, 0, (2,), seed=1)])
    b = _write(tmp_path / "b", [_entry("input:inputs", 0, 0, (2,), seed=2)])
    doc = json.loads((b / "record.json").read_text())
    doc["synthetic_inputs"] = "runs/cuda"
    (b / "record.json").write_text(json.dumps(doc))
    comp = compare_records(a, b)
    assert [i.type for i in comp.structure] == ["inputs"]
    assert comp.structure[0].message.startswith("B replayed synthetic inputs and A did not")
    assert comp.b.synthetic_inputs == "runs/cuda" and comp.a.synthetic_inputs is None
