"""Which random operators a recorded step called (the manifest's ``random_ops``).

A thin ``TorchDispatchMode`` (``torch.utils._python_dispatch``, PyTorch 2.0+) looks at each
aten call of the step's stages and keeps the ones whose overload carries the tag
``torch.Tag.nondeterministic_seeded``. The tag is declared in
``aten/src/ATen/native/tags.yaml`` ("the operator intentionally produces different results when
run twice on the same inputs, but this randomness is controlled by a Generator") and set per
function in ``native_functions.yaml``; in PyTorch 2.13 it carries 107 overloads, among them
``bernoulli_.float``/``bernoulli.p``, ``native_dropout``, ``rand``/``randn``/``randint``/``randperm``
and their ``_like`` forms, ``multinomial``, ``normal_``, ``uniform_``, ``random_``, ``exponential_``,
``rrelu_with_noise``, ``poisson``, the fused SDPA kernels (they take ``dropout_p``) and
``lstm``/``gru``/``rnn_*`` (they take ``dropout``).

What the mode sees is what the kernel path dispatches below autograd, so composite functions show
as their callees: on the CPU (and on MPS) ``F.dropout`` in training calls ``aten::bernoulli_.float``
(``_dropout_impl``), while CUDA calls the fused ``aten::native_dropout``
(``is_fused_kernel_acceptable``, aten/src/ATen/native/Dropout.cpp, 2.0-2.13).

Calls that cannot draw are left out: a tagged op called with ``dropout_p``/``dropout`` equal to 0
(SDPA without dropout, an LSTM without dropout) or ``train=False``. The stages watched are the
step's own (:data:`RANDOM_STAGES`): ``build`` (weight initialisation), ``to_device`` and ``data``
(synthetic batches) use the generator too, but a shared seed gives both runs of a comparison the
same weights and batches there, because models and batches are made on the CPU. In the whole-step
form (``step_fn``) the batch is made inside ``step``, so its random calls count.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

RANDOM_STAGES = frozenset({"forward", "loss", "backward", "optimizer_step", "checkpoint", "inference", "step"})
# Arguments that switch a tagged op's randomness off (schema argument names in native_functions.yaml 2.13).
_OFF_WHEN_ZERO = ("dropout_p", "dropout")
_OFF_WHEN_FALSE = ("train",)


def _draws(func: Any, args: tuple, kwargs: dict) -> bool:
    """False when the call's own arguments switch its randomness off (module docstring)."""
    schema = func._schema.arguments
    for i, a in enumerate(schema):
        if a.name not in _OFF_WHEN_ZERO and a.name not in _OFF_WHEN_FALSE:
            continue
        v = args[i] if i < len(args) else kwargs.get(a.name, a.default_value if a.has_default_value() else None)
        if a.name in _OFF_WHEN_ZERO and isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0:
            return False
        if a.name in _OFF_WHEN_FALSE and v is False:
            return False
    return True


class RandomOpCounter:
    """Counts calls of random aten overloads per stage; ``with counter.active(stage):`` around a stage.

    ``to_dict()`` gives ``{"aten::bernoulli_.float": {"calls": 4, "stages": ["forward"]}}`` (overloads
    sorted, stages in first-call order). A stage outside :data:`RANDOM_STAGES` is not watched.
    """

    def __init__(self) -> None:
        import torch

        self._tag = torch.Tag.nondeterministic_seeded
        self._random: dict[Any, str | None] = {}  # OpOverload -> name if tagged, else None (cached per op)
        self.calls: Counter[str] = Counter()
        self.stages: dict[str, list[str]] = {}
        self._stage = "?"

    def observe(self, func: Any, args: tuple, kwargs: dict) -> None:
        try:
            name = self._random[func]
        except KeyError:
            name = self._random[func] = self._name_if_random(func)
        if name is None or not _draws(func, args, kwargs):
            return
        self.calls[name] += 1
        seen = self.stages.setdefault(name, [])
        if self._stage not in seen:
            seen.append(self._stage)

    def _name_if_random(self, func: Any) -> str | None:
        if self._tag not in getattr(func, "tags", ()):
            return None
        from mpsready.record.mps import op_name

        return op_name(func)

    def active(self, stage: str) -> Any:
        from contextlib import nullcontext

        if stage not in RANDOM_STAGES:
            return nullcontext()
        self._stage = stage
        return _make_mode()(self)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {n: {"calls": self.calls[n], "stages": list(self.stages[n])} for n in sorted(self.calls)}


_MODE: type | None = None


def _make_mode() -> type:
    global _MODE
    if _MODE is not None:
        return _MODE
    from torch.utils._python_dispatch import TorchDispatchMode

    class _RandomOpMode(TorchDispatchMode):
        def __init__(self, counter: RandomOpCounter):
            super().__init__()
            self.counter = counter

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.counter.observe(func, args, kwargs)
            return func(*args, **kwargs)

    _MODE = _RandomOpMode
    return _MODE
