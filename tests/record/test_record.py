"""Recording real steps on the CPU (subprocess), asserting stored values against independent ones."""
import hashlib
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mpsready.cli import main  # noqa: E402
from mpsready.errors import UsageError  # noqa: E402
from mpsready.record import RunRecord, record_entry  # noqa: E402

HERE = Path(__file__).parent
ENTRIES = str(HERE / "entries.py")
sys_path_added = False


def _entries():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("record_test_entries", ENTRIES)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["record_test_entries"] = mod
    spec.loader.exec_module(mod)
    return mod


E = _entries()


def np_stats(t):
    a = t.detach().to(torch.float64).numpy().ravel()
    f = a[np.isfinite(a)]
    return {"numel": a.size, "mean": f.mean(), "std": f.std(), "min": f.min(), "max": f.max(),
            "l2": float(np.sqrt((f * f).sum())), "nan": int(np.isnan(a).sum()), "inf": int(np.isinf(a).sum())}


def sha(t):
    return hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest()


def assert_entry(entry, tensor):
    assert list(entry.shape) == list(tensor.shape)
    assert entry.dtype == str(tensor.dtype).replace("torch.", "")
    exp = np_stats(tensor)
    got = entry.stats
    assert got.numel == exp["numel"] and got.nan == exp["nan"] and got.inf == exp["inf"]
    for k in ("mean", "std", "min", "max", "l2"):
        assert getattr(got, k) == pytest.approx(exp[k], rel=1e-9, abs=1e-12), (entry.key, k)
    assert entry.checksum == sha(tensor), entry.key


def by_key(rec, step):
    return {e.key: e for e in rec.entries() if e.step == step}


@pytest.fixture(scope="module")
def cnn_record(tmp_path_factory):
    out = tmp_path_factory.mktemp("cnn") / "rec"
    return record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=2, out=out, save_tensors=True,
                        cwd=str(HERE), isolate=False)


def test_cnn_record_stats_match_independent_computation(cnn_record):
    rec = RunRecord.open(cnn_record.path)
    assert rec.manifest["schema"] == {"name": "mpsready.record", "version": 1}
    assert rec.manifest["basis"] == "observed" and rec.device == "cpu" and rec.manifest["mps_run"] is False
    assert [s["status"] for s in rec.stages] == ["passed"] * 9
    model, (x, y) = E.cnn_model(), E.cnn_batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        got = by_key(rec, step)
        opt.zero_grad(set_to_none=True)
        conv = model[0](x)
        relu = torch.relu(conv)
        pool = model[2](relu)
        flat = model[3](pool)
        out = model[4](flat)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        assert_entry(got["input:inputs"], x)
        assert_entry(got["input:target"], y)
        assert_entry(got["activation:0#0"], conv)  # before the in-place ReLU changed it
        assert got["activation:0#0"].stats.min < 0 and got["activation:0#0"].module_type == "Conv2d"
        assert_entry(got["activation:1#0"], relu)
        assert_entry(got["activation:2#0"], pool)
        assert_entry(got["activation:3#0"], flat)
        assert_entry(got["activation:4#0"], out)
        assert_entry(got["output:output"], out)
        assert_entry(got["loss:loss"], loss)
        for n, p in model.named_parameters():
            assert_entry(got[f"grad:{n}"], p.grad)
        opt.step()
        for n, p in model.named_parameters():
            assert_entry(got[f"param:{n}"], p)
        assert rec.step_metrics[step]["loss"] == pytest.approx(loss.item(), rel=1e-7)
        # 2 inputs, 5 activations, output, loss, 4 grads, 4 params; + the inference output after the last step
        assert len(got) == 17 + (step == 1)
    model.eval()
    with torch.inference_mode():
        assert_entry(by_key(rec, 1)["output:inference"], model(x))
    # backward order: the last layer's gradients are accumulated before the first layer's
    grads = sorted((e for e in rec.entries() if e.kind == "grad" and e.step == 0), key=lambda e: e.order)
    assert {g.name for g in grads[:2]} == {"4.weight", "4.bias"} and {g.name for g in grads[2:]} == {"0.weight", "0.bias"}
    assert rec.manifest["tensor_count"] == 35
    fwd = rec.stages[3]
    assert fwd["stage"] == "forward" and fwd["extra"]["recording_seconds"] > 0  # hook statistics, reported apart
    assert rec.manifest["seed"]["value"] == 0 and "torch.manual_seed" in rec.manifest["seed"]["how"]
    assert rec.manifest["precision"]["float32_matmul_precision"] == "highest"
    assert rec.manifest["env"]["schema"]["name"] == "mpsready.env"
    assert [f["code"] for f in rec.manifest["findings"]] == ["ENV201", "PRF101"]


