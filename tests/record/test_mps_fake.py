"""MPS paths, tested with a fake reproducing MPS behaviour (there is no Mac here)."""
import json
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from mpsready.record import mps  # noqa: E402
from mpsready.record.recorder import _manifest, read_events, stages_from_events  # noqa: E402
from mpsready.record.rules import evaluate  # noqa: E402
from mpsready.record import worker  # noqa: E402

from tests.record.fake_mps import FakeMPS  # noqa: E402

HERE = Path(__file__).parent


@pytest.mark.parametrize("built,available,expected", [
    (True, True, None),
    (True, False, "MPS is not usable here (torch.backends.mps.is_built()=True, is_available()=False): PyTorch "
                  "has MPS support but MPS is not available here: macOS older than 12.3, no MPS-capable "
                  "(Apple silicon/AMD) GPU, or an x86_64 Python under Rosetta"),
    (False, False, "MPS is not usable here (torch.backends.mps.is_built()=False, is_available()=False): this "
                   "PyTorch build has no MPS support (not built with MPS): MPS cannot be used with this install"),
])
def test_unavailable_reason_for_each_documented_combination(built, available, expected):
    assert mps.unavailable_reason(FakeMPS(built=built, available=available)) == expected


def test_falls_back_follows_dispatcher_precedence():
    fake = FakeMPS(missing={"aten::_pdist_forward"})
    assert mps.falls_back(fake, "aten::_pdist_forward") is True
    assert mps.falls_back(fake, "aten::add.Tensor") is False
    # registered to the CPU fallback in MPSFallback.mm although the dispatcher lists an MPS kernel
    assert mps.falls_back(fake, "aten::embedding_renorm_") is True

    class CompositeOnly(FakeMPS):
        def has_kernel(self, op, key):
            return key == "CompositeExplicitAutograd"

    assert mps.falls_back(CompositeOnly(), "aten::_foreach_add.List") is False


def test_counter_counts_every_call_while_the_warning_fires_once():
    fake = FakeMPS(missing={"aten::relu"})
    counter = mps.FallbackCounter(fake)
    x = torch.randn(4)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with counter.active("forward"):
            for _ in range(3):
                torch.relu(x)
                fake.warn_fallback("aten::relu")
                x = x + 1
        with counter.active("backward"):
            torch.relu(x)
            fake.warn_fallback("aten::relu")
    assert counter.to_dict() == {"calls": {"aten::relu": 4},
                                 "by_stage": {"forward": {"aten::relu": 3}, "backward": {"aten::relu": 1}}}
    texts = [str(w.message) for w in seen]
    assert texts == ["The operator 'aten::relu' is not currently supported on the MPS backend and will fall back "
                     "to run on the CPU. This may have performance implications."]
    assert mps.parse_fallback_warning(texts[0]) == "aten::relu"


def test_a_call_that_raises_is_not_counted_as_a_fallback():
    counter = mps.FallbackCounter(FakeMPS(missing={"aten::mm"}))
    with pytest.raises(RuntimeError):
        with counter.active("forward"):
            torch.mm(torch.randn(2, 3), torch.randn(2, 3))  # shape error: the call never ran
    with counter.active("forward"):
        torch.mm(torch.randn(2, 3), torch.randn(3, 2))
    assert counter.to_dict()["calls"] == {"aten::mm": 1}


def test_counter_ignores_tensors_on_other_devices():
    counter = mps.FallbackCounter(FakeMPS(missing={"aten::relu"}, device_type="mps"))
    with counter.active("forward"):
        torch.relu(torch.randn(3))  # a CPU tensor: no fallback on an MPS run
    assert counter.to_dict()["calls"] == {}


def test_float64_refusal_and_not_implemented_texts_are_classified():
    with pytest.raises(TypeError) as exc:
        FakeMPS().to_float64(torch.zeros(2))
    assert str(exc.value) == ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
                              "float64. Please use float32 instead.")
    assert mps.classify_error(str(exc.value)) == ("float64_refused", None)
    text = mps.NOT_IMPLEMENTED.format(op="aten::grid_sampler_3d")
    assert mps.classify_error(text) == ("op_not_implemented", "aten::grid_sampler_3d")
    assert mps.classify_error("RuntimeError: shapes do not match") == (None, None)
    assert mps.parse_fallback_warning("some other warning") is None


