"""What ``mpsready record`` adds for numerics triage: the NaN check and ``--save-inputs LAYER``.

* The NaN check costs the recorded steps nothing. The recording itself already takes NaN/Inf counts of
  every recorded tensor (inputs, each module's output, the loss, gradients, parameters after the optimizer
  step; :mod:`mpsready.record.stats`); :class:`NonFiniteSeen` notes the first one that holds any. Only
  then, after the recording, :func:`locate_nonfinite` runs the entry again in the worker from the same seed
  for steps 0..k (k: that tensor's step) and watches every aten call of step k with a
  :class:`RecordWatch` (an :class:`~mpsready.numerics.watch.OpWatch` as a watcher of record's observing
  dispatch mode, :func:`mpsready.record.randomness.observing_mode`, ``wants_result``), from ``data`` on.
  On ``cuda``/``mps`` the checks there are deferred to the end of each stage (no synchronisation per op).
  A step that is not deterministic (unseeded randomness, nondeterministic kernels) may not make the NaN
  again: the manifest then says so (``note``) and keeps the recorded tensor (``nonfinite_seen``).
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
from collections.abc import Iterator
from contextlib import contextmanager
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
        from mpsready.frames import UserFrames

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


class NonFiniteSeen:
    """A tensor sink (``tensors.jsonl`` lines) that passes every entry on and keeps the first whose statistics
    count a NaN or Inf: ``{"key", "kind", "step", "nan", "inf"}``."""

    def __init__(self, sink: Any):
        self.sink = sink
        self.first: dict[str, Any] | None = None

    def __call__(self, doc: dict[str, Any]) -> None:
        if self.first is None:
            st = doc.get("stats") or {}
            if st.get("nan") or st.get("inf"):
                self.first = {"key": doc.get("key"), "kind": doc.get("kind"), "step": doc.get("step"),
                              "nan": st.get("nan", 0), "inf": st.get("inf", 0)}
        self.sink(doc)


class _AtStep(Observer):
    """Enters the observing mode with ``watch`` for the stages of training step ``step`` only."""

    def __init__(self, watch: RecordWatch, step: int):
        self.watch, self.step = watch, step

    @contextmanager
    def around_stage(self, ctx: Any, stage: str) -> Iterator[None]:
        from mpsready.record.randomness import observing_mode

        if ctx.step_index != self.step or not self.watch.watches(stage, ctx.step_index):
            yield
            return
        self.watch.set_step(ctx.step_index)
        self.watch.set_stage(stage)
        with observing_mode([self.watch]):
            yield

    def stage_finished(self, ctx: Any, stage: str, ok: bool) -> None:
        self.watch.flush()


def locate_nonfinite(spec: dict[str, Any], seen: dict[str, Any] | None, roots: list[str],
                     seed_everything: Any) -> dict[str, Any]:
    """The manifest's numerics after a recording (module docstring): ``{"nan_check": True, "nonfinite_seen":
    seen, "first_nonfinite": ..., "rerun_steps", "checked", "note"}``. ``spec``: the worker's spec;
    ``seen``: :attr:`NonFiniteSeen.first`. Never raises: a failing re-run is described in ``note``."""
    out: dict[str, Any] = {"nan_check": True, "nonfinite_seen": seen, "first_nonfinite": None,
                           "method": "re-run of steps 0..k from the same seed, every aten call of step k checked"}
    if seen is None:
        return out
    import warnings

    from mpsready.record.transform import wrap_entry
    from mpsready.step.entry import load_entry
    from mpsready.step.runner import StepRunner

    step = int(seen.get("step") or 0)
    watch = RecordWatch(roots, spec["device"])
    try:
        seed = int(spec.get("seed", 0))
        seed_everything(seed)
        entry = wrap_entry(load_entry(spec["entry"], cwd=spec.get("cwd")), float64=bool(spec.get("float64")),
                           synthetic=spec.get("synthetic"), seed=seed)
        runner = StepRunner(entry, device=spec["device"], steps=step + 1)
        runner.observers = [_AtStep(watch, step)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the recording already counted the step's warnings
            runner.run()
    except Exception as exc:  # noqa: BLE001 (the step raised in the re-run; the recording stands)
        out["note"] = f"the re-run to locate the op raised {type(exc).__name__}: {exc}"[:300]
        return out
    d = watch.to_dict()
    out.update(first_nonfinite=d["first_nonfinite"], rerun_steps=step + 1, checked=d["checked"])
    if d["first_nonfinite"] is None:
        out["note"] = (f"{seen['key']} held NaN/Inf at step {step}, but the re-run from the same seed made none "
                       "(the step is not deterministic here); the op is not located")
    return out


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
