"""compare_records on real CPU records: the Done-when cases of issue 6, with exact values."""

from __future__ import annotations

import math

import numpy as np
from safetensors.numpy import load_file

from mpsready.compare import compare_records
from mpsready.record.layout import RunRecord

N_TENSORS_PER_STEP = 20  # input, 5 activations, output, loss, 6 grads, 6 params


def test_identical_reruns_agree_exactly_elementwise(recs):
    comp = compare_records(recs["a"], recs["a_rerun"], trust_checksums=False)
    assert comp.ok
    assert len(comp.tensors) == 3 * N_TENSORS_PER_STEP
    assert {t.metrics.method for t in comp.tensors} == {"raw"}
    assert all(t.metrics.max_abs == 0.0 and t.metrics.max_rel == 0.0 and t.metrics.cosine == 1.0
               and t.metrics.mismatched == 0 for t in comp.tensors)
    assert [s.abs_diff for s in comp.steps] == [0.0, 0.0, 0.0]
    assert comp.first_forward is None and comp.first_backward is None
    assert comp.findings == []
    assert comp.basis == "observed"


def test_identical_reruns_by_checksum_skip_reading(recs):
    comp = compare_records(recs["a"], recs["a_rerun"])
    assert {t.metrics.method for t in comp.tensors} == {"checksum"}
    assert comp.summary()["identical"] == 60


def test_float32_against_float64_reference_passes_with_defaults(recs):
    comp = compare_records(recs["ref64"], recs["a"], trust_checksums=False)
    assert comp.ok, [(t.key, t.metrics.max_abs) for t in comp.failed]
    t = next(t for t in comp.tensors if t.key == "activation:fc1#0" and t.step == 0)
    assert (t.dtype_a, t.dtype_b) == ("float64", "float32")
    # loosest of the two assert_close defaults: float32's
    assert (t.tolerance.rtol, t.tolerance.atol) == (1.3e-6, 1e-5)
    assert t.tolerance.source.startswith("default float32/float64")
    assert 0 < t.metrics.max_abs < 1e-6
    assert [f.code for f in comp.findings] == ["NUM109"]


def test_perturbed_weight_caught_at_that_layer_not_before(recs):
    comp = compare_records(recs["a"], recs["perturbed"])
    assert not comp.ok
    assert comp.first_forward.key == "activation:fc2#0"
    assert comp.first_forward.step == 0
    step0 = [t for t in comp.tensors if t.step == 0 and t.kind in ("input", "activation")]
    before = [t.key for t in step0 if t.order < comp.first_forward.order or t.kind == "input"]
    assert before == ["input:0", "activation:fc1#0", "activation:act1#0"]
    assert all(t.status == "pass" and t.metrics.max_abs == 0.0 for t in step0 if t.key in before)
    assert comp.first_backward.key == "grad:head.bias"  # the first gradient backward produces
    fc2 = comp.first_forward.metrics
    assert fc2.mismatched == 96 and fc2.numel == 96
    # the activation difference is exactly x @ dW.T with dW = 1e-3 everywhere: 1e-3 * sum(|relu(fc1)|) per row
    h = load_file(str(RunRecord.open(recs["a"]).raw_path(0)))["activation:act1#0"].astype(np.float64)
    assert math.isclose(fc2.max_abs, 1e-3 * h.sum(axis=1).max(), rel_tol=1e-4)
    codes = [f.code for f in comp.findings]
    assert codes.count("NUM101") == 3 and "NUM103" in codes and "NUM105" not in codes


def test_three_way_separates_worse_from_different(recs):
    comp = compare_records(recs["a"], recs["perturbed"], reference=recs["ref64"])
    fc1 = next(t for t in comp.tensors if t.key == "activation:fc1#0" and t.step == 0)
    fc2 = next(t for t in comp.tensors if t.key == "activation:fc2#0" and t.step == 0)
    assert fc1.three_way.judgement == "b_not_worse"
    assert fc2.three_way.judgement == "b_worse"
    assert fc2.three_way.b_vs_ref.error > 100 * fc2.three_way.a_vs_ref.error
    assert fc2.three_way.b_vs_ref.error == fc2.three_way.b_vs_ref.max_abs
    assert "NUM106" in [f.code for f in comp.findings]
    # the other way round: a float32 run against its float64 self is "differs, not worse"
    same = compare_records(recs["a"], recs["a_rerun"], reference=recs["ref64"])
    assert same.summary()["three_way"] == {"k": 2.0, "b_worse": 0, "b_not_worse": 60, "unknown": 0}


