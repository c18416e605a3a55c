"""The recorder's random-operator detection (``random_ops`` in record.json)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.nn import functional as F  # noqa: E402

from mpsready.record.randomness import RANDOM_STAGES, RandomOpCounter  # noqa: E402


def test_tag_exists_and_marks_the_random_overloads():
    tag = torch.Tag.nondeterministic_seeded  # aten/src/ATen/native/tags.yaml (2.13)
    assert tag in torch.ops.aten.bernoulli_.float.tags
    assert tag in torch.ops.aten.native_dropout.default.tags
    assert tag in torch.ops.aten.randperm.default.tags
    assert tag not in torch.ops.aten.mul.Tensor.tags
    assert tag not in torch.ops.aten.native_dropout_backward.default.tags  # replays the saved mask


def test_functional_and_inline_random_calls_counted_per_overload_and_stage():
    c = RandomOpCounter()
    x = torch.randn(4, 3, requires_grad=True)
    with c.active("forward"):
        y = F.dropout(x, 0.5, training=True)  # CPU: _dropout_impl -> bernoulli_ (Dropout.cpp)
        y = y + torch.randn(4, 3) + torch.rand_like(x)
        torch.randperm(5)
        torch.multinomial(torch.ones(3), 2)
        torch.empty(3).bernoulli_(0.3)
        F.dropout(x, 0.5, training=False)  # eval: returns the input, draws nothing
        F.dropout(x, 0.0, training=True)  # p=0: returns the input
    with c.active("backward"):
        y.sum().backward()  # dropout's backward multiplies by the saved mask: no draw
    with c.active("optimizer_step"):
        torch.randn(2)
    assert c.to_dict() == {
        "aten::bernoulli_.float": {"calls": 2, "stages": ["forward"]},
        "aten::multinomial": {"calls": 1, "stages": ["forward"]},
        "aten::rand_like": {"calls": 1, "stages": ["forward"]},
        "aten::randn": {"calls": 2, "stages": ["forward", "optimizer_step"]},
        "aten::randperm": {"calls": 1, "stages": ["forward"]},
    }


def test_data_build_and_to_device_are_not_watched():
    c = RandomOpCounter()
    for stage in ("build", "to_device", "data"):
        assert stage not in RANDOM_STAGES
        with c.active(stage):
            torch.randn(3)
            torch.nn.Linear(2, 2)  # kaiming_uniform_ / uniform_ initialisation
    assert c.to_dict() == {}


def test_tagged_op_with_dropout_switched_off_is_not_counted():
    c = RandomOpCounter()
    q = torch.randn(1, 2, 4, 8)
    with c.active("forward"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.0)  # tagged SDPA kernel, dropout_p=0: no draw
        torch.native_dropout(q, 0.5, False)  # train=False
        torch.native_dropout(q, 0.5, True)  # CUDA's fused path, called directly: draws
    assert c.to_dict() == {"aten::native_dropout": {"calls": 1, "stages": ["forward"]}}


def test_only_the_first_training_step_is_watched():
    c = RandomOpCounter()
    assert [c.watches("forward", i) for i in (0, 1, 2)] == [True, False, False]
    assert [c.watches("inference", 3), c.watches("checkpoint", 3), c.watches("data", 0)] == [True, True, False]


def test_one_mode_feeds_every_watcher():
    from mpsready.record.randomness import observing_mode

    seen = []

    class Watcher:
        def observe(self, func, args, kwargs):
            seen.append(str(func))

    c = RandomOpCounter()
    c.set_stage("forward")
    with observing_mode([c, Watcher()]):
        torch.randn(2) + 1
    assert seen == ["aten.randn.default", "aten.add.Tensor"]
    assert c.to_dict() == {"aten::randn": {"calls": 1, "stages": ["forward"]}}


def test_whole_step_form_counts_the_random_calls_of_step_0(tmp_path):
    from mpsready.record.recorder import record_entry

    (tmp_path / "ws.py").write_text(
        "import torch\n\n\ndef step():\n    w = torch.nn.Parameter(torch.ones(3))\n"
        "    opt = torch.optim.SGD([w], lr=0.1)\n\n    def run():\n        opt.zero_grad()\n"
        "        x = torch.randn(4, 3)\n        loss = torch.nn.functional.dropout(x * w, 0.5).sum()\n"
        "        loss.backward()\n        opt.step()\n        return loss\n\n    return run\n")
    rec = record_entry("ws.py:step", device="cpu", steps=3, out=tmp_path / "out", cwd=str(tmp_path), isolate=False)
    # the batch is made inside the step here, so its randn counts too; steps 1 and 2 are not watched
    assert rec.manifest["random_ops"] == {"aten::bernoulli_.float": {"calls": 1, "stages": ["step"]},
                                          "aten::randn": {"calls": 1, "stages": ["step"]}}
