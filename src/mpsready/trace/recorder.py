"""Record the aten operators a representative step dispatches, stage by stage.

The recorder is a thin ``TorchDispatchMode`` (``torch.utils._python_dispatch``, PyTorch
2.0+): it observes each call and forwards it unchanged. It plugs into the shared step
runner as an :class:`~mpsready.step.runner.Observer` whose ``around_stage`` enters the
mode, so every op is attributed to a stage (``forward``, ``backward``, ...).

Per call it keeps the overload name, the dtypes of tensor arguments and results, the
device, non-strided layouts (sparse), wall time, and the innermost frame of the user's
project (:mod:`mpsready.frames`). Calls are aggregated on the fly, so memory does
not grow with the number of steps.

Composite ops. A ``CompositeExplicitAutograd`` kernel is backend-agnostic C++ that calls
other ops; a flat trace sees only the composite and hides whether its callees exist on
MPS (``nanmedian.dim`` calls ``nanmedian.dim_values``, which had no MPS kernel before
2.8; research notes section 8). For ops the support data marks as composite, the
recorder runs the real kernel *below* the Python dispatch key with a child mode pushed
(``func.redispatch(keys & _dispatch_keyset_full_after(Python))``), so the callees are
recorded too, with ``parent`` set. Other ops are not expanded, which keeps the cost low.

Device moves on a CPU trace. ``tensor.to("cpu")`` on a CPU tensor dispatches nothing,
so a CPU trace would not see what moving the model and the batch to MPS dispatches.
When the trace device is the CPU, the recorder copies each parameter, buffer and batch
tensor to the ``meta`` device (no memory, no computation) inside the ``to_device`` and
``data`` stages: the same ``aten::_to_copy`` (and, for a sparse tensor,
``aten::_sparse_coo_tensor_with_dims_and_tensors``) a real move dispatches. Those calls
carry ``device="meta"``.

Dtypes MPS lacks (float64, complex128) or limits (bfloat16, complex64) are tracked: the
op that created such a tensor (``aten::_to_copy``, ``aten::arange``, ``aten::lift_fresh``
for ``torch.tensor``/``torch.from_numpy`` of a NumPy array) is remembered, and a
:class:`~mpsready.trace.model.DtypeEvent` is written when such a tensor is created on, or
used on, the device in a step stage (every stage but ``build``: models are usually built
on the CPU and then moved).
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mpsready.frames import Frame, UserFrames, package_dirs
from mpsready.step.runner import Observer, StepContext, to_device
from mpsready.trace.model import DtypeEvent, OpCall, OpTrace

# Keys below Python: the real kernel runs there with our child mode active (research Appendix B).
_AFTER_PYTHON = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python)
_MAX_DEPTH = 6  # composites nest a few levels (convolution -> _convolution -> backend kernel)
# torch.tensor / torch.as_tensor / torch.from_numpy hand their new tensor to these (2.13, checked by trace):
# the point where NumPy or Python data becomes a tensor.
_LIFT_OPS = frozenset({"aten::lift_fresh", "aten::lift", "aten::lift_fresh_copy"})
WATCHED_DTYPES = frozenset({"float64", "complex128", "bfloat16", "complex64"})
HOST_STAGES = frozenset({"build"})  # stages whose tensors normally live on the CPU, whatever the device

_perf = time.perf_counter
_Tensor = torch.Tensor
_STRIDED = torch.strided
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}
_LAYOUT_NAMES = {torch.sparse_coo: "sparse_coo", torch.sparse_csr: "sparse_csr", torch.sparse_csc: "sparse_csc",
                 torch.sparse_bsr: "sparse_bsr", torch.sparse_bsc: "sparse_bsc", getattr(torch, "_mkldnn"): "mkldnn"}  # no stub names it


def op_name(func: Any) -> str:
    """``aten.add.Tensor`` -> ``"aten::add.Tensor"``; default overloads drop ``.default``."""
    name = func._schema.name
    ov = func._overloadname
    return name if ov == "default" else f"{name}.{ov}"


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_MPSREADY_DIRS = package_dirs("mpsready")  # by the loaded package's directory, never by a folder's name
_SKIP_DIRS = (_TORCH_DIR + "utils" + os.sep + "_python_dispatch", _TORCH_DIR + "_ops.py",
              _TORCH_DIR + "_compile.py", os.path.join(_TORCH_DIR, "_dynamo", "eval_frame.py"))  # mode plumbing


def _torch_caller() -> str | None:
    """The innermost PyTorch Python frame that made the current call, as ``torch/amp/grad_scaler.py:unscale_``
    (only computed for the rare creation of a float64/complex/bfloat16 tensor). Lets the prediction tell a
    PyTorch internal (GradScaler's float64 inverse scale) from the user's own code."""
    f: FrameType | None = sys._getframe(2)
    here = os.path.abspath(__file__)
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(_TORCH_DIR) and not fn.startswith(_SKIP_DIRS) and fn != here:
            return f"torch/{os.path.relpath(fn, _TORCH_DIR)}:{f.f_code.co_name}".replace(os.sep, "/")
        if not fn.startswith(_TORCH_DIR) and not fn.startswith(_MPSREADY_DIRS):
            return None  # reached user code first: the user created it
        f = f.f_back
    return None


def _is_view(func: Any) -> bool:
    """True for an overload whose result aliases an input without writing it (``Tensor(a)`` in the schema)."""
    rets = func._schema.returns
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


def _tensors(values: Any, out: list) -> None:
    for v in values:
        if isinstance(v, _Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, _Tensor):
                    out.append(w)


@contextmanager
def _mps_python_paths() -> Iterator[None]:
    """Take the Python-level branches MPS takes. The fused "fast path" of nn.TransformerEncoderLayer,
    nn.TransformerEncoder and nn.MultiheadAttention in eval/inference runs only on cpu, cuda, xpu and
    the privateuse1 device, never on MPS (torch/nn/modules/transformer.py ``_supported_device_type``,
    activation.py ``_check_arg_device``, 2.1-2.13); on a CPU or CUDA trace it would record
    ``aten::_transformer_encoder_layer_fwd`` / ``aten::_native_multi_head_attention``, which MPS never
    dispatches. ``torch.backends.mha.set_fastpath_enabled(False)`` (2.2+) makes the trace take the
    regular path, as MPS does."""
    mha = getattr(torch.backends, "mha", None)
    if mha is None or not hasattr(mha, "set_fastpath_enabled"):
        yield
        return
    old = mha.get_fastpath_enabled()
    mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        mha.set_fastpath_enabled(old)


_OpOverload = torch._ops.OpOverload
# Tensor.is_cpu / Tensor.device as torch defines them (torch._C.TensorBase), whatever the emulated device patches
# onto torch.Tensor (mpsready.emulate.torch_api)
_NATIVE_IS_CPU: Callable[[Any], bool] = vars(torch._C.TensorBase)["is_cpu"].__get__
_NATIVE_DEVICE: Callable[[Any], torch.device] = vars(torch._C.TensorBase)["device"].__get__
# what TorchDispatchMode.__enter__/__exit__ call for a mode without a dispatch key (torch/utils/_python_dispatch.py
# _push_mode/_pop_mode, 2.1-2.13)
_push_mode_stack = torch._C._push_on_torch_dispatch_stack
_pop_mode_stack = torch._C._pop_torch_dispatch_stack


class _OpInfo:
    """What the recorder needs of one overload, computed once (``Recorder._info``).

    ``call`` is the overload's C++ callable (``OpOverload._op``; ``OpOverload.__call__`` only forwards to
    it, torch/_ops.py 2.1-2.13) so a plain call skips one Python frame; ``func`` keeps the overload alive,
    because infos are keyed by ``id(func)`` (``OpOverload.__hash__`` is a Python method)."""

    __slots__ = ("name", "expand", "call", "func")

    def __init__(self, name: str, expand: bool, func: Any):
        self.name = name
        self.expand = expand
        self.func = func
        self.call = func._op if type(func) is _OpOverload else func


class _Mode(TorchDispatchMode):
    """One level of recording; ``parent``/``frame`` are set for the callees of a composite."""

    def __init__(self, rec: "Recorder", parent: str | None = None, frame: Frame | None = None, depth: int = 0):
        super().__init__()
        self.rec, self.parent, self.frame, self.depth = rec, parent, frame, depth

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        rec = self.rec
        forward = rec.forward
        if rec.suppress():  # inside an op the emulated MPS device runs as a whole (trace/emulated.py)
            return func(*args, **(kwargs or {})) if forward is None else forward(func, types, args, kwargs)
        info = rec._infos.get(id(func))
        if info is None:
            info = rec._info(func)
        depth = self.depth
        frame = self.frame if depth else rec.frames.locate(2)
        t0 = _perf()
        # name == parent: a view op's kernel re-enters itself (detach -> detach); expanding again adds nothing.
        if info.expand and depth < _MAX_DEPTH and info.name != self.parent:
            out = rec._expand(func, info.name, frame, depth, args, kwargs or {})
            if rec.expanded_hook is not None:
                rec.expanded_hook(info.name, args, kwargs or {}, out, depth)
        elif forward is not None:
            out = forward(func, types, args, kwargs)
        elif kwargs:
            out = info.call(*args, **kwargs)
        else:
            out = info.call(*args)
        rec._record(info.name, self.parent, frame, args, kwargs, out, _perf() - t0)
        if rec.numerics is not None:  # the first NaN/Inf and shapes per line (mpsready/numerics/hooks.py)
            rec.numerics.observe(func, info.name, args, kwargs, out, depth == 0, frame)
        return out


class Recorder(Observer):
    """Records the ops of each stage of a step run (see the module docstring).

    ``root``: the user's project directory (``Entry.root``), or a list of directories whose files
    count as the user's (see :class:`~mpsready.frames.UserFrames`). ``expand``: ``op name -> bool``,
    True for ops to expand as composites (the support data's ``status == "composite"``);
    ``None`` expands nothing. ``device``: the device the step runs on. ``simulate_moves``:
    copy model and batch tensors to ``meta`` in ``to_device``/``data`` (default: when
    ``device`` is the CPU, where real moves dispatch nothing). ``frames``: the user-frame finder to share (one
    is made for ``root`` otherwise); ``numerics``: a :class:`mpsready.numerics.hooks.TraceWatch` fed every
    call; ``suppress``: True while calls are not to be recorded; ``expanded_hook``: called as ``(op, args,
    kwargs, result, depth)`` after a composite the recorder expanded returns; ``forward``: called as ``(func,
    types, args, kwargs)`` in place of ``func(*args, **kwargs)`` for each call passed on to the dispatch mode
    under the recorder's (the emulated device's ``MPSDispatch.forward``, trace/emulated.py: that mode's work
    without a second pass through the dispatcher), or ``None``. ``resident``: on the emulated device, its
    residence map (:mod:`mpsready.emulate.residence`, ``id(tensor)`` -> weak reference): a call whose first
    result (or argument) is marked there is recorded on ``mps``, any other on the tensor's own device.
    """

    def __init__(self, root: str | list[str], device: str = "cpu", expand: Callable[[str], bool] | None = None,
                 simulate_moves: bool | None = None, expand_views: bool = False, sdpa_math: str | None = None,
                 frames: UserFrames | None = None, numerics: Any = None, suppress: Callable[[], bool] | None = None,
                 expanded_hook: Callable[..., None] | None = None, forward: Callable[..., Any] | None = None,
                 resident: dict[int, Any] | None = None):
        self.frames = frames if frames is not None else UserFrames(root)
        self.device = device
        self.device_type = torch.device(device).type
        self._expand_pred = expand or (lambda name: False)
        self.simulate_moves = self.device_type == "cpu" if simulate_moves is None else simulate_moves
        self._infos: dict[int, _OpInfo] = {}  # id(OpOverload) -> info
        self._children: dict[int, _Mode] = {}  # depth -> the reusable child mode of _expand
        self._calls: dict[tuple, list] = {}  # key -> [count, seconds]
        self._events: dict[tuple, list] = {}  # dtype event key -> [count]
        self._origins: dict[int, tuple] = {}  # id(tensor) -> (weakref, op, frame, stage)
        self._reported: set[int] = set()
        self._device_keys: dict[str, Any] = {}
        self.stage = "build"
        self._simulating = False
        self.stage_seconds: dict[str, float] = {}
        self.expansion_failures: dict[str, str] = {}
        self.expanded: set[str] = set()
        self.views: set[str] = set()  # composite views recorded without their callees
        self._expand_views = expand_views
        self.sdpa_math = sdpa_math
        # True while the calls dispatched are not to be recorded (inside an op the emulated MPS device runs as a
        # whole, trace/emulated.py)
        self.suppress: Callable[[], bool] = suppress or (lambda: False)
        # called as (op, args, kwargs, result, depth) after a composite the recorder expanded returns: the
        # emulated device (trace/emulated.py) never sees such a composite whole, only its callees
        self.expanded_hook = expanded_hook
        self.numerics: Any = numerics  # mpsready.numerics.hooks.TraceWatch, or None
        self.forward: Callable[..., Any] | None = forward
        self._resident = resident

    # -- Observer -------------------------------------------------------------------------
    @contextmanager
    def around_stage(self, ctx: StepContext, stage: str) -> Iterator[None]:
        self.stage = stage
        if self.numerics is not None:
            self.numerics.at_stage(stage, ctx.step_index)
        t0 = _perf()
        try:
            with _mps_python_paths(), self._sdpa_context(stage), _Mode(self):
                if stage == "to_device" and self.simulate_moves and ctx.step is not None:
                    self._simulate_model_move(ctx.step.model)
                yield
                if stage == "data" and self.simulate_moves:
                    self._simulate_move((ctx.inputs, ctx.target))
            if self.numerics is not None:
                self.numerics.flush()
        finally:
            self.frames.forget()  # the cached anchor frame would keep the stage's last call's locals alive
            self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + _perf() - t0

    def _sdpa_context(self, stage: str):
        """Force SDPA's math backend where MPS takes it (``sdpa_math``: ``"all"`` stages, or ``"grad"``:
        every stage but ``inference``/``checkpoint``), so the trace records the math decomposition's ops
        (bmm, _safe_softmax, ...) that MPS runs instead of a CPU/CUDA fused kernel. Which stages: the
        support data's SDPA routing for the target release (``route_info(...)["otherwise"]``;
        aten/src/ATen/native/transformers/attention.cpp)."""
        from contextlib import nullcontext

        mode = self.sdpa_math
        if mode is None or (mode == "grad" and stage in ("inference", "checkpoint")):
            return nullcontext()
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:  # torch < 2.3
            return nullcontext()
        return sdpa_kernel(SDPBackend.MATH)

    def _simulate_model_move(self, model: Any) -> None:
        if not isinstance(model, torch.nn.Module):
            return
        self._simulating = True
        try:
            with torch.no_grad():
                for t in list(model.parameters()) + list(model.buffers()):
                    t.to("meta")
        finally:
            self._simulating = False

    def _simulate_move(self, obj: Any) -> None:
        self._simulating = True
        try:
            with torch.no_grad():
                to_device(obj, "meta")
        finally:
            self._simulating = False

    # -- recording ------------------------------------------------------------------------
    def _info(self, func: Any) -> _OpInfo:
        name = op_name(func)
        expand = name.startswith("aten::") and bool(self._expand_pred(name))
        if expand and not self._expand_views and _is_view(func):
            # A view's callees are other views (as_strided, alias) or, for reshape/contiguous, clone/copy_:
            # MPS has all of them in every shipped release (tests/trace/test_recorder.py checks this against
            # the data). Not expanding them roughly halves the recorder's cost on a transformer step.
            expand = False
            self.views.add(name)
        info = self._infos[id(func)] = _OpInfo(name, expand, func)
        return info

    def _keys_for_device(self, device: Any) -> Any:
        dev = str(device) if device is not None else "cpu"
        ks = self._device_keys.get(dev)
        if ks is None:
            ks = self._device_keys[dev] = torch._C._dispatch_keys(torch.empty(0, device=dev))
        return ks

    def _expand(self, func, name: str, frame: Frame | None, depth: int, args, kwargs):
        ts: list = []
        _tensors(args, ts)
        _tensors(kwargs.values(), ts)
        if ts:
            keys = torch._C._dispatch_keys(ts[0])
            for t in ts[1:]:
                keys = keys | torch._C._dispatch_keys(t)
        else:  # a factory (arange, ...): the keys of the device it creates on
            keys = self._keys_for_device(kwargs.get("device"))
        self.expanded.add(name)
        # one child mode per depth, reused: at most one is on the mode stack per depth at a time (a mode is
        # off the stack while its own __torch_dispatch__ runs), and building a TorchDispatchMode costs more
        # than the callee it records
        child = self._children.get(depth + 1)
        if child is None:
            child = self._children[depth + 1] = _Mode(self, depth=depth + 1)
        outer = child.parent, child.frame
        child.parent, child.frame = name, frame
        try:
            # The child goes straight onto the C++ mode stack: TorchDispatchMode.__enter__/__exit__ would
            # also save and set the module's "in a dispatch mode" flags, which the recording mode around the
            # stage has already set (it is the same kind of mode), at several times the cost of the push.
            _push_mode_stack(child)
            try:
                return func.redispatch(keys & _AFTER_PYTHON, *args, **kwargs)
            finally:
                _pop_mode_stack(None)
        except (RuntimeError, TypeError, NotImplementedError) as exc:
            # Some overloads refuse a redispatch (e.g. Scalar wrapping); run them plainly. A genuine
            # error of the user's op is raised again by the plain call below.
            self.expansion_failures.setdefault(name, f"{type(exc).__name__}: {exc}"[:300])
            return func(*args, **kwargs)
        finally:
            child.parent, child.frame = outer

    def _record(self, name: str, parent: str | None, frame: Frame | None, args, kwargs, out, seconds: float):
        # one pass per argument list, inlined: this runs for every dispatched op
        ins: list = []
        for v in args:
            if isinstance(v, _Tensor):
                ins.append(v)
            elif isinstance(v, (list, tuple)):
                for w in v:
                    if isinstance(w, _Tensor):
                        ins.append(w)
        if kwargs:
            _tensors(kwargs.values(), ins)
        if isinstance(out, _Tensor):
            outs = [out]
        elif isinstance(out, (list, tuple)):
            outs = []
            _tensors(out, outs)
        else:
            outs = []
        names = _DTYPE_NAMES
        strided = _STRIDED
        odd = False  # a non-strided (sparse, mkldnn) argument or result
        in_names = []
        for t in ins:
            in_names.append(names[t.dtype])
            if t.layout is not strided:
                odd = True
        out_names = []
        for t in outs:
            out_names.append(names[t.dtype])
            if t.layout is not strided:
                odd = True
        in_dt = tuple(in_names)
        out_dt = tuple(out_names)
        # The result's device: a copy (``_to_copy``) is attributed to where it lands.
        first = outs[0] if outs else (ins[0] if ins else None)
        if self._simulating:
            device = "meta"  # every call of a simulated move, including a sparse tensor's metadata queries
        elif first is None:
            device = str(kwargs.get("device") or "cpu") if kwargs else "cpu"
        elif self._resident is not None:
            # the emulated device (trace/emulated.py): its residence mark, read inline, instead of the patched
            # is_cpu and device properties (two Python calls per op, torch_api.py); an unmarked tensor's device
            # as the unpatched properties give it
            r = self._resident.get(id(first))
            if r is not None and r() is first:
                device = "mps"
            elif _NATIVE_IS_CPU(first):
                device = "cpu"
            else:
                device = _NATIVE_DEVICE(first).type
        elif first.is_cpu:  # is_cpu/is_cuda are cheap flags; .device builds a new object each time
            device = "cpu"
        elif first.is_cuda:
            device = "cuda"
        else:
            device = first.device.type
        layouts = self._layouts(ins, outs) if odd else ()
        # id(frame): frames are interned by UserFrames, and hashing the dataclass per call is slow
        key = (self.stage, name, parent, in_dt, out_dt, device, layouts, id(frame))
        slot = self._calls.get(key)
        if slot is None:
            self._calls[key] = [1, seconds, frame]
        else:
            slot[0] += 1
            slot[1] += seconds
        watched = WATCHED_DTYPES
        if parent is None and ((not watched.isdisjoint(out_dt)) or (not watched.isdisjoint(in_dt))):
            self._dtype_facts(name, frame, ins, outs, in_dt, out_dt)

    @staticmethod
    def _layouts(ins: list, outs: list) -> tuple:
        seen = []
        for t in ins + outs:
            if t.layout is not _STRIDED:
                ln = _LAYOUT_NAMES.get(t.layout, str(t.layout))
                if ln not in seen:
                    seen.append(ln)
        return tuple(seen)

    def _on_device(self, t: Any) -> bool:
        return t.device.type in (self.device_type, "meta")

    def _dtype_facts(self, name: str, frame: Frame | None, ins: list, outs: list, in_dt: tuple, out_dt: tuple):
        """Dtype events of a top-level call (the callees of a composite add nothing new)."""
        stage = self.stage
        device_stage = stage not in HOST_STAGES
        lifted = name in _LIFT_OPS
        if device_stage and not lifted:
            for t, dt in zip(ins, in_dt):
                if dt not in WATCHED_DTYPES or not self._on_device(t):
                    continue
                tid = id(t)
                origin = self._origins.get(tid)
                if origin is not None and origin[0]() is not t:
                    origin = None
                if origin is not None and origin[3] not in HOST_STAGES:
                    continue  # produced in a step stage: reported where it was created
                if tid in self._reported:
                    continue
                self._reported.add(tid)
                self._event(dt, stage, name, "used", frame, origin[1] if origin else None,
                            origin[2] if origin else None)
        for t, dt in zip(outs, out_dt):
            if dt not in WATCHED_DTYPES:
                continue
            tid = id(t)
            if tid not in self._origins or self._origins[tid][0]() is not t:
                self._origins[tid] = (weakref.ref(t), name, frame, stage)
            # The op *introduced* the dtype when none of its inputs had it (a cast, a factory,
            # promotion from a float64 scalar tensor), or lifted Python/NumPy data into a tensor.
            if device_stage and (lifted or dt not in in_dt) and self._on_device(t) and tid not in self._reported:
                self._event(dt, stage, name, "created", frame, None, None, _torch_caller())
                self._reported.add(tid)

    def origin_of(self, t: Any) -> Frame | None:
        """The user's line whose op made tensor ``t`` (float64, complex128, bfloat16 or complex64 only: the
        dtypes tracked), or ``None`` when it was not seen being made."""
        origin = self._origins.get(id(t))
        if origin is None or origin[0]() is not t:
            return None
        return origin[2]

    def _event(self, dtype, stage, op, how, frame, origin, origin_frame, internal=None):
        key = (dtype, stage, op, how, frame, origin, origin_frame, internal)
        slot = self._events.get(key)
        if slot is None:
            self._events[key] = [1]
        else:
            slot[0] += 1

    # -- results --------------------------------------------------------------------------
    def calls(self) -> list[OpCall]:
        out = []
        for (stage, name, parent, in_dt, out_dt, device, layouts, _fid), (count, secs, frame) in self._calls.items():
            out.append(OpCall(stage=stage, op=name, count=count, seconds=secs, parent=parent, in_dtypes=in_dt,
                              out_dtypes=out_dt, device=device, layouts=layouts, frame=frame))
        return out

    def dtype_events(self) -> list[DtypeEvent]:
        return [DtypeEvent(dtype=d, stage=s, op=o, how=h, count=c[0], frame=f, origin=og, origin_frame=of,
                           internal=i)
                for (d, s, o, h, f, og, of, i), c in self._events.items()]

    def to_trace(self, entry: str, stages: list[dict[str, Any]]) -> OpTrace:
        return OpTrace(entry=entry, device=self.device, torch_version=torch.__version__, calls=self.calls(),
                       dtype_events=self.dtype_events(), stages=stages, stage_seconds=dict(self.stage_seconds),
                       expansion_failures=dict(self.expansion_failures), expanded_ops=sorted(self.expanded),
                       view_ops=sorted(self.views),
                       settings={"mha_fastpath": False, "sdpa_math": self.sdpa_math})


def record_entry(entry: Any, device: str = "cpu", expand: Callable[[str], bool] | None = None,
                 steps: int = 1, expand_views: bool = False, sdpa_math: str | None = None,
                 project: str | None = None, numerics: Any = None) -> OpTrace:
    """Run ``entry`` (an :class:`mpsready.step.Entry`) through the step runner on ``device``
    with a :class:`Recorder` attached and return the :class:`OpTrace`. Stage failures are
    kept in ``OpTrace.stages`` (status, error, traceback), never raised. ``project``: a
    directory whose files also count as the user's (an ENTRY kept outside the project). ``numerics``: a
    :class:`mpsready.numerics.hooks.TraceWatch` fed every call, or ``None``."""
    from mpsready.step.runner import run_entry

    roots = [str(entry.root)] + ([str(project)] if project else [])
    rec = Recorder(roots, device=device, expand=expand, expand_views=expand_views, sdpa_math=sdpa_math,
                   numerics=numerics)
    results, _ctx = run_entry(entry, device=device, steps=steps, observers=[rec])
    return rec.to_trace(entry.spec, [r.to_dict() for r in results])
