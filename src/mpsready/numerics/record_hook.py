"""What ``mpsready record`` adds for numerics triage: the NaN check and ``--save-inputs LAYER``.

* :class:`RecordWatch`: an :class:`~mpsready.numerics.watch.OpWatch` as a watcher of record's one observing
  dispatch mode (:func:`mpsready.record.randomness.observing_mode`, ``wants_result``), for every stage of
  every step from ``data`` on (``build`` and ``to_device`` make and move the model; they are not watched).
  On ``cuda``/``mps`` the checks are deferred to the end of each stage (no synchronisation per op).
* :class:`LayerInputSaver`: a step-runner observer that hooks the module named ``LAYER`` once the model is
  on the device and, at the first call of that module in each step's ``forward``, writes its positional
  tensor inputs (``input.N``), keyword tensor inputs (``kwarg.NAME``), its tensor output(s) (``output`` or
  ``output.N``) and its parameters and buffers (``state.NAME``) to
  ``RUN/layer_inputs/LAYER/step-NNNN.safetensors``, with ``{"layer", "module_type", "step", "args"}`` in the
  file's metadata (``args``: JSON, the positional layout, ``"t"`` for a tensor, else the value if it is a
  JSON scalar). Safetensors only (``safetensors.torch.save_file``): nothing is pickled.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mpsready.numerics.watch import OpWatch
from mpsready.step.runner import Observer

WATCHED_STAGES = frozenset({"data", "forward", "loss", "backward", "optimizer_step", "step", "checkpoint",
                            "inference"})
LAYER_DIR = "layer_inputs"


def layer_file(layer: str, step: int) -> str:
    """``layer_inputs/<layer>/step-NNNN.safetensors`` (relative to the record)."""
    return f"{LAYER_DIR}/{layer}/step-{step:04d}.safetensors"


class RecordWatch:
    """The NaN check as a watcher of record's observing mode (module docstring)."""

    wants_result = True

    def __init__(self, roots: list[str], device: str):
        from mpsready.trace.frames import UserFrames

        frames = UserFrames(roots)
        self.watch = OpWatch(locate=lambda: frames.locate(3), nan_check=True,
                             deferred=device.split(":")[0] in ("cuda", "mps"))
        self._infos: dict[int, tuple[str, bool]] = {}

    def watches(self, stage: str, step: int = 0) -> bool:
        return self.watch.first is None and not self.watch.gave_up and stage in WATCHED_STAGES

    def set_stage(self, stage: str) -> None:
        self.watch.stage = stage

    def set_step(self, step: int) -> None:
        self.watch.step = step

    def observe_call(self, func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        info = self._infos.get(id(func))
        if info is None:
            from mpsready.record.mps import op_name

            a = func._schema.arguments
            info = self._infos[id(func)] = (op_name(func), bool(a) and a[0].alias_info is not None
                                            and a[0].alias_info.is_write)
        self.watch.observe(info[0], args, kwargs, out, inplace=info[1])

    def flush(self) -> None:
        self.watch.flush()

    def to_dict(self) -> dict[str, Any]:
        return self.watch.to_dict()


class LayerInputSaver(Observer):
    """``--save-inputs LAYER`` (module docstring). ``out``: the record directory being written. Raises nothing
    during the step; a layer name the model lacks is reported in :attr:`error` (the manifest's
    ``layer_inputs.error``)."""

    def __init__(self, layer: str, out: str | os.PathLike[str]):
        self.layer = layer
        self.out = Path(out)
        self.stage: str | None = None
        self.step = 0
        self.saved: list[int] = []
        self.error: str | None = None
        self.module_type: str | None = None
        self._done_step: int | None = None
        self._hooked = False

    def stage_started(self, ctx: Any, stage: str) -> None:
        self.stage, self.step = stage, ctx.step_index

    def stage_finished(self, ctx: Any, stage: str, ok: bool) -> None:
        if stage == "to_device" and ok and not self._hooked:
            self._hook(ctx.model)
        self.stage = None

    def _hook(self, model: Any) -> None:
        import torch

        self._hooked = True
        if not isinstance(model, torch.nn.Module):
            self.error = "the entry's model is not a torch.nn.Module"
            return
        mods = dict(model.named_modules())
        if self.layer not in mods:
            names = [n for n in mods if n][:20]
            self.error = f"the model has no module named {self.layer!r} (modules: {', '.join(names)})"
            return
        mod = mods[self.layer]
        self.module_type = type(mod).__name__
        mod.register_forward_hook(self._save, with_kwargs=True)

    def _save(self, module: Any, args: tuple, kwargs: dict, out: Any) -> None:
        import torch
        from safetensors.torch import save_file

        if self.stage != "forward" or self._done_step == self.step:
            return
        self._done_step = self.step
        tensors: dict[str, Any] = {}
        layout: list[Any] = []

        def keep(name: str, t: Any) -> None:
            tensors[name] = t.detach().to("cpu").contiguous().clone()

        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                keep(f"input.{i}", a)
                layout.append("t")
            else:
                layout.append(a if isinstance(a, (int, float, bool, str)) or a is None else repr(type(a).__name__))
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                keep(f"kwarg.{k}", v)
        if isinstance(out, torch.Tensor):
            keep("output", out)
        elif isinstance(out, (list, tuple)):
            for i, t in enumerate(out):
                if isinstance(t, torch.Tensor):
                    keep(f"output.{i}", t)
        for n, t in list(module.named_parameters()) + list(module.named_buffers()):
            keep(f"state.{n}", t)
        tensors = {k: v for k, v in tensors.items() if not v.is_complex()}  # safetensors has no complex dtype
        path = self.out / layer_file(self.layer, self.step)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file(tensors, str(path), metadata={"layer": self.layer, "module_type": self.module_type or "",
                                                "step": str(self.step), "args": json.dumps(layout)})
        self.saved.append(self.step)

    def to_dict(self) -> dict[str, Any]:
        """The manifest's ``layer_inputs``: ``{"layer", "module_type", "steps", "files", "error"}``."""
        return {"layer": self.layer, "module_type": self.module_type, "steps": list(self.saved),
                "files": [layer_file(self.layer, s) for s in self.saved], "error": self.error}
