"""The numerics watch in ``mpsready run`` (the emulated device) and ``mpsready trace`` (the recorder).

* :class:`RunWatch`: fed by :class:`mpsready.emulate.dispatch.MPSDispatch` for every call it judges (calls with
  a tensor resident on the emulated MPS device) and, for the NaN check only, the program's CPU calls (a Mac
  runs them on its CPU; their shapes build no MPS graph): ``first_nonfinite["device"]`` says which. The step is
  the number of optimizer steps completed so far (``Emulator.steps``); the stage is ``backward`` inside an
  autograd backward pass (``torch._C._current_graph_task_id() != -1``), ``optimizer`` inside
  ``Optimizer.step`` (global step pre/post hooks, ``torch.optim.optimizer.register_optimizer_step_pre_hook``,
  PyTorch 2.0+), else ``forward``. Shapes are counted for calls of the program (depth 0). Inside
  ``Optimizer.step`` only the in-place writes to that optimizer's parameters are checked for NaN/Inf (a
  NaN in Adam's moment buffers reaches the parameters through them; checking each of its intermediates
  was most of the check's cost on a transformer step).
* :class:`TraceWatch`: fed by :class:`mpsready.trace.recorder._Mode` with the frame it already located; stages
  and steps are the step runner's.

Both give :meth:`~mpsready.numerics.watch.OpWatch.to_dict` to the document and their findings
(:mod:`mpsready.numerics.rules`: NUM301, PRF301), basis ``predicted``: what ran is this CPU's arithmetic on
the emulated device (a NaN the program's own numerics make is real; MPS kernels' rounding is not reproduced).
"""

from __future__ import annotations

from typing import Any

from mpsready.findings import Basis, Finding
from mpsready.numerics.watch import DEFAULT_FRACTION, OpWatch


def _inplace(func: Any) -> bool:
    a = func._schema.arguments
    return bool(a) and a[0].alias_info is not None and a[0].alias_info.is_write


class RunWatch:
    """The watch of one ``mpsready run`` (module docstring). ``install()`` / ``uninstall()`` put the optimizer
    hooks in place and take them away."""

    def __init__(self, emu: Any, nan_check: bool = True, shapes: bool = True):
        import torch

        self.emu = emu
        self.watch = OpWatch(locate=lambda: emu.frames.locate(1), nan_check=nan_check, shapes=shapes)
        self.watch.device = "mps"  # the emulated device; "cpu" while a CPU call is observed
        self.watch.stage_of = self._stage  # asked only when a result is checked (not per call)
        self._graph_task = torch._C._current_graph_task_id
        self._in_optimizer = 0
        self._params: set[int] = set()  # ids of the parameters of the optimizer whose step is running
        self._handles: list[Any] = []

    def install(self) -> None:
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        def pre(opt, args, kwargs):
            self._in_optimizer += 1
            self._params = {id(p) for g in opt.param_groups for p in g["params"]}

        def post(opt, args, kwargs):
            self._in_optimizer = max(0, self._in_optimizer - 1)

        self._handles = [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]
        self.emu.numerics = self
        from mpsready.emulate.dormant import wake
        wake(self.emu)  # the watch reads the program's CPU calls at the aten level: the dispatch mode on the stack

    def uninstall(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        self.emu.numerics = None

    @property
    def nan_active(self) -> bool:
        """Whether the NaN check still looks at calls (off once it found one, or when switched off)."""
        w = self.watch
        return w.nan_check and w.first is None and not w.gave_up

    def observe_cpu(self, name: str, inplace: bool, args: Any, kwargs: Any, out: Any, view: bool) -> None:
        """A call of the program on CPU tensors only: the NaN check, no shapes."""
        if view:
            return
        w = self.watch
        w.step = self.emu.steps
        w.device = "cpu"
        w.observe(name, args, kwargs, out, inplace, False)
        w.device = "mps"

    def observe(self, name: str, inplace: bool, args: Any, kwargs: Any, out: Any, depth: int,
                view: bool = False, tensors: Any = None) -> None:
        """One judged call (``depth`` > 0: a callee of an expanded composite; ``view``: the op only aliases its
        input, which builds no graph on MPS, so its shapes are not counted; ``tensors``: the tensors of ``args``
        in order, lists opened, as the dispatch mode collected them, so that they are not walked again)."""
        if view:
            return
        w = self.watch
        w.step = self.emu.steps
        w.observe(name, args, kwargs, out, inplace, depth == 0, None, False,
                  not self._in_optimizer or self._writes_param(inplace, args), tensors)

    def _stage(self) -> str:
        return "backward" if self._graph_task() != -1 else "optimizer" if self._in_optimizer else "forward"

    def _writes_param(self, inplace: bool, args: Any) -> bool:
        """Inside ``Optimizer.step`` only the writes to its parameters are checked (the moment buffers and
        intermediates of Adam and kin are checked through them: a NaN in them reaches the parameter)."""
        if not inplace or not args:
            return False
        a0 = args[0]
        if isinstance(a0, (list, tuple)):
            return any(id(t) in self._params for t in a0)
        return id(a0) in self._params

    def to_dict(self) -> dict[str, Any]:
        return self.watch.to_dict()

    def findings(self, fraction: float = DEFAULT_FRACTION) -> list[Finding]:
        return watch_findings(self.watch, "the emulated MPS device", fraction)


class TraceWatch:
    """The watch of one ``mpsready trace`` (module docstring)."""

    def __init__(self, nan_check: bool = True, shapes: bool = True, deferred: bool = False,
                 device_of: Any = None):
        self.watch = OpWatch(nan_check=nan_check, shapes=shapes, deferred=deferred)
        # the device of the op whose result is reported (on the emulated device: "mps" for a resident tensor,
        # "cpu" for the program's CPU calls), asked at a report only
        self.watch.device_of = device_of or (lambda t: t.device.type)
        self._kind: dict[int, tuple[bool, bool]] = {}  # id(func) -> (in place, view)

    def at_stage(self, stage: str, step: int) -> None:
        self.watch.stage, self.watch.step = stage, step

    def observe(self, func: Any, name: str, args: Any, kwargs: Any, out: Any, top: bool, frame: Any) -> None:
        kind = self._kind.get(id(func))
        if kind is None:
            rets = func._schema.returns
            view = bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)
            kind = self._kind[id(func)] = (_inplace(func), view)
        self.watch.observe(name, args, kwargs, out, inplace=kind[0], top=top, frame=frame, view=kind[1])

    def flush(self) -> None:
        self.watch.flush()

    def to_dict(self) -> dict[str, Any]:
        return self.watch.to_dict()


def watch_findings(watch: OpWatch, on: str, fraction: float = DEFAULT_FRACTION) -> list[Finding]:
    """NUM301 (the first non-finite result) and PRF301 (dynamic shapes) of a watch, basis ``predicted``."""
    from mpsready.numerics.rules import degenerate_findings, dynamic_shape_findings, first_nonfinite_finding

    out = []
    first = watch.result
    if first is not None and first.get("device") == "cpu":  # the op's own device, never the run's
        on = "the CPU (a call of the program on CPU tensors, as a Mac runs it)"
    f = first_nonfinite_finding(first, Basis.PREDICTED, on)
    if f is not None:
        out.append(f)
    out += degenerate_findings(watch.notes, Basis.PREDICTED)
    if watch.shapes:
        out += dynamic_shape_findings(watch.dynamic_shapes(fraction), Basis.PREDICTED)
    return out