def test_dropout_left_active_is_flagged_rng_dependent(recs):
    comp = compare_records(recs["drop_a"], recs["drop_b"])
    assert not comp.ok
    assert comp.random_ops == ["Dropout (drop)"]
    assert comp.first_forward.key == "activation:drop#0"
    by_code = {f.code: f for f in comp.findings}
    assert "Random operators differ between the runs (Dropout (drop))" in by_code["NUM101"].message
    assert by_code["NUM105"].evidence["random_ops"] == ["Dropout (drop)"]
    assert "first divergence at activation:drop#0" in by_code["NUM105"].message


def test_dropout_that_agrees_is_not_flagged(recs, tmp_path):
    from tests.compare.recorder import mlp, record_run

    again = record_run(tmp_path / "again", steps=2, model_fn=lambda: mlp(dropout=0.5), rng_seed=1)
    comp = compare_records(recs["drop_a"], again)
    assert comp.ok and comp.random_ops == [] and comp.findings == []


def _with_random_ops(src, dst, ops):
    import json
    import shutil

    shutil.copytree(src, dst)
    doc = json.loads((dst / "record.json").read_text())
    doc["random_ops"] = ops
    (dst / "record.json").write_text(json.dumps(doc))
    return dst


def test_manifests_listing_no_random_ops_are_believed_over_dropout_modules(recs, tmp_path):
    # both recorders saw every random aten call and list none: a differing Dropout output is not RNG
    a = _with_random_ops(recs["drop_a"], tmp_path / "a", {})
    b = _with_random_ops(recs["drop_b"], tmp_path / "b", {})
    comp = compare_records(a, b)
    assert not comp.ok and comp.random_ops == []
    assert "NUM105" not in {f.code for f in comp.findings}
    # one record without the field (an older recorder): its dropout modules are still looked at
    comp = compare_records(recs["drop_a"], b)
    assert comp.random_ops == ["Dropout (drop)"]
    # the new form, {op: {"calls", "stages"}}, from both records: their union, zero counts ignored
    fwd = {"calls": 2, "stages": ["forward"]}
    a = _with_random_ops(recs["drop_a"], tmp_path / "a2", {"aten::bernoulli_.float": fwd})
    b = _with_random_ops(recs["drop_b"], tmp_path / "b2", {"aten::native_dropout": fwd,
                                                           "aten::randn": {"calls": 0, "stages": []}})
    comp = compare_records(a, b)
    assert comp.random_ops == ["aten::bernoulli_.float", "aten::native_dropout"]
    num105 = next(f for f in comp.findings if f.code == "NUM105")
    assert num105.evidence["random_ops"] == ["aten::bernoulli_.float", "aten::native_dropout"]


def test_manifest_random_ops_are_used_when_present(recs, tmp_path):
    import json
    import shutil

    b = tmp_path / "b"
    shutil.copytree(recs["a_rerun"], b)
    doc = json.loads((b / "record.json").read_text())
    doc["random_ops"] = {"aten::bernoulli_.float": 3, "aten::randn": 0}
    (b / "record.json").write_text(json.dumps(doc))
    comp = compare_records(recs["a"], b)
    assert comp.random_ops == ["aten::bernoulli_.float"]
    assert comp.ok  # RNG noted, nothing diverged
    assert [f.code for f in comp.findings] == ["NUM105"]


def test_missing_layer_reported_not_crashed(recs):
    comp = compare_records(recs["a"], recs["extra"])
    assert not comp.ok
    only_b = sorted(k for i in comp.structure if i.type == "only_in_b" for k in i.keys_b)
    assert only_b == ["activation:act3#0", "activation:fc3#0", "grad:fc3.bias", "grad:fc3.weight",
                      "param:fc3.bias", "param:fc3.weight"]
    assert all(i.steps == [0, 1, 2] for i in comp.structure if i.type == "only_in_b")
    assert [i.type for i in comp.structure] == ["only_in_b"] * 6
    # what could be paired still is compared
    assert len(comp.tensors) == 3 * N_TENSORS_PER_STEP
    assert next(t for t in comp.tensors if t.key == "activation:fc1#0" and t.step == 0).status == "pass"
    assert comp.summary()["structure_issues"] == 6
    assert [f.code for f in comp.findings].count("NUM104") == 6


