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
(SDPA without dropout, an LSTM without dropout) or ``train=False``.

The stages watched are the step's own (:data:`RANDOM_STAGES`). ``build`` (weight initialisation),
``to_device`` and ``data`` (synthetic batches) use the generator too, but a shared seed gives both
runs of a comparison the same weights and batches there, because models and batches are made on the
CPU. In the whole-step form (``step_fn``) the batch is made inside ``step``, so its random calls
count. Only the first training step is watched (plus ``checkpoint`` and ``inference``, which run
once): the mode costs about 7 us per op on the CPU, and the later steps, whose median is the step
time PRF101 reports, then carry none of it. A step that draws only in later steps is missed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

RANDOM_STAGES = frozenset({"forward", "loss", "backward", "optimizer_step", "checkpoint", "inference", "step"})
_ONCE = frozenset({"checkpoint", "inference"})  # stages run once, after the training steps
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
    sorted, stages in first-call order). A stage outside :data:`RANDOM_STAGES` is not watched, nor are
    training steps after the first (:meth:`watches`): the counts are those of step 0, ``checkpoint`` and
    ``inference``.
    """

    def __init__(self) -> None:
        import torch

        self._tag = torch.Tag.nondeterministic_seeded
        self._random: dict[int, str | None] = {}  # id(OpOverload) -> name if tagged, else None
        self.calls: Counter[str] = Counter()
        self.stages: dict[str, list[str]] = {}
        self._stage = "?"

    def observe(self, func: Any, args: tuple, kwargs: dict) -> None:
        key = id(func)  # OpOverloads live as long as torch; their __hash__ is a Python method
        try:
            name = self._random[key]
        except KeyError:
            name = self._random[key] = self._name_if_random(func)
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

    def watches(self, stage: str, step: int = 0) -> bool:
        """Whether ``stage`` of training step ``step`` is watched: the step's stages of step 0 only, and
        ``checkpoint``/``inference`` (which run once). Later steps run without the mode, so the step times
        PRF101 takes (the median of steps 1+) carry none of its cost (about 7 us per op on the CPU)."""
        return stage in RANDOM_STAGES and (step == 0 or stage in _ONCE)

    def set_stage(self, stage: str) -> None:
        self._stage = stage

    def active(self, stage: str) -> Any:
        """A dispatch mode counting this stage's calls (a null context for a stage not watched)."""
        from contextlib import nullcontext

        if not self.watches(stage):
            return nullcontext()
        self.set_stage(stage)
        return observing_mode([self])

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {n: {"calls": self.calls[n], "stages": list(self.stages[n])} for n in sorted(self.calls)}


_MODE: type | None = None


def observing_mode(watchers: list[Any]) -> Any:
    """One ``TorchDispatchMode`` that runs each call, then hands ``(func, args, kwargs)`` to every
    watcher's ``observe`` (:class:`RandomOpCounter`, :class:`mpsready.record.mps.FallbackCounter`), or
    ``(func, args, kwargs, result)`` to ``observe_call`` of a watcher with ``wants_result`` (the NaN check), so
    an MPS recording pays the Python dispatch of one mode per op, not one per watcher. A call that
    raises is not observed (without ``PYTORCH_ENABLE_MPS_FALLBACK`` an op without an MPS kernel raises
    instead of falling back: a failed stage, finding OPS201)."""
    global _MODE
    if _MODE is None:
        from torch.utils._python_dispatch import TorchDispatchMode

        class _ObservingMode(TorchDispatchMode):
            def __init__(self, watchers: list[Any]):
                super().__init__()
                self.watchers = [w for w in watchers if not getattr(w, "wants_result", False)]
                # watchers that also read the result (mpsready.record.numerics_hook.RecordWatch)
                self.result_watchers = [w for w in watchers if getattr(w, "wants_result", False)]

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                for w in self.watchers:
                    w.observe(func, args, kwargs)
                for w in self.result_watchers:
                    w.observe_call(func, args, kwargs, out)
                return out

        _MODE = _ObservingMode
    return _MODE(watchers)
