"""The stages of a step as the step runner runs them (:mod:`mpsready.step.runner`), in order, and which of them
the prediction leaves to the host."""

from __future__ import annotations

HOST_STAGES = frozenset({"build"})  # models are usually made on the CPU: not predicted
STAGE_ORDER = ("build", "to_device", "data", "forward", "loss", "backward", "optimizer_step", "checkpoint",
               "inference", "step")
GRAD_OFF_STAGES = frozenset({"inference", "checkpoint"})  # the runner's stages without autograd


def stage_key(stage: str) -> int:
    """Sort key of ``stage``: its place in :data:`STAGE_ORDER`, unknown stages last."""
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER)
