"""The recording observer: plugs into the shared step runner and writes what each stage produced.

Keys and kinds (``mpsready.record.layout.KINDS``), per step (``step`` field):

* ``input:inputs`` / ``input:inputs.0`` / ``input:inputs.<key>`` / ``input:target``: the batch
  after ``data`` (paths into the batch structure, ``.``-joined);
* ``activation:<module path>#<call>``: a submodule's output in the ``forward`` stage (forward
  hook), ``<call>`` counting calls of that module within the step from 0; a module returning
  several tensors gives ``activation:<path>#<call>/<index path>`` (e.g. ``attn#0/0``);
* ``output:output`` (or ``output:output.0``, ...): the model output; ``loss:loss``;
* ``output:inference`` (``output:inference.0``, ...): the model output in the ``inference`` stage
  (``eval()`` under ``inference_mode``), once, with ``step`` = the last training step's index;
* ``grad:<param name>`` after ``backward``, in the order autograd accumulated them
  (``Tensor.register_post_accumulate_grad_hook``, PyTorch 2.1+ docs);
* ``param:<param name>`` after ``optimizer_step``.

Timing and memory: forward hooks summarise each output at once (a CPU copy, so a later
in-place op cannot change it and no device copy is held: peak device memory stays the step's
own). Before each hook the device queue is drained, so the step's own device work stays in its
time; the recording work (copy, statistics) is measured and subtracted from the step time
(``seconds``; ``seconds_with_recording`` keeps the raw figure) and from the stage's ``seconds``
(its ``extra.recording_seconds`` says how much). Draining the queue at every layer removes the
overlap of CPU launches with device work, so on CUDA/MPS the recorded times are upper bounds for
launch-bound steps.
"""

from __future__ import annotations

import resource
import sys
import time
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

from mpsready.record.stats import make_entry
from mpsready.step.runner import Observer, StepContext

Sink = Callable[[dict], None]