def _fake_run(tmp_path, entry, fake, steps=2):
    out = tmp_path / "rec"
    out.mkdir()
    spec = {"entry": f"{HERE / 'entries.py'}:{entry}", "device": "cpu", "steps": steps, "seed": 0,
            "out": str(out), "events": str(tmp_path / "events.jsonl"), "cwd": str(HERE), "save_tensors": False,
            "float64": False, "synthetic": None, "project": None}
    assert worker.run(spec, mps_backend=fake) == 0
    events = read_events(tmp_path / "events.jsonl")
    return events, out


def test_worker_counts_fallback_per_call_and_stage_with_a_fake(tmp_path):
    # the fake says max_pool2d has no MPS kernel: every call in forward and backward is counted
    fake = FakeMPS(missing={"aten::max_pool2d_with_indices", "aten::max_pool2d_with_indices_backward"})
    events, out = _fake_run(tmp_path, "small_cnn", fake)
    done = next(e for e in events if e["event"] == "done")
    fb = done["fallback"]
    assert fb["checked"] is True and fb["backend"] == "fake-mps"
    # one call per training step each; inference dispatches aten::max_pool2d (no indices), which has a kernel
    assert fb["calls"] == {"aten::max_pool2d_with_indices": 2, "aten::max_pool2d_with_indices_backward": 2}
    assert fb["by_stage"] == {"forward": {"aten::max_pool2d_with_indices": 2},
                              "backward": {"aten::max_pool2d_with_indices_backward": 2}}
    steps = [e["metrics"] for e in events if e["event"] == "step"]
    assert [s["memory_source"] for s in steps] == ["process peak RSS (ru_maxrss)"] * 2


def test_rules_on_a_hand_made_mps_record():
    manifest = {
        "device": "mps", "device_kind": "mps",
        "stages": [
            {"stage": "forward", "status": "failed", "error_type": "NotImplementedError",
             "error": mps.NOT_IMPLEMENTED.format(op="aten::grid_sampler_3d")},
            {"stage": "data", "status": "failed", "error_type": "TypeError", "error": mps.FLOAT64_REFUSAL},
            {"stage": "backward", "status": "crashed", "error": "the process died in stage backward (step 0): "
                                                              "killed by SIGABRT"},
        ],
        "fallback": {"checked": True, "calls": {"aten::_pdist_forward": 12},
                     "by_stage": {"forward": {"aten::_pdist_forward": 8}, "inference": {"aten::_pdist_forward": 4}}},
        "step_metrics": [{"seconds": 2.0}, {"seconds": 0.1}, {"seconds": 0.1}, {"seconds": 0.12}],
        "memory": {"peak_bytes": 2**20, "source": "torch.mps.current_allocated_memory"},
    }
    got = [(f.code, f.severity.value, f.location.stage, f.location.operator) for f in evaluate(manifest)]
    assert got == [("OPS201", "blocker", "forward", "aten::grid_sampler_3d"),
                   ("ENV204", "blocker", "data", None),
                   ("ENV203", "blocker", "backward", None),
                   ("OPS202", "degrades", None, "aten::_pdist_forward"),
                   ("PRF101", "info", None, None),
                   ("PRF102", "info", None, None)]
    fs = evaluate(manifest)
    assert all(f.basis.value == "observed" for f in fs)
    assert fs[3].evidence == {"calls": 12, "by_stage": {"forward": 8, "inference": 4}}
    assert fs[4].message == "median step 0.1000 s over 3 step(s) on mps (step 0 left out as warm-up); " \
                            "peak memory 1.0 MiB (torch.mps.current_allocated_memory)"
    assert (fs[4].evidence["steps"], fs[4].evidence["warmup_steps"]) == (3, 1)


def test_same_failures_on_cpu_claim_nothing_about_mps():
    manifest = {"device": "cpu", "device_kind": "cpu",
                "stages": [{"stage": "data", "status": "failed", "error_type": "TypeError",
                            "error": mps.FLOAT64_REFUSAL}],
                "fallback": {"calls": {"aten::_pdist_forward": 3}}}
    assert [f.code for f in evaluate(manifest)] == ["ENV201", "ENV202"]


