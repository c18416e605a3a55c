"""The entry contract.

``ENTRY`` names a function (``package.module:function`` or ``path/to/file.py:function``).
The function may take a ``device`` keyword (it then receives ``"cpu"``, ``"cuda"``,
``"mps"``, ...); it is called once and returns one of:

1. a :class:`Step` (or a ``dict`` with the same keys) holding the pieces of one
   training step::

       def step(device="cpu"):
           model = torchvision.models.resnet18(num_classes=10)
           batch = (torch.randn(8, 3, 64, 64), torch.randint(0, 10, (8,)))
           return Step(model=model, batch=batch, loss_fn=torch.nn.functional.cross_entropy,
                       optimizer=torch.optim.AdamW(model.parameters(), lr=1e-3))

   * ``model``: a ``torch.nn.Module``; the runner moves it to the device.
   * ``batch``: ``(inputs, target)``, or ``inputs`` alone when the loss needs no target,
     or a zero-argument callable producing either. ``inputs`` may be a tensor (called as
     ``model(x)``), a tuple or list (``model(*xs)``) or a dict (``model(**kw)``). Tensors
     anywhere in it are moved to the device.
   * ``loss_fn``: called as ``loss_fn(output, target)`` (or ``loss_fn(output)`` with no
     target); ``None`` when the model's output already is the scalar loss.
   * ``optimizer``: a ``torch.optim.Optimizer`` built on the model's parameters, or a
     callable ``params -> Optimizer`` (built after the model was moved); optional.
   * ``inference_batch``: inputs for the inference stage (default: the training inputs).
   * ``inference_grad``: True when evaluation itself needs autograd (input gradients of a physics-informed
     loss, saliency maps): the inference stage then runs with grad enabled instead of under
     ``torch.inference_mode()`` (default False).

2. in the simplest form, a zero-argument callable that performs one whole step on the
   device and returns the loss tensor. Its stages cannot be told apart, so the run has
   the stages ``build`` and ``step`` only.

Stages, in order (:data:`STAGES`): ``build`` (call the entry), ``to_device`` (move the
model), ``data`` (produce the batch, move it), ``forward``, ``loss``, ``backward``,
``optimizer_step``, ``checkpoint`` (``state_dict`` of model and optimizer saved with
``torch.save`` to memory and reloaded with ``torch.load(weights_only=True)``; nothing is
written to disk), ``inference`` (``model.eval()`` under ``torch.inference_mode()``, or with grad enabled when
the step sets ``inference_grad``).
A failed stage is reported with its traceback; the stages that depend on it are
``not_run``; the others still run.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

STAGES = (
    "build",
    "to_device",
    "data",
    "forward",
    "loss",
    "backward",
    "optimizer_step",
    "checkpoint",
    "inference",
)
WHOLE_STEP_STAGES = ("build", "step")

# Which earlier stages each stage needs; a failed dependency marks it not_run.
DEPENDS_ON: Mapping[str, tuple[str, ...]] = {
    "build": (),
    "to_device": ("build",),
    "data": ("build",),
    "forward": ("to_device", "data"),
    "loss": ("forward",),
    "backward": ("loss",),
    "optimizer_step": ("backward",),
    "checkpoint": ("to_device",),
    "inference": ("to_device", "data"),
    "step": ("build",),
}


@dataclass
class Step:
    """The pieces of one representative training step (see the module docstring)."""

    model: Any = None
    batch: Any = None
    loss_fn: Callable[..., Any] | None = None
    optimizer: Any = None
    inference_batch: Any = None
    inference_grad: bool = False
    step_fn: Callable[[], Any] | None = None

    @classmethod
    def coerce(cls, value: Any) -> "Step":
        """Turn an entry's return value into a :class:`Step`; raises ``TypeError`` otherwise."""
        if isinstance(value, Step):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(cls.__dataclass_fields__)
            if unknown:
                raise TypeError(f"entry returned unknown step keys: {sorted(unknown)}")
            return cls(**value)
        if callable(value) and not _is_module(value):
            return cls(step_fn=value)
        raise TypeError(
            "entry must return a mpsready.step.Step, a dict with keys model/batch/loss_fn/optimizer, "
            f"or a zero-argument callable performing one step; got {type(value).__name__}"
        )

    @property
    def whole(self) -> bool:
        return self.step_fn is not None and self.model is None


def _is_module(value: Any) -> bool:
    try:
        import torch

        return isinstance(value, torch.nn.Module)
    except ImportError:  # pragma: no cover - the runner needs torch anyway
        return False


class StageStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # raised an exception
    CRASHED = "crashed"  # killed the process (abort, segfault): seen by the parent of a subprocess run
    NOT_RUN = "not_run"  # a stage it depends on failed
    SKIPPED = "skipped"  # not applicable (no optimizer, whole-step entry)


@dataclass
class StageResult:
    """The outcome of one stage over all the steps it ran. ``seconds`` is wall time summed over steps."""

    stage: str
    status: StageStatus
    seconds: float = 0.0
    error_type: str | None = None
    error: str | None = None
    traceback: str | None = None
    reason: str | None = None  # why skipped or not run
    steps_run: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"stage": self.stage, "status": self.status.value, "seconds": round(self.seconds, 6),
             "steps_run": self.steps_run}
        for k in ("error_type", "error", "traceback", "reason"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        if self.extra:
            d["extra"] = self.extra
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StageResult":
        return cls(stage=d["stage"], status=StageStatus(d["status"]), seconds=d.get("seconds", 0.0),
                   error_type=d.get("error_type"), error=d.get("error"), traceback=d.get("traceback"),
                   reason=d.get("reason"), steps_run=d.get("steps_run", 0), extra=dict(d.get("extra") or {}))