def flatten_tensors(obj: Any, prefix: str) -> list[tuple[str, Any]]:
    """``[(path, tensor)]`` for every tensor in nested tuples, lists and dicts, ``.``-joined paths."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [(prefix, obj)]
    out: list[tuple[str, Any]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += flatten_tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out += flatten_tensors(v, f"{prefix}.{i}" if prefix else str(i))
    elif hasattr(obj, "to_tuple"):  # transformers ModelOutput
        out += flatten_tensors(dict(obj), prefix)
    return out


def structure(obj: Any, prefix: str) -> dict[str, Any]:
    """A JSON description of a batch structure, tensors named by their path (for --synthetic-inputs).

    Non-tensor values keep only their type (``{"type": "value", "value_type": "int"}``), never their
    contents: a batch's ids, file names and text are research data and stay on the machine."""
    import torch

    if isinstance(obj, torch.Tensor):
        return {"type": "tensor", "name": prefix}
    if isinstance(obj, dict):
        return {"type": "dict", "items": {str(k): structure(v, f"{prefix}.{k}") for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"type": "list" if isinstance(obj, list) else "tuple",
                "items": [structure(v, f"{prefix}.{i}") for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return {"type": "value", "value_type": type(obj).__name__}
    return {"type": "value", "value_type": type(obj).__name__, "unsupported": True}


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (ru_maxrss: KiB on Linux, bytes on macOS)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


class RecordingObserver(Observer):
    """Writes tensor entries (``tensors``), events (``events``) and optional raw tensors (``raw``).

    ``results`` is the runner's live ``{stage: StageResult}`` so each ``stage_finished`` event
    carries the stage's result so far (the parent rebuilds them if the process dies).
    ``counter`` is a :class:`mpsready.record.mps.FallbackCounter` (MPS runs) or ``None``;
    ``mps`` an :class:`mpsready.record.mps.MPSBackend` for memory figures, or ``None``.
    ``random_ops`` a :class:`mpsready.record.randomness.RandomOpCounter` (the manifest's
    ``random_ops``), or ``None``.
    """

    def __init__(self, tensors: Sink, events: Sink, device: str, results: dict | None = None,
                 raw: Callable[[int, dict], None] | None = None, counter: Any = None, mps: Any = None,
                 random_ops: Any = None):
        self.tensors, self.events, self.device = tensors, events, device
        self.random_ops = random_ops
        self.results = results if results is not None else {}
        self.raw = raw
        self.counter = counter
        self.mps = mps
        self.stage: str | None = None
        self._order: dict[tuple[str, int], int] = {}
        self._calls: dict[str, int] = {}
        self._grad_order: list[str] = []
        self._raw_step: dict[str, Any] = {}
        self._hooked = False
        self._overhead = 0.0  # recording time within the current training step (subtracted from it)
        self._hook_seconds = 0.0  # recording time inside the current stage body (forward hooks)
        self._step = 0
        self._step_peak = 0
        self.input_structure: dict[str, Any] | None = None
        self.input_specs: list[dict[str, Any]] = []
        self.memory_kind = {"cuda": "torch.cuda.max_memory_allocated", "mps": "torch.mps.current_allocated_memory"
                            }.get(device.split(":")[0], "process peak RSS (ru_maxrss)")

    # -- helpers ---------------------------------------------------------------------
    def _emit(self, kind: str, name: str, step: int, tensor: Any, module_type: str | None = None) -> None:
        order = self._order.get((kind, step), 0)
        self._order[(kind, step)] = order + 1
        entry, cpu = make_entry(kind, name, step, order, tensor, module_type, keep=self.raw is not None)
        self.tensors(entry.to_dict())
        if self.raw is not None:
            self._raw_step[entry.key] = cpu

    def _hook_model(self, model: Any) -> None:
        import torch

        if self._hooked or not isinstance(model, torch.nn.Module):
            return
        self._hooked = True
        for path, module in model.named_modules():
            if path:
                module.register_forward_hook(self._forward_hook(path, type(module).__name__))
        model.register_forward_hook(self._inference_hook)
        for name, p in model.named_parameters():
            if p.requires_grad and hasattr(p, "register_post_accumulate_grad_hook"):
                p.register_post_accumulate_grad_hook(self._grad_hook(name))

    def _forward_hook(self, path: str, type_name: str):
        def hook(module: Any, args: Any, out: Any) -> None:
            if self.stage != "forward":
                return
            call = self._calls.get(path, 0)
            self._calls[path] = call + 1
            with self._timed_in_stage():
                import torch

                if isinstance(out, torch.Tensor):
                    self._emit("activation", f"{path}#{call}", self._step, out, type_name)
                else:
                    for sub, t in flatten_tensors(out, ""):
                        self._emit("activation", f"{path}#{call}/{sub}", self._step, t, type_name)
        return hook

    def _inference_hook(self, module: Any, args: Any, out: Any) -> None:
        if self.stage == "inference":
            with self._timed_in_stage():
                for n, t in flatten_tensors(out, "inference"):
                    self._emit("output", n, self._step, t)

    @contextmanager
    def _timed_in_stage(self) -> Iterator[None]:
        """Time recording work done inside a stage body, after waiting for the device.

        The statistics are taken right away (a CPU copy), so no device copy is held and peak
        memory stays the step's own. Waiting for the queued device work first keeps that work
        in the step's time; only the copy and the statistics are subtracted.
        """
        from mpsready.step.runner import synchronize

        synchronize(self.device)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self._hook_seconds += dt
            self._overhead += dt

    def _grad_hook(self, name: str):
        def hook(param: Any) -> None:
            if self.stage == "backward" and name not in self._grad_order:
                self._grad_order.append(name)
        return hook

    def _memory_now(self) -> int | None:
        kind = self.device.split(":")[0]
        try:
            if kind == "cuda":
                import torch

                return int(torch.cuda.max_memory_allocated(self.device))
            if kind == "mps" and self.mps is not None:
                return int(self.mps.current_allocated_memory())
        except Exception:
            return None
        return peak_rss_bytes()

    # -- observer callbacks ------------------------------------------------------------
    def stage_started(self, ctx: StepContext, stage: str) -> None:
        if stage in ("data", "step"):  # first stage of a training step: its overhead and peak start here
            self._overhead, self._step_peak = 0.0, 0
        t0 = time.perf_counter()
        self.stage = stage
        self._step = ctx.step_index
        self._hook_seconds = 0.0
        if stage in ("data", "step") and self.device.startswith("cuda"):
            import torch

            torch.cuda.reset_peak_memory_stats(self.device)
        if stage == "forward":
            self._calls.clear()
        if stage == "backward":
            self._grad_order.clear()
        self.events({"event": "stage_started", "stage": stage, "step": ctx.step_index})
        self._overhead += time.perf_counter() - t0

    @contextmanager
    def around_stage(self, ctx: StepContext, stage: str) -> Iterator[None]:
        from mpsready.record.randomness import observing_mode

        watchers = []
        for w in (self.counter, self.random_ops):
            if w is not None and getattr(w, "watches", lambda s, i: True)(stage, ctx.step_index):
                w.set_stage(stage)
                watchers.append(w)
        # one dispatch mode for both (fallback counting on MPS, random operators): one Python dispatch per op
        with (observing_mode(watchers) if watchers else nullcontext()):
            yield

    def stage_finished(self, ctx: StepContext, stage: str, ok: bool) -> None:
        t0 = time.perf_counter()
        i = ctx.step_index
        self.stage = None
        if ok:
            if stage == "build":
                from mpsready.env.torchinfo import precision_settings

                self.events({"event": "precision", "precision": precision_settings()})
                self.events({"event": "form", "whole": bool(ctx.step is not None and ctx.step.whole)})
            elif stage == "to_device":
                self._hook_model(ctx.model)
            elif stage == "data":
                for name, t in flatten_tensors(ctx.inputs, "inputs") + flatten_tensors(ctx.target, "target"):
                    self._emit("input", name, i, t)
                if self.input_structure is None:
                    self.input_structure = {"inputs": structure(ctx.inputs, "inputs"),
                                            "target": structure(ctx.target, "target")}
                    self.input_specs = [_input_spec(n, t) for n, t in
                                        flatten_tensors(ctx.inputs, "inputs") + flatten_tensors(ctx.target, "target")]
                    self.events({"event": "inputs", "structure": self.input_structure, "tensors": self.input_specs})
            elif stage == "forward":
                for name, t in flatten_tensors(ctx.output, "output"):
                    self._emit("output", name, i, t)
            elif stage in ("loss", "step"):
                import torch

                if isinstance(ctx.loss, torch.Tensor):
                    self._emit("loss", "loss", i, ctx.loss)
            elif stage == "backward":
                params = dict(ctx.model.named_parameters()) if ctx.model is not None else {}
                names = self._grad_order + [n for n in params if n not in self._grad_order]
                for n in names:
                    g = params[n].grad if n in params else None
                    if g is not None:
                        self._emit("grad", n, i, g)
            elif stage == "optimizer_step" and ctx.model is not None:
                for n, p in ctx.model.named_parameters():
                    self._emit("param", n, i, p)
        mem = self._memory_now()
        if mem is not None:
            self._step_peak = max(self._step_peak, mem)
        res = self.results.get(stage)
        if res is not None and self._hook_seconds:
            # the stage body's time included the forward hooks' statistics: report it apart
            res.seconds = max(res.seconds - self._hook_seconds, 0.0)
            res.extra["recording_seconds"] = round(res.extra.get("recording_seconds", 0.0) + self._hook_seconds, 6)
            self._hook_seconds = 0.0
        self.events({"event": "stage_finished", "stage": stage, "step": i, "ok": ok,
                     "result": res.to_dict() if res is not None else None})
        self._overhead += time.perf_counter() - t0

    def step_finished(self, ctx: StepContext, index: int, loss: float | None, seconds: float) -> None:
        metrics: dict[str, Any] = {"index": index, "loss": loss, "seconds": max(seconds - self._overhead, 0.0),
                                   "seconds_with_recording": seconds,
                                   "peak_memory_bytes": self._step_peak or None,
                                   "memory_source": self.memory_kind}
        if self.device.startswith("mps") and self.mps is not None:
            try:
                metrics["mps_driver_allocated_bytes"] = self.mps.driver_allocated_memory()
            except Exception:
                pass
        if self.raw is not None and self._raw_step:
            self.raw(index, self._raw_step)
            self._raw_step = {}
        self.events({"event": "step", "metrics": metrics})
        self._overhead = 0.0
        self._step_peak = 0


def _input_spec(name: str, t: Any) -> dict[str, Any]:
    """Shape, dtype and value range of an input tensor (what --synthetic-inputs replays)."""
    from mpsready.record.stats import cpu_copy, dtype_name, tensor_stats

    s = tensor_stats(cpu_copy(t))
    return {"name": name, "shape": [int(d) for d in t.shape], "dtype": dtype_name(t), "min": s.min, "max": s.max}