def test_stats_only_comparison(recs):
    comp = compare_records(recs["ref64_stats"], recs["stats_only"])
    assert comp.ok
    assert {t.metrics.method for t in comp.tensors} == {"stats"}
    assert "NUM108" in [f.code for f in comp.findings]
    bad = compare_records(recs["stats_only"], recs["stats_perturbed"])
    assert not bad.ok
    assert bad.first_forward.key == "activation:fc2#0"
    t = bad.first_forward
    ea = next(e for e in RunRecord.open(recs["stats_only"]).entries() if e.key == t.key and e.step == 0)
    eb = next(e for e in RunRecord.open(recs["stats_perturbed"]).entries() if e.key == t.key and e.step == 0)
    assert t.metrics.stats_diff["mean"]["abs"] == abs(eb.stats.mean - ea.stats.mean)
    amax = max(abs(ea.stats.min), abs(ea.stats.max))
    assert t.metrics.stats_diff["mean"]["bound"] == 1e-5 + 1.3e-6 * amax
    assert t.metrics.mismatched is None and t.metrics.max_abs is None
    assert "stats only" in t.note


def test_one_side_raw_falls_back_to_stats(recs):
    comp = compare_records(recs["a"], recs["stats_perturbed"])
    t = comp.first_forward
    assert t.metrics.method == "stats" and t.note == "stats only (no raw tensor in B)"


def test_loss_steps_side_by_side(recs):
    comp = compare_records(recs["a"], recs["perturbed"])
    ma = RunRecord.open(recs["a"]).step_metrics
    mb = RunRecord.open(recs["perturbed"]).step_metrics
    assert [s.loss_a for s in comp.steps] == [m["loss"] for m in ma]
    assert [s.loss_b for s in comp.steps] == [m["loss"] for m in mb]
    assert [s.abs_diff for s in comp.steps] == [abs(b["loss"] - a["loss"]) for a, b in zip(ma, mb)]
    drift = comp.loss_drift()
    assert drift["steps"] == 3 and drift["first_abs_diff"] == comp.steps[0].abs_diff
    assert drift["growth"] == comp.steps[2].abs_diff / comp.steps[0].abs_diff


def test_findings_are_observed_and_registered(recs):
    import mpsready.compare.rules  # noqa: F401  (registers NUM1xx)
    from mpsready.rules import RULE_MODULES, _REGISTRY

    assert "mpsready.compare.rules" in RULE_MODULES
    codes = set(_REGISTRY)
    assert {f"NUM10{i}" for i in range(1, 10)} <= codes
    comp = compare_records(recs["a"], recs["perturbed"], reference=recs["ref64"])
    assert {f.basis.value for f in comp.findings} == {"observed"}
    assert all(f.code in codes for f in comp.findings)


def test_nan_in_one_run_is_a_blocker(recs, tmp_path):
    from tests.compare.recorder import record_run

    def poison(m):
        m.fc2.weight[0, 0] = float("inf")

    bad = record_run(tmp_path / "nan", steps=1, perturb=poison)
    comp = compare_records(recs["a"], bad)
    assert comp.first_forward.key == "activation:fc2#0"
    fc2 = comp.first_forward.metrics
    # output column 0 gets relu(fc1)[:, 0] * inf: +inf where that input is > 0, NaN (0 * inf) where it is 0
    h = load_file(str(RunRecord.open(recs["a"]).raw_path(0)))["activation:act1#0"]
    positive = int((h[:, 0] > 0).sum())
    assert (fc2.nan_a, fc2.inf_a, fc2.nan_b, fc2.inf_b) == (0, 0, 6 - positive, positive)
    assert 0 < positive < 6
    assert fc2.one_sided_nonfinite == 6 and fc2.mismatched == 6  # only output unit 0 is hit
    assert fc2.max_abs == 0.0  # the 90 finite pairs are untouched
    f = next(f for f in comp.findings if f.code == "NUM102")
    assert f.severity.value == "blocker" and "first at activation:fc2#0" in f.message
    assert comp.steps[0].passed is False and math.isnan(comp.steps[0].loss_b)
    assert comp.steps[0].to_dict()["loss_b"] == "nan"
