"""Run a :class:`~mpsready.step.contract.Step` stage by stage on one device.

The runner is shared by ``trace`` (which observes the aten operators of each stage)
and ``record`` (which observes statistics, timings and memory). Both plug in through
:class:`Observer`; the runner itself only sequences stages, times them with device
synchronisation and localises failures.
"""

from __future__ import annotations

import io
import time
import traceback as _tb
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from mpsready.step.contract import DEPENDS_ON, STAGES, WHOLE_STEP_STAGES, Step, StageResult, StageStatus
from mpsready.step.entry import Entry


@dataclass
class StepContext:
    """What observers can see while the step runs."""

    device: str
    entry: Entry | None = None
    step: Step | None = None
    model: Any = None
    optimizer: Any = None
    inputs: Any = None
    target: Any = None
    output: Any = None
    loss: Any = None
    step_index: int = 0
    losses: list[float | None] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)


class Observer:
    """Callbacks around stages. All default to doing nothing; override what you need."""

    def stage_started(self, ctx: StepContext, stage: str) -> None: ...

    def stage_finished(self, ctx: StepContext, stage: str, ok: bool) -> None: ...

    def step_finished(self, ctx: StepContext, index: int, loss: float | None, seconds: float) -> None: ...

    @contextmanager
    def around_stage(self, ctx: StepContext, stage: str) -> Iterator[None]:
        """Wraps the stage body itself (a dispatch mode, autograd hooks); default does nothing."""
        yield


def synchronize(device: str) -> None:
    """Wait for queued device work so wall times are real (CUDA and MPS run asynchronously).

    Uses ``torch.cuda.synchronize`` and ``torch.mps.synchronize`` (PyTorch docs,
    torch.cuda / torch.mps, 2.0+).
    """
    import torch

    kind = device.split(":")[0]
    if kind == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize(device)
    elif kind == "mps" and hasattr(torch, "mps"):
        torch.mps.synchronize()