def test_step_metrics_and_inputs_section(cnn_record):
    m = cnn_record.manifest
    assert [sm["index"] for sm in m["step_metrics"]] == [0, 1]
    for sm in m["step_metrics"]:
        assert 0 < sm["seconds"] <= sm["seconds_with_recording"]
        assert sm["peak_memory_bytes"] > 0 and sm["memory_source"] == "process peak RSS (ru_maxrss)"
    x, y = E.cnn_batch()
    assert m["inputs"]["structure"] == {"inputs": {"type": "tensor", "name": "inputs"},
                                        "target": {"type": "tensor", "name": "target"}}
    assert m["inputs"]["tensors"] == [
        {"name": "inputs", "shape": [6, 1, 8, 8], "dtype": "float32", "min": float(x.min()), "max": float(x.max())},
        {"name": "target", "shape": [6], "dtype": "int64", "min": float(y.min()), "max": float(y.max())}]
    assert m["fallback"]["checked"] is False and m["fallback"]["calls"] == {}


def test_raw_tensors_are_safetensors_and_reading_never_unpickles(cnn_record, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a record must never be unpickled")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    monkeypatch.setattr(torch, "load", refuse)
    rec = RunRecord.open(cnn_record.path)
    entries = rec.entries()
    assert rec.has_raw(0) and rec.has_raw(1)
    from safetensors.torch import load_file

    raw = load_file(str(rec.raw_path(0)))
    step0 = [e for e in entries if e.step == 0]
    assert sorted(raw) == sorted(e.key for e in step0)
    for e in step0:
        assert sha(raw[e.key]) == e.checksum
    assert sorted(p.name for p in rec.path.iterdir()) == ["record.json", "tensors", "tensors.jsonl"]


@pytest.fixture(scope="module")
def transformer_record(tmp_path_factory):
    out = tmp_path_factory.mktemp("tr") / "rec"
    return record_entry(f"{ENTRIES}:small_transformer", device="cpu", steps=2, out=out, cwd=str(HERE), isolate=False)


def test_transformer_record_stats_match(transformer_record):
    rec = transformer_record
    assert [s["status"] for s in rec.stages] == ["passed"] * 9
    model, (tok, tgt) = E.transformer_model(), E.transformer_batch()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(2):
        got = by_key(rec, step)
        opt.zero_grad(set_to_none=True)
        emb = model.emb(tok)
        enc = model.enc(emb)
        out = model.head(enc)
        loss = E.transformer_loss(out, tgt)
        loss.backward()
        assert_entry(got["input:inputs"], tok)
        assert_entry(got["activation:emb#0"], emb)
        assert_entry(got["activation:enc#0"], enc)
        assert_entry(got["activation:head#0"], out)
        assert_entry(got["loss:loss"], loss)
        for n, p in model.named_parameters():
            assert_entry(got[f"grad:{n}"], p.grad)
        opt.step()
        for n, p in model.named_parameters():
            assert_entry(got[f"param:{n}"], p)
    acts = [e.key for e in rec.entries() if e.kind == "activation" and e.step == 0]
    # MultiheadAttention returns (output, None): the tuple's tensor is recorded under "#0/0"
    assert acts == ["activation:emb#0", "activation:enc.self_attn#0/0", "activation:enc.dropout1#0",
                    "activation:enc.norm1#0", "activation:enc.linear1#0", "activation:enc.dropout#0",
                    "activation:enc.linear2#0", "activation:enc.dropout2#0", "activation:enc.norm2#0",
                    "activation:enc#0", "activation:head#0"]
    assert [e.order for e in rec.entries() if e.kind == "activation" and e.step == 0] == list(range(11))


def test_same_seed_same_checksums(transformer_record, tmp_path):
    again = record_entry(f"{ENTRIES}:small_transformer", device="cpu", steps=2, out=tmp_path / "again",
                         cwd=str(HERE), isolate=False)
    assert [(e.key, e.step, e.checksum) for e in again.entries()] == \
        [(e.key, e.step, e.checksum) for e in transformer_record.entries()]


def test_backward_failure_is_that_stage_and_later_not_run(tmp_path, capsys):
    # through the CLI, in a subprocess: exit 1 (a stage failed), the record is written
    assert main(["record", f"{ENTRIES}:failing_backward", "--device", "cpu", "--steps", "2",
                 "--out", str(tmp_path / "r"), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["schema"]["name"] == "mpsready.record"
    rec = RunRecord.open(tmp_path / "r")
    assert rec.manifest["worker"]["isolated"] is True
    st = {s["stage"]: s for s in rec.stages}
    assert [st[s]["status"] for s in ("build", "to_device", "data", "forward", "loss")] == ["passed"] * 5
    assert st["backward"]["status"] == "failed" and st["backward"]["error_type"] == "RuntimeError"
    assert st["backward"]["error"] == "backward exploded" and 'raise RuntimeError("backward exploded")' in st["backward"]["traceback"]
    assert st["optimizer_step"]["status"] == "not_run" and st["optimizer_step"]["reason"] == "backward failed"
    codes = [(f["code"], f["location"].get("stage")) for f in rec.manifest["findings"]]
    assert ("ENV202", "backward") in codes
    assert not any(e.kind == "grad" for e in rec.entries())
    assert rec.manifest["worker"]["crashed"] is False


def test_abort_is_a_crash_of_its_stage(tmp_path):
    rec = record_entry(f"{ENTRIES}:aborting_forward", device="cpu", steps=2, out=tmp_path / "r", cwd=str(tmp_path))
    st = {s["stage"]: s for s in rec.stages}
    assert [st[s]["status"] for s in ("build", "to_device", "data")] == ["passed"] * 3
    assert st["forward"]["status"] == "crashed"
    assert st["forward"]["error"] == "the process died in stage forward (step 0): killed by SIGABRT"
    for s in ("loss", "backward", "optimizer_step", "checkpoint", "inference"):
        assert st[s]["status"] == "not_run" and st[s]["reason"] == "the process crashed in forward"
    assert rec.manifest["worker"] == {**rec.manifest["worker"], "crashed": True, "returncode": -6,
                                      "how": "killed by SIGABRT"}
    # everything up to the crash is on record, down to the last layer that returned
    assert [e.key for e in rec.entries()] == ["input:inputs", "activation:lin#0"]
    assert ("ENV203", "forward") in [(f["code"], f["location"].get("stage")) for f in rec.manifest["findings"]]


def test_timeout_kills_the_worker_and_blames_the_running_stage(tmp_path):
    rec = record_entry(f"{ENTRIES}:hangs", device="cpu", steps=1, out=tmp_path / "t", cwd=str(HERE), timeout=6)
    st = {s["stage"]: s for s in rec.stages}
    assert st["build"]["status"] == "crashed"
    assert st["build"]["error"] == "the process died in stage build (step 0): killed after the --timeout of 6 s"
    assert all(st[s]["status"] == "not_run" for s in ("to_device", "data", "forward", "inference"))
    assert rec.manifest["worker"]["returncode"] == -9


def test_synthetic_inputs_reproduce_shapes_dtypes_and_ranges(cnn_record, tmp_path):
    rec = record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=2, out=tmp_path / "syn",
                       synthetic_inputs=str(cnn_record.path), seed=7, cwd=str(HERE), isolate=False)
    assert [s["status"] for s in rec.stages] == ["passed"] * 9
    assert rec.manifest["synthetic_inputs"] == str(cnn_record.path)
    orig = {(e.key, e.step): e for e in cnn_record.entries() if e.kind == "input"}
    syn = {(e.key, e.step): e for e in rec.entries() if e.kind == "input"}
    assert sorted(orig) == sorted(syn)
    for k, o in orig.items():
        s = syn[k]
        assert (s.shape, s.dtype) == (o.shape, o.dtype)
        assert s.checksum != o.checksum  # random values, not the data
        ref = cnn_record.manifest["inputs"]["tensors"][0 if k[0] == "input:inputs" else 1]
        assert ref["min"] <= s.stats.min and s.stats.max <= ref["max"]
    tgt = syn[("input:target", 0)]
    assert tgt.dtype == "int64" and tgt.stats.min >= 0 and tgt.stats.max <= 3
    # the same seed replays the same inputs (two devices get identical data)
    from mpsready.record.transform import synthesize

    spec = cnn_record.manifest["inputs"]
    gen = torch.Generator().manual_seed(7)
    x0, y0 = synthesize(spec, gen)
    assert sha(x0) == syn[("input:inputs", 0)].checksum and sha(y0) == syn[("input:target", 0)].checksum
    x1, _ = synthesize(spec, gen)
    assert sha(x1) == syn[("input:inputs", 1)].checksum


def test_synthetic_inputs_keep_a_tuple_of_inputs_without_target(tmp_path):
    first = record_entry(f"{ENTRIES}:two_inputs_no_target", device="cpu", steps=1, out=tmp_path / "a", cwd=str(HERE),
                         isolate=False)
    assert first.manifest["inputs"]["structure"] == {
        "inputs": {"type": "tuple", "items": [{"type": "tensor", "name": "inputs.0"},
                                              {"type": "tensor", "name": "inputs.1"}]},
        "target": {"type": "value", "value_type": "NoneType"}}
    syn = record_entry(f"{ENTRIES}:two_inputs_no_target", device="cpu", steps=1, out=tmp_path / "b",
                       synthetic_inputs=str(first.path), cwd=str(HERE), isolate=False)
    assert [s["status"] for s in syn.stages] == ["passed"] * 9
    assert syn.manifest["inputs"]["structure"] == first.manifest["inputs"]["structure"]
    assert [(e.key, e.shape, e.dtype) for e in syn.entries() if e.kind == "input"] == [
        ("input:inputs.0", (3, 4), "float32"), ("input:inputs.1", (3, 1), "float32")]


def test_float64_reference(tmp_path):
    rec = record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=1, out=tmp_path / "f64", dtype="float64",
                       cwd=str(HERE), isolate=False)
    got = by_key(rec, 0)
    assert got["input:inputs"].dtype == "float64" and got["input:target"].dtype == "int64"
    assert got["param:0.weight"].dtype == "float64" and got["loss:loss"].dtype == "float64"
    model, (x, y) = E.cnn_model(), E.cnn_batch()
    model = model.double()
    loss = torch.nn.functional.cross_entropy(model(x.double()), y)
    assert_entry(got["loss:loss"], loss)
    assert rec.manifest["dtype"] == "float64"


def test_import_error_of_the_entry_module_is_a_build_failure(tmp_path):
    rec = record_entry(f"{HERE / 'data' / 'broken_import.py'}:step", device="cpu", steps=1, out=tmp_path / "b",
                       cwd=str(HERE), isolate=False)
    st = rec.stages
    assert (st[0]["stage"], st[0]["status"], st[0]["error_type"]) == ("build", "failed", "ModuleNotFoundError")
    assert st[0]["error"] == "importing the entry's module raised: No module named 'mpsready_no_such_dependency'"
    assert [s["status"] for s in st[1:]] == ["not_run"] * 8 and st[1]["reason"] == "build failed"
    assert rec.manifest["worker"]["crashed"] is False
    assert rec.manifest["fallback"]["note"] == "the step never ran (importing the entry failed)"


def test_whole_step_entry_records_loss(tmp_path):
    rec = record_entry(f"{ENTRIES}:whole_step", device="cpu", steps=2, out=tmp_path / "w", cwd=str(HERE), isolate=False)
    assert [(s["stage"], s["status"]) for s in rec.stages] == [("build", "passed"), ("step", "passed")]
    assert [e.key for e in rec.entries()] == ["loss:loss", "loss:loss"]
    torch.manual_seed(0)
    w = torch.randn(3)
    assert rec.step_metrics[0]["loss"] == pytest.approx(float((w * 2).sum()), rel=1e-7)


def test_nan_loss_is_recorded_as_json_null_and_flagged(tmp_path):
    rec = record_entry(f"{ENTRIES}:nan_loss", device="cpu", steps=1, out=tmp_path / "n", cwd=str(HERE), isolate=False)
    sm = rec.step_metrics[0]
    assert sm["loss"] is None and sm["loss_nonfinite"] == "nan"
    assert by_key(rec, 0)["loss:loss"].stats.nan == 1
    assert "ENV205" in [f["code"] for f in rec.manifest["findings"]]
    json.loads((rec.path / "record.json").read_text())


def test_usage_errors_lose_nothing(tmp_path, cnn_record):
    with pytest.raises(UsageError, match="not built with MPS"):
        record_entry(f"{ENTRIES}:small_cnn", device="mps", steps=1, out=tmp_path / "m", cwd=str(HERE))
    assert not (tmp_path / "m").exists()
    with pytest.raises(UsageError, match="Cannot convert a MPS Tensor to float64 dtype"):
        record_entry(f"{ENTRIES}:small_cnn", device="mps", steps=1, out=tmp_path / "m", dtype="float64")
    with pytest.raises(UsageError, match="exists and is not empty"):
        record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=1, out=cnn_record.path)
    assert (cnn_record.path / "record.json").exists()
    with pytest.raises(UsageError, match="has no attribute 'nope'"):
        record_entry(f"{ENTRIES}:nope", device="cpu", steps=1, out=tmp_path / "x", cwd=str(HERE))
    assert not (tmp_path / "x").exists()
    with pytest.raises(UsageError, match="--device must be"):
        record_entry(f"{ENTRIES}:small_cnn", device="tpu", steps=1, out=tmp_path / "y")
    with pytest.raises(UsageError, match="--synthetic-inputs: run record not found"):
        record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=1, out=tmp_path / "y",
                     synthetic_inputs=str(tmp_path / "none"))


def test_cli_usage_error_exit_code(tmp_path, capsys):
    assert main(["record", "missing.py:f", "--device", "cpu", "--out", str(tmp_path / "b")]) == 2
    assert "entry file not found" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_terminal_summary_names_device_stages_and_findings(cnn_record):
    from rich.console import Console

    from mpsready.record.render import render_terminal

    console = Console(record=True, width=200)
    render_terminal(cnn_record, console=console)
    text = console.export_text()
    assert "not an MPS run" in text and "optimizer_step" in text
    assert "ENV201 info (observed): recorded on cpu, not on MPS" in text
