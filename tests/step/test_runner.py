from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from mpsready.step import EntryError, StageStatus, load_entry  # noqa: E402
from mpsready.step.runner import run_entry  # noqa: E402

HERE = Path(__file__).parent
FIX = str(HERE / "fixtures_entries.py")


def statuses(results):
    return {r.stage: r.status.value for r in results}


def test_all_stages_pass_and_losses_recorded():
    results, ctx = run_entry(load_entry(f"{FIX}:tiny"), steps=3)
    assert statuses(results) == {s: "passed" for s in (
        "build", "to_device", "data", "forward", "loss", "backward", "optimizer_step", "checkpoint", "inference")}
    assert [r.steps_run for r in results] == [1, 1, 3, 3, 3, 3, 3, 1, 1]
    assert len(ctx.losses) == 3 and ctx.losses[2] < ctx.losses[0]  # SGD reduces the loss
    assert results[7].extra["bytes"] > 0


def test_backward_failure_is_localised_and_later_stages_not_run():
    results, _ = run_entry(load_entry(f"{FIX}:failing_backward"))
    st = statuses(results)
    assert st["forward"] == "passed" and st["loss"] == "passed"
    assert st["backward"] == "failed"
    assert st["optimizer_step"] == "not_run"
    assert st["checkpoint"] == "passed" and st["inference"] == "passed"
    bw = results[5]
    assert bw.error_type == "RuntimeError" and bw.error == "backward exploded"
    assert "BadBackward" in bw.traceback or "backward exploded" in bw.traceback
    assert results[6].reason == "backward failed"


def test_whole_step_form():
    results, ctx = run_entry(load_entry(f"{FIX}:whole"), steps=2)
    assert statuses(results) == {"build": "passed", "step": "passed"}
    assert results[1].steps_run == 2 and ctx.losses[0] is not None


def test_bad_return_fails_build():
    results, _ = run_entry(load_entry(f"{FIX}:not_a_step"))
    assert results[0].status is StageStatus.FAILED and results[0].error_type == "TypeError"
    assert all(r.status is StageStatus.NOT_RUN for r in results[1:])


@pytest.mark.parametrize("spec,msg", [
    ("nocolon", "ENTRY must look like"),
    ("missing_file.py:f", "entry file not found"),
    ("no_such_module_xyz:f", "module 'no_such_module_xyz' not found"),
    (f"{FIX}:nope", "has no attribute 'nope'"),
])
def test_entry_errors(spec, msg):
    with pytest.raises(EntryError, match=msg):
        load_entry(spec)


def test_forward_failure_never_steps_the_optimizer():
    entry = load_entry(f"{FIX}:failing_forward")
    results, _ = run_entry(entry)
    st = statuses(results)
    assert st == {"build": "passed", "to_device": "passed", "data": "passed", "forward": "failed",
                  "loss": "not_run", "backward": "not_run", "optimizer_step": "not_run",
                  "checkpoint": "passed", "inference": "failed"}
    assert entry.function.__globals__["STEPPED"] == []
    assert results[6].reason == "backward not reached"


def test_inference_stage_keeps_autograd_when_the_step_asks():
    results, _ = run_entry(load_entry(f"{FIX}:input_grad"))
    assert statuses(results)["inference"] == "passed"
    results, _ = run_entry(load_entry(f"{FIX}:input_grad_default"))
    (inf,) = [r for r in results if r.stage == "inference"]
    # under inference_mode the same evaluation cannot differentiate (the old forced behaviour)
    assert (inf.status.value, inf.error_type, inf.error) == (
        "failed", "RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn")