def to_device(obj: Any, device: str) -> Any:
    """Move every tensor inside nested tuples, lists and dicts to ``device``."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(to_device(x, device) for x in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(x, device) for x in obj)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    return obj


def call_model(model: Any, inputs: Any) -> Any:
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (list, tuple)):
        return model(*inputs)
    return model(inputs)


def split_batch(batch: Any) -> tuple[Any, Any]:
    """``(inputs, target)`` pairs split; anything else is inputs with no target."""
    if isinstance(batch, tuple) and len(batch) == 2 and not hasattr(batch, "_fields"):
        return batch[0], batch[1]
    return batch, None


def loss_value(loss: Any) -> float | None:
    try:
        return float(loss.detach().float().cpu().item())
    except Exception:
        return None


class StepRunner:
    """Runs an entry for ``steps`` training steps on ``device`` and returns one result per stage."""

    def __init__(self, entry: Entry, device: str = "cpu", steps: int = 1, observers: list[Observer] | None = None):
        if steps < 1:
            raise ValueError("steps must be >= 1")
        self.entry = entry
        self.device = device
        self.steps = steps
        self.observers = list(observers or [])
        self.ctx = StepContext(device=device, entry=entry)
        self.results: dict[str, StageResult] = {}

    # -- stage plumbing -------------------------------------------------------------
    def _blocked(self, stage: str) -> str | None:
        for dep in DEPENDS_ON.get(stage, ()):
            r = self.results.get(dep)
            if r is None:  # an earlier failure kept the dependency from running at all
                return f"{dep} not reached"
            if r.status in (StageStatus.FAILED, StageStatus.CRASHED, StageStatus.NOT_RUN):
                return f"{dep} {r.status.value}"
        return None

    def _run(self, stage: str, fn) -> bool:
        """Run one stage body (possibly again for a later step); returns True when it passed."""
        res = self.results.get(stage)
        if res is None:
            res = self.results[stage] = StageResult(stage, StageStatus.PASSED)
        reason = self._blocked(stage)
        if reason:
            res.status, res.reason = StageStatus.NOT_RUN, reason
            return False
        for o in self.observers:
            o.stage_started(self.ctx, stage)
        t0 = time.perf_counter()
        ok = True
        try:
            with _nested(self.observers, self.ctx, stage):
                fn()
                synchronize(self.device)
        except (Exception, SystemExit) as exc:  # the user's code failed: localise it to this stage
            # SystemExit too: a step that calls sys.exit() must not end mpsready with the user's status
            ok = False
            res.status = StageStatus.FAILED
            res.error_type = type(exc).__name__
            res.error = f"the step called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else str(exc)
            res.traceback = _tb.format_exc()
        res.seconds += time.perf_counter() - t0
        res.steps_run += 1
        for o in self.observers:
            o.stage_finished(self.ctx, stage, ok)
        return ok

    def _skip(self, stage: str, reason: str) -> None:
        self.results[stage] = StageResult(stage, StageStatus.SKIPPED, reason=reason)

    # -- the stages -----------------------------------------------------------------
    def run(self) -> list[StageResult]:
        ctx = self.ctx

        def build() -> None:
            ctx.step = Step.coerce(self.entry.call(self.device))

        if not self._run("build", build):
            return self._finish(STAGES)
        step = ctx.step
        assert step is not None
        if step.whole:
            return self._run_whole(step)

        def move() -> None:
            ctx.model = step.model.to(self.device) if step.model is not None else None
            opt = step.optimizer
            if opt is not None and callable(opt) and not hasattr(opt, "step"):
                opt = opt(ctx.model.parameters())
            ctx.optimizer = opt

        self._run("to_device", move)
        for i in range(self.steps):
            ctx.step_index = i
            t0 = time.perf_counter()
            ok = self._one_step(step)
            seconds = time.perf_counter() - t0
            lv = loss_value(ctx.loss) if ok else None
            ctx.losses.append(lv)
            ctx.step_seconds.append(seconds)
            for o in self.observers:
                o.step_finished(ctx, i, lv, seconds)
            if not ok:
                break
        if ctx.optimizer is None and "optimizer_step" not in self.results:
            self._skip("optimizer_step", "the entry gave no optimizer")
        self._run("checkpoint", self._checkpoint)
        self._run("inference", self._inference)
        return self._finish(STAGES)

    def _one_step(self, step: Step) -> bool:
        ctx = self.ctx

        def data() -> None:
            batch = step.batch() if callable(step.batch) else step.batch
            inputs, target = split_batch(batch)
            ctx.inputs, ctx.target = to_device(inputs, self.device), to_device(target, self.device)

        def forward() -> None:
            if ctx.optimizer is not None:
                ctx.optimizer.zero_grad(set_to_none=True)
            ctx.model.train()
            ctx.output = call_model(ctx.model, ctx.inputs)

        def loss() -> None:
            if step.loss_fn is None:
                ctx.loss = ctx.output
            elif ctx.target is None:
                ctx.loss = step.loss_fn(ctx.output)
            else:
                ctx.loss = step.loss_fn(ctx.output, ctx.target)

        def backward() -> None:
            ctx.loss.backward()

        ok = self._run("data", data) and self._run("forward", forward) and self._run("loss", loss)
        ok = ok and self._run("backward", backward)
        if ctx.optimizer is not None:
            ok = self._run("optimizer_step", lambda: ctx.optimizer.step()) and ok
        return ok

    def _checkpoint(self) -> None:
        import torch

        ctx = self.ctx
        state = {"model": ctx.model.state_dict()}
        if ctx.optimizer is not None:
            state["optimizer"] = ctx.optimizer.state_dict()
        buf = io.BytesIO()
        torch.save(state, buf)
        buf.seek(0)
        loaded = torch.load(buf, map_location=self.device, weights_only=True)
        ctx.model.load_state_dict(loaded["model"])
        if ctx.optimizer is not None:
            ctx.optimizer.load_state_dict(loaded["optimizer"])
        self.results["checkpoint"].extra["bytes"] = buf.getbuffer().nbytes

    def _inference(self) -> None:
        import torch

        ctx = self.ctx
        step = ctx.step
        inputs = ctx.inputs
        if step is not None and step.inference_batch is not None:
            inputs = to_device(step.inference_batch, self.device)
        was_training = ctx.model.training
        ctx.model.eval()
        # the step's choice: evaluation that differentiates (inference_grad) keeps autograd on
        mode = torch.enable_grad() if step is not None and step.inference_grad else torch.inference_mode()
        try:
            with mode:
                call_model(ctx.model, inputs)
        finally:
            ctx.model.train(was_training)

    def _run_whole(self, step: Step) -> list[StageResult]:
        ctx = self.ctx
        step_fn = step.step_fn
        assert step_fn is not None  # _run_whole is only chosen for a bare step function
        for i in range(self.steps):
            ctx.step_index = i
            t0 = time.perf_counter()

            def whole() -> None:
                ctx.loss = step_fn()

            ok = self._run("step", whole)
            seconds = time.perf_counter() - t0
            lv = loss_value(ctx.loss) if ok else None
            ctx.losses.append(lv)
            ctx.step_seconds.append(seconds)
            for o in self.observers:
                o.step_finished(ctx, i, lv, seconds)
            if not ok:
                break
        return self._finish(WHOLE_STEP_STAGES)

    def _finish(self, order: tuple[str, ...]) -> list[StageResult]:
        out = []
        for stage in order:
            r = self.results.get(stage)
            if r is None:
                reason = self._blocked(stage) or "not reached"
                r = StageResult(stage, StageStatus.NOT_RUN, reason=reason)
                self.results[stage] = r
            out.append(r)
        return out


@contextmanager
def _nested(observers: list[Observer], ctx: StepContext, stage: str) -> Iterator[None]:
    from contextlib import ExitStack

    with ExitStack() as stack:
        for o in observers:
            stack.enter_context(o.around_stage(ctx, stage))
        yield


def run_entry(entry: Entry, device: str = "cpu", steps: int = 1,
              observers: list[Observer] | None = None) -> tuple[list[StageResult], StepContext]:
    """Convenience: run ``entry`` and return ``(stage results, context)``."""
    runner = StepRunner(entry, device=device, steps=steps, observers=observers)
    results = runner.run()
    return results, runner.ctx