def test_crash_rebuild_from_events_mid_second_step():
    events = [
        {"event": "stage_started", "stage": "build", "step": 0},
        {"event": "stage_finished", "stage": "build", "ok": True,
         "result": {"stage": "build", "status": "passed", "seconds": 0.1, "steps_run": 1}},
        {"event": "form", "whole": False},
    ]
    for stage in ("to_device", "data", "forward", "loss"):
        events += [{"event": "stage_started", "stage": stage, "step": 0},
                   {"event": "stage_finished", "stage": stage, "ok": True,
                    "result": {"stage": stage, "status": "passed", "seconds": 0.01, "steps_run": 1}}]
    events += [{"event": "stage_started", "stage": "data", "step": 1},
               {"event": "stage_finished", "stage": "data", "ok": True,
                "result": {"stage": "data", "status": "passed", "seconds": 0.02, "steps_run": 2}},
               {"event": "stage_started", "stage": "forward", "step": 1}]
    st = stages_from_events(events, "killed by SIGSEGV")
    assert [(s["stage"], s["status"]) for s in st] == [
        ("build", "passed"), ("to_device", "passed"), ("data", "passed"), ("forward", "crashed"),
        ("loss", "not_run"), ("backward", "not_run"), ("optimizer_step", "not_run"), ("checkpoint", "not_run"),
        ("inference", "not_run")]
    assert st[3]["error"] == "the process died in stage forward (step 1): killed by SIGSEGV"
    assert st[3]["steps_run"] == 1
    assert st[4]["reason"] == "the process crashed in forward (it had passed in 1 earlier step(s))"
    m = _manifest(events, st, spec="x:y", device="mps", steps=2, seed=0, dtype=None, save_tensors=False,
                  synthetic_inputs=None, worker={})
    assert m["fallback"]["note"] == "the worker died before reporting fallback counts"
    assert m["mps_run"] is True and m["basis"] == "observed"
    json.dumps(m, allow_nan=False)


def test_observer_reads_mps_memory_through_the_interface():
    from mpsready.record.observer import RecordingObserver
    from mpsready.step.runner import StepContext

    tensors, events = [], []
    fake = FakeMPS()
    obs = RecordingObserver(tensors.append, events.append, "mps", mps=fake)
    ctx = StepContext(device="mps", inputs=torch.ones(2, 3), target=torch.tensor([0, 1]))
    obs.stage_started(ctx, "data")
    obs.stage_finished(ctx, "data", True)  # fake memory 1024
    obs.stage_started(ctx, "forward")
    obs.stage_finished(ctx, "forward", True)  # 1048
    obs.step_finished(ctx, 0, 0.5, 0.25)
    step = [e for e in events if e["event"] == "step"][0]["metrics"]
    assert step["peak_memory_bytes"] == 1048 and step["mps_driver_allocated_bytes"] == 4096
    assert step["memory_source"] == "torch.mps.current_allocated_memory"
    assert [t["key"] for t in tensors] == ["input:inputs", "input:target"]
    assert step["loss"] == 0.5 and step["seconds_with_recording"] == 0.25 and 0 <= step["seconds"] <= 0.25


def test_observer_cuda_memory_is_reset_per_step_and_read_as_peak(monkeypatch):
    from mpsready.record.observer import RecordingObserver
    from mpsready.step.runner import StepContext

    calls = []
    peaks = iter([5000, 7000, 6000])
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device=None: calls.append(("reset", device)))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: next(peaks))
    events = []
    obs = RecordingObserver(lambda d: None, events.append, "cuda:0")
    ctx = StepContext(device="cuda:0")
    for stage in ("data", "forward", "loss"):
        obs.stage_started(ctx, stage)
        obs.stage_finished(ctx, stage, False)  # failed stages record no tensors, memory is still read
    obs.step_finished(ctx, 0, None, 0.1)
    m = [e for e in events if e["event"] == "step"][0]["metrics"]
    assert calls == [("reset", "cuda:0")]
    assert m["peak_memory_bytes"] == 7000 and m["memory_source"] == "torch.cuda.max_memory_allocated"
