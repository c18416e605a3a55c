"""Watch every aten call of a run: the first NaN/Inf made from finite inputs, and input shapes per line.

:class:`OpWatch` is fed by the dispatch modes that already see every call (``record``'s observing mode,
:func:`mpsready.record.randomness.observing_mode`; ``run``'s emulated device,
:mod:`mpsready.emulate.dispatch`; ``trace``'s recorder, :mod:`mpsready.trace.recorder`): one Python call per
aten call, no mode of its own.

**First non-finite value.** Per floating (or complex) result the check is one reduction: ``t.sum()``
(float32 accumulation for 16-bit dtypes) is NaN or Inf whenever an element is, so a finite sum proves the
tensor finite; a non-finite sum is confirmed with ``torch.isfinite(t).all()`` (a sum of finite values can
overflow) before anything is reported. A one-element result (a loss, a step count) is its own sum: its value
is read (``item()``) without the reduction. The kernels run with the Python dispatch key and torch functions
disabled (``torch._C._DisableTorchDispatch``, ``torch._C.DisableTorchFunction``), so no mode, the
emulated device's included, sees the check; where no Python code could see it (both mode stacks empty and
the result a ``torch.Tensor`` or ``nn.Parameter``: most calls in ``mpsready run``, whose emulated device's
mode is off its stack while its ``__torch_dispatch__`` runs) the guards change nothing and are not entered
(about 0.7 us a checked call). On the CPU the sum is read at once; on an accelerator
(``deferred``) the 0-dim results are kept and read together at the end of each stage
(:meth:`OpWatch.flush`, one synchronisation per stage or per 1024 calls), with weak references to the
inputs, so the check adds no synchronisation per op.

The call reported is the first whose result is non-finite while every floating input is finite: op name,
result dtype, stage (``forward``, ``loss``, ``backward``, ``optimizer_step`` as the step runner names them;
``backward``/``optimizer``/``forward`` in ``mpsready run``), step, the user's ``file:line`` and, per
floating input, shape, dtype, min, max, mean (float64 over the finite elements) and the NaN/Inf counts.
No element value of a tensor is kept. An in-place op whose only non-finite input is the tensor it writes
counts as made from finite inputs (its input was read before it was overwritten). When the first
non-finite result came from an input that was already non-finite (a batch holding NaN, a parameter set
outside the watched calls), the check goes on (such a value may also be uninitialised memory that a later
op overwrites) for up to :data:`MAX_PROPAGATED` such results; the first of them is reported, with
``from_finite_inputs`` false, only if no op made a NaN/Inf from finite inputs; only a NaN is kept so (an
Inf carried from input to result, a ``-inf`` mask added to attention scores, is how masks work).

Not checked: views; ops that only move or select their inputs' values (:data:`_PASSTHROUGH`: ``clone``,
``cat``, ``relu``, random fills, ...); ops whose result is bounded when their input is finite
(:data:`_BOUNDED`: ``tanh``, ``sigmoid``, ``softmax``, ``gelu``, ...: a NaN there came with the input);
copies that keep the dtype; ops that return uninitialised memory (``aten::empty`` and kin,
:data:`_UNINITIALISED`); calls with a non-finite Python float argument (``torch.full(..., float("-inf"))``,
``masked_fill(m, -inf)``: a constant the program wrote); and the results after the first of an op with
several (the rest are saved for backward: ``_ctc_loss``'s ``log_alpha`` holds ``-inf`` by design), except
for ``*_backward`` ops, whose results are all gradients. Every tensor of a ``Tensor[]`` result
(``_foreach_*``) is checked. After a report from
finite inputs the NaN check stops: everything downstream of it is propagation.

**Propagation.** A result made non-finite from finite inputs is not reported at once (per-call check): it is a
:class:`~mpsready.numerics.propagation.Candidate` until a tensor carrying its values is used by an op that computes a non-finite result from
it (then it is :attr:`OpWatch.first`, with ``propagated_to``), or masked (a finite result of where, nan_to_num,
indexing, an overwrite: not a finding, counted in ``masked``); never read again, it is reported at the end
(:attr:`OpWatch.result`). A std/var over no more elements than its correction is NaN by definition: a note
(``degenerate``, NUM305 info), and what it reaches is not reported. Every floating dtype (float8, complex32 cast
up) and layout (sparse by stored values) is read; what cannot be read is skipped and counted (``skipped``).

**Shapes per line.** For each call at depth 0 the tuple of input shapes is looked up with the op name;
a pair not seen before is attributed to the user's line (located then, so a steady step costs a dict
look-up per call) and to the step it appeared in. :meth:`OpWatch.dynamic_shapes` lists the (op, line)
whose shapes changed in more than ``fraction`` (default 1/2) of the steps after the first one it ran in,
given at least :data:`MIN_STEPS` observed steps. A pair already seen at another line is not attributed
again, so an op whose shapes change at two lines is listed at the first. MPS builds and caches an
``MPSGraph`` per op and input shapes (aten/src/ATen/native/mps/OperationUtils.mm ``getTensorsStringKey``,
``MPSGraphCache``; PyTorch 2.0-2.13; https://github.com/pytorch/pytorch/pull/182648: "MPSGraph compiles a new
graph per unique shape combination"), so each new shape costs a graph build on a Mac.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from mpsready.numerics.propagation import (DOF, MASKING, Candidate, Propagation, all_floating, frame_dict,
                                           has_nan, readable, tensor_summary)

MIN_STEPS = 3  # steps observed before a shape can be called dynamic (step 0 plus two to change in)
DEFAULT_FRACTION = 0.5
MAX_SHAPES = 16  # shapes kept per (op, line) for the finding
MAX_PENDING = 1024  # deferred checks read together at most this many calls apart
MAX_PROPAGATED = 64  # non-finite results from non-finite inputs looked at before the check gives up
# Ops whose result is memory never written (its contents are whatever was there, NaN patterns included):
# aten::empty*, new_empty*, resize_ (native_functions.yaml: "Returns a tensor filled with uninitialized data").
_UNINITIALISED = frozenset({"aten::empty.memory_format", "aten::empty.names", "aten::empty_like",
                            "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided", "aten::empty_permuted",
                            "aten::resize_", "aten::resize_as_", "aten::set_.source_Storage",
                            "aten::set_.source_Storage_storage_offset", "aten::set_.source_Tensor", "aten::set_"})
# Ops whose result only holds values of their inputs (moved, selected, copied in the same dtype, or zeros):
# they cannot make a NaN/Inf from finite inputs, so they are not checked (views are not either: the caller
# says ``view=True``). Casts (_to_copy) are checked: float32 -> float16 overflows to inf.
_PASSTHROUGH = frozenset({
    "aten::clone", "aten::contiguous", "aten::detach", "aten::cat", "aten::stack", "aten::index_select",
    "aten::gather", "aten::index.Tensor", "aten::embedding", "aten::embedding_dense_backward", "aten::relu",
    "aten::relu_", "aten::threshold_backward", "aten::max_pool2d_with_indices", "aten::max_pool2d_with_indices_backward",
    "aten::zeros_like", "aten::ones_like", "aten::zero_", "aten::zeros", "aten::ones", "aten::new_zeros",
    "aten::new_ones", "aten::select_backward", "aten::slice_backward", "aten::constant_pad_nd", "aten::masked_fill.Scalar",
    "aten::masked_fill_.Scalar", "aten::where.self", "aten::fill_.Scalar", "aten::repeat", "aten::flip", "aten::roll",
    "aten::_unsafe_view", "aten::native_dropout_backward", "aten::_reshape_alias", "aten::lift_fresh",
    "aten::bernoulli_.float", "aten::bernoulli_.Tensor", "aten::bernoulli.p", "aten::uniform_", "aten::normal_",
    "aten::random_", "aten::rand", "aten::randn", "aten::rand_like", "aten::randn_like",
    "aten::as_strided_", "aten::detach_", "aten::scalar_tensor",
})
# Ops whose result is bounded (or no larger than the input) whenever the input is finite: a NaN/Inf in their
# result was in their input, made (and reported) upstream. tanh/sigmoid/hardtanh/relu6/hardsigmoid in [-1, 1]
# or [0, 6]; gelu, silu, hardswish, leaky_relu, elu at most |x| (plus 1 for elu); softmax in [0, 1]
# (exp(x - max) / sum, sum >= 1).
_BOUNDED = frozenset({"aten::tanh", "aten::sigmoid", "aten::hardtanh", "aten::relu6", "aten::hardsigmoid",
                      "aten::hardswish", "aten::gelu", "aten::silu", "aten::leaky_relu", "aten::elu", "aten::_softmax",
                      "aten::softmax.int", "aten::tanh_", "aten::sigmoid_", "aten::silu_", "aten::hardtanh_"})
# Copies are checked only when they change the dtype (float32 -> float16 overflows to inf).
_COPIES = frozenset({"aten::copy_", "aten::_to_copy", "aten::to.dtype", "aten::to.dtype_layout"})
MAX_RECENT = 256  # results remembered as checked (a composite returns its callee's result: checked once)


def _torch():
    import torch

    return torch


_SKIPPED = _UNINITIALISED | _PASSTHROUGH | _BOUNDED


def _floating(t: Any) -> bool:
    return t.is_floating_point() or t.is_complex()


_Tensor: Any = None  # torch.Tensor, set by the first OpWatch (this module imports no torch of its own)


def _flat(values: Any, out: list) -> None:
    Tensor = _Tensor
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, Tensor):
                    out.append(w)


class OpWatch(Propagation):
    """See the module docstring. ``locate``: returns the user's frame (``Frame`` with ``to_dict()``, or
    ``None``) for the call being observed. ``nan_check`` / ``shapes`` switch the two watches;
    ``deferred``: read the checks at :meth:`flush` (accelerators) instead of per call (CPU).

    Set ``stage`` and ``step`` as the run goes (the callers do). Results: :attr:`first` (a dict, or
    ``None``) and :meth:`dynamic_shapes`.
    """

    def __init__(self, locate: Callable[[], Any] | None = None, nan_check: bool = True, shapes: bool = False,
                 deferred: bool = False):
        global _Tensor
        torch = _torch()
        _Tensor = torch.Tensor
        self.locate = locate or (lambda: None)
        self.nan_check = nan_check
        self.shapes = shapes
        self.deferred = deferred
        self.stage: str | None = None
        self.step = 0
        self.device: str | None = None  # named in the report when the caller sets it (mpsready run: mps / cpu)
        self.first: dict[str, Any] | None = None
        self.propagated: dict[str, Any] | None = None  # the first non-finite result from non-finite inputs
        self._propagated = 0
        self.gave_up = False
        self.checked = 0  # results checked (the cost is one reduction each)
        self._pending: list[tuple] = []
        self._half = (torch.float16, torch.bfloat16)
        self._f32 = torch.float32
        self._seen: dict[tuple, bool] = {}  # (op, input shapes) -> seen
        self._lines: dict[tuple, dict[str, Any]] = {}  # (op, path, line) -> shapes, steps
        self._steps: set[int] = set()
        self._guard = (torch._C._DisableTorchDispatch, torch._C.DisableTorchFunction)
        # the mode stacks' depths (torch/_C/__init__.pyi, PyTorch 2.1-2.13): both 0 when no mode can see a call
        self._modes = torch._C._len_torch_dispatch_stack
        self._fmodes = torch._C._len_torch_function_stack
        # whether the caller runs this with the Python dispatch key off (torch._C._DisableTorchDispatch, as the
        # emulated device's direct path does, emulate/direct.py): then no dispatch mode on the stack sees a
        # reduction (c10/core/DispatchKey.h: Python; torch/_C/__init__.pyi, PyTorch 2.0-2.13)
        excluded = getattr(torch._C, "_dispatch_tls_is_dispatch_key_excluded", None)
        python_key = getattr(getattr(torch._C, "DispatchKey", None), "Python", None)
        self._key_off: Callable[[], bool] = partial(excluded, python_key) if excluded and python_key is not None \
            else (lambda: False)
        # Result classes no Python code sees a reduction of: torch.Tensor, and nn.Parameter, whose
        # __torch_function__ is torch._C._disabled_torch_function_impl (torch/nn/parameter.py), which
        # check_has_torch_function treats as none (torch/csrc/utils/disable_torch_function.cpp, 2.0-2.13)
        self._plain = frozenset({torch.Tensor, torch.nn.Parameter})
        self._real = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
        self._Tensor = torch.Tensor
        self.stage_of: Callable[[], str | None] | None = None  # the stage, asked only when a check needs it
        self._recent: dict[int, tuple] = {}  # id -> (weakref, version) of results checked lately
        # every floating dtype this torch has (float8 variants included): the ones whose sum or isfinite has no
        # kernel are read cast up (readable); a value that still cannot be read is skipped and counted
        self._upcast = {getattr(torch, n): torch.float32 for n in
                        ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
                        if hasattr(torch, n)}
        self._upcast[torch.complex32] = torch.complex64
        self._floats = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
                                  torch.complex128} | set(self._upcast) | all_floating(torch))
        self._strided = torch.strided
        self.device_of: Callable[[Any], str | None] | None = None  # the device of a result, asked at a report
        self._cands: list[Candidate] = []  # non-finite results waiting to propagate or be masked
        self._carry = _SKIPPED | _COPIES | MASKING  # ops that carry a candidate's NaN on rather than use it
        self.masked = 0  # non-finite results from finite inputs that were masked before any use (not findings)
        self.notes: list[dict[str, Any]] = []  # degenerate reductions (std of one value): info, once per op and line
        self.skipped = 0  # results or inputs that could not be read (no kernel for their dtype or layout)
        self.skipped_kinds: dict[str, int] = {}  # "float4_e2m1fn_x2 strided" -> count

    # ------------------------------------------------------------------ feeding
    def observe(self, name: str, args: Any, kwargs: Any, out: Any, inplace: bool = False, top: bool = True,
                frame: Any = None, view: bool = False, nan: bool = True, tensors: Any = None) -> None:
        """One completed aten call ``name`` with its arguments and result. ``inplace``: the op writes its first
        argument (results are then that argument when ``out`` holds none). ``top``: a call of the program's
        (not a callee of an expanded composite), the only ones counted for shapes. ``frame``: the user's
        frame when the caller already knows it. ``view``: the result aliases an input (neither checked nor
        counted: a view computes nothing and builds no MPS graph). ``nan``: False to count shapes only.
        ``tensors``: the tensors of ``args`` in order (lists opened), when the caller collected them already.

        Long because it runs once per aten call (the hot path of ``run``, ``trace`` and ``record``'s NaN check):
        its checks are inline so that a call with nothing to check returns early at no extra call's cost."""
        if self._cands:
            self._follow(name, args, kwargs, out, inplace, view, frame)
        if view:
            return
        check = nan and self.nan_check and self.first is None and not self.gave_up and name not in _SKIPPED
        shapes = self.shapes and top
        if not check and not shapes:
            return
        Tensor = self._Tensor
        if shapes:  # the shape count, inline (input shapes in _flat's order): a steady step ends at the look-up
            if tensors is not None:
                sizes = [t.shape for t in tensors]
            else:
                sizes = []
                for v in args:
                    if isinstance(v, Tensor):
                        sizes.append(v.shape)
                    elif isinstance(v, (list, tuple)):
                        for x in v:
                            if isinstance(x, Tensor):
                                sizes.append(x.shape)
            if kwargs:
                for v in kwargs.values():
                    if isinstance(v, Tensor):
                        sizes.append(v.shape)
                    elif isinstance(v, (list, tuple)):
                        for x in v:
                            if isinstance(x, Tensor):
                                sizes.append(x.shape)
            self._steps.add(self.step)
            key = (name, tuple(sizes))  # torch.Size is a tuple: hashed and compared as one
            if key not in self._seen:
                self._new_shapes(key, frame)
            if not check:
                return
        outs: Sequence[Any]
        if out.__class__ is Tensor and name not in _COPIES and not self.deferred \
                and not ((self._modes() and not self._key_off()) or self._fmodes()):
            # The common call, one torch.Tensor result (not a copy) that no mode can see read, checked here: an
            # integer or bool result returns at once, no call made; a real floating strided one is
            # _first_nonfinite's steps for one tensor, inline (the same reads in the same order, without its loop,
            # call and guards); any other goes to it (_checked)
            outs = (out,)
            dt = out.dtype
            if dt not in self._floats:
                return
            if dt in self._real and out.layout is self._strided and not out.is_meta:
                n = out.numel()
                if n == 0:
                    return
                # _first_look, inline
                try:
                    version = out._version
                except RuntimeError:  # an inference tensor has no version counter (_version)
                    version = None
                recent = self._recent
                seen = recent.get(id(out))
                if seen is not None and seen[0]() is out and seen[1] == version:
                    return
                if len(recent) >= MAX_RECENT:
                    recent.clear()
                recent[id(out)] = (weakref.ref(out), version)
                self.checked += 1
                try:
                    v = out.item() if n == 1 else \
                        (out.sum(dtype=self._f32) if dt in self._half else out.sum()).item()
                    if v - v == 0 or (n > 1 and bool(out.isfinite().all())):
                        return  # finite (a sum that overflowed from finite elements included)
                except Exception:  # no kernel reads it: skipped and counted, never a crash
                    self._skip(out)
                    return
                bad = out
            else:
                bad = self._checked(outs)
        else:
            if isinstance(out, Tensor):
                outs = (out,)
            elif isinstance(out, tuple) and out:
                # several results: the first is the op's value; the rest are saved for backward (log_alpha of
                # _ctc_loss holds -inf by design, native_layer_norm's mean/rstd, indices)
                first = out[0]
                if "backward" in name:  # every result of a backward op is a gradient
                    outs = [t for t in out if isinstance(t, Tensor)]
                else:
                    outs = (first,) if isinstance(first, Tensor) else [t for t in first if isinstance(t, Tensor)] \
                        if isinstance(first, list) else ()
            elif isinstance(out, list) and out:  # a Tensor[] result (_foreach_*): every tensor is a value
                outs = [t for t in out if isinstance(t, Tensor)]
            elif inplace and args:
                a0 = args[0]
                outs = (a0,) if isinstance(a0, Tensor) else [t for t in a0 if isinstance(t, Tensor)] \
                    if isinstance(a0, (list, tuple)) else ()
            else:
                return
            if name in _COPIES:
                src = args[1] if name == "aten::copy_" and len(args) > 1 else args[0] if args else None
                if not isinstance(src, Tensor) or all(t.dtype == src.dtype for t in outs):
                    return
            if self.deferred:
                self._defer(name, args, kwargs, outs, inplace, frame)
                return
            bad = self._checked(outs)
        if bad is None or _constant(args, kwargs):
            return  # finite, or a NaN/Inf the program wrote as a constant (a -inf attention mask, masked_fill)
        if name in DOF and self._degenerate(name, args, kwargs, bad, frame):
            return
        ins: list[Any] = []
        _flat(args, ins)
        if kwargs:
            _flat(kwargs.values(), ins)
        dis, nof = self._guard
        with dis(), nof():
            self._report(name, bad, ins, list(outs), inplace, frame or self.locate(), self._stage(), self.step)

    def _checked(self, outs: Sequence[Any]) -> Any:
        """:meth:`_first_nonfinite` of ``outs``, under the guards where Python code could see its reductions."""
        # Both guards only matter when Python code could see the reduction: a mode on either stack, or a
        # result whose class has __torch_function__/__torch_dispatch__ of its own. Without any (most calls:
        # the emulated device's mode is off its stack while its __torch_dispatch__ runs), entering them
        # changes nothing and costs about 0.7 us per call, so they are entered only then. A dispatch mode on its
        # stack sees nothing while the caller holds the Python key off (the direct path's call, emulate/direct.py).
        guard = (self._modes() and not self._key_off()) or self._fmodes()
        if not guard:
            plain = self._plain
            for t in outs:
                if t.__class__ not in plain:
                    guard = True
                    break
        if guard:
            dis, nof = self._guard
            with dis(), nof():
                return self._first_nonfinite(outs)
        return self._first_nonfinite(outs)

    def _first_nonfinite(self, outs: Sequence[Any]) -> Any:
        """The first of ``outs`` that holds a NaN/Inf, checked one reduction each (module docstring), or
        ``None``. Runs under the guards when the caller needs them (:meth:`observe`)."""
        floats = self._floats
        for t in outs:
            dt = t.dtype
            if dt not in floats or t.is_meta:
                continue
            try:
                n = t.numel()
                if n == 0:
                    continue
                if not self._first_look(t):
                    continue
                x = t if t.layout is self._strided and dt not in self._upcast else readable(t, _torch(), self._upcast)
                dt = x.dtype
                # one element (a loss, a step count): its value is its sum, read without the reduction
                if n == 1 and dt in self._real:
                    v = x.item()
                else:
                    v = (x.sum(dtype=self._f32) if dt in self._half else x.sum()).item()
                if v - v == 0:  # finite: inf - inf and NaN - NaN are NaN, for complex values too
                    continue
                if n == 1 or not bool(x.isfinite().all()):
                    return t
                # the sum overflowed; every element is finite
            except Exception:  # no kernel reads this dtype or layout: skipped and counted, never a crash
                self._skip(t)
        return None

    def _skip(self, t: Any) -> None:
        self.skipped += 1
        try:
            kind = f"{str(t.dtype).replace('torch.', '')} {str(t.layout).replace('torch.', '')}"
        except Exception:
            kind = type(t).__name__
        self.skipped_kinds[kind] = self.skipped_kinds.get(kind, 0) + 1

    def _finite(self, x: Any) -> bool:
        """Whether every element of ``x`` is finite; an unreadable ``x`` counts as finite (and is counted)."""
        try:
            if x.layout is not self._strided or x.dtype in self._upcast:
                x = readable(x, _torch(), self._upcast)
            return bool(_all_finite(x))
        except Exception:
            self._skip(x)
            return True

    def _first_look(self, t: Any) -> bool:
        """Whether ``t`` (at its current version) is checked for the first time, counted in :attr:`checked`; False
        for the result of a composite's callee that the composite returns again."""
        version = _version(t)
        recent = self._recent
        seen = recent.get(id(t))
        if seen is not None and seen[0]() is t and seen[1] == version:
            return False
        if len(recent) >= MAX_RECENT:
            recent.clear()
        recent[id(t)] = (weakref.ref(t), version)
        self.checked += 1
        return True

    def _defer(self, name: str, args: Any, kwargs: Any, outs: Sequence[Any], inplace: bool, frame: Any) -> None:
        """The check on an accelerator: the reductions are kept, read together at :meth:`flush`."""
        floats = self._floats
        ins: list[Any] | None = None
        dis, nof = self._guard
        with dis(), nof():
            for t in outs:
                dt = t.dtype
                if dt not in floats or t.is_meta or t.numel() == 0:
                    continue
                if not self._first_look(t):
                    continue
                try:
                    x = t if t.layout is self._strided and dt not in self._upcast else \
                        readable(t, _torch(), self._upcast)
                    s = x.sum(dtype=self._f32) if x.dtype in self._half else x.sum()
                except Exception:  # no kernel reads this dtype or layout: skipped and counted
                    self._skip(t)
                    continue
                if ins is None:
                    ins = []
                    _flat(args, ins)
                    if kwargs:
                        _flat(kwargs.values(), ins)
                self._pending.append((s, t, name, ins, inplace, frame or self.locate(), self._stage(), self.step,
                                      [(weakref.ref(x), _version(x)) for x in ins], args, kwargs))
                if len(self._pending) >= MAX_PENDING:
                    self.flush()

    def flush(self) -> None:
        """Read the deferred checks (one synchronisation); report the first non-finite result among them."""
        pending, self._pending = self._pending, []
        if not pending or self.first is not None:
            return
        torch = _torch()
        dis, nof = self._guard
        with dis(), nof():
            sums = torch.stack([p[0].reshape(()).to(torch.float32) if not p[0].is_complex()
                                else torch.view_as_real(p[0]).sum().to(torch.float32) for p in pending])
            bad = (~torch.isfinite(sums)).nonzero()
            for (i,) in bad.tolist():
                _s, t, name, ins, inplace, frame, stage, step, refs, args, kwargs = pending[i]
                if self._finite(t) or _constant(args, kwargs):
                    continue
                alive = [r() for r, v in refs]
                unchanged = all(x is not None and _version(x) == v for x, (_r, v) in zip(alive, refs))
                self._report(name, t, ins if unchanged else [], [t], inplace, frame, stage, step,
                             inputs_kept=unchanged)
                if self.first is not None:
                    return

    def _stage(self) -> str | None:
        return self.stage if self.stage_of is None else self.stage_of()

    # ------------------------------------------------------------------ non-finite
    def _report(self, name: str, t: Any, ins: list, outs: list, inplace: bool, frame: Any, stage: str | None,
                step: int, inputs_kept: bool = True) -> None:
        written = {id(o) for o in outs} if inplace else set()
        floating = [x for x in ins if _floating(x) and x.device.type != "meta"]
        finite = all(id(x) in written or self._finite(x) for x in floating)
        if not finite and self._cands and self._explained(floating, written):
            return  # made from a degenerate reduction's NaN (info), or from a candidate already followed
        if not finite:
            self._propagated += 1
            # each such result costs an element-wise confirmation and a look at every input: past the bound the
            # check stops (a NaN from the data reaches every later result) and says so (``gave_up``)
            if self._propagated >= MAX_PROPAGATED:
                self.gave_up = True
            if self.propagated is not None or not has_nan(t):
                return  # an Inf carried on from an input (a mask added to scores) is not kept
        inputs = []
        for x in floating:
            s = tensor_summary(x)
            s["written"] = id(x) in written
            inputs.append(s)
        res = tensor_summary(t)
        doc = {
            "op": name, "dtype": res["dtype"], "stage": stage, "step": step,
            "location": frame_dict(frame),
            "nan": res["nan"], "inf": res["inf"], "numel": int(t.numel()),
            "from_finite_inputs": finite if inputs_kept else None,
            "inputs": inputs if inputs_kept else None,
            "check": "deferred: read at the end of the stage" if self.deferred else "per call",
        }
        device = self.device_of(t) if self.device_of is not None else self.device
        if device is not None:
            doc["device"] = device
        if finite and inputs_kept and not self.deferred:
            # not a finding yet: only if it propagates, or is never masked (Candidate)
            self._candidate(Candidate(doc, t))
        elif finite or not inputs_kept:
            self.first = doc
        else:
            self.propagated = doc

    # ------------------------------------------------------------------ shapes
    def _new_shapes(self, key: tuple, frame: Any) -> None:
        """A (op, input shapes) pair not seen before: attributed to the user's line and the current step."""
        name, shapes = key
        step = self.step
        self._seen[key] = True
        if frame is None:
            frame = self.locate()
        if frame is None:
            return
        where = (name, frame.path, frame.line)
        slot = self._lines.get(where)
        if slot is None:
            slot = self._lines[where] = {"op": name, "location": frame.to_dict(), "first_step": step,
                                         "new_in_steps": [], "shapes": [], "distinct": 0}
        slot["distinct"] += 1
        if len(slot["shapes"]) < MAX_SHAPES:
            slot["shapes"].append([list(s) for s in shapes])
        if step != slot["first_step"] and (not slot["new_in_steps"] or slot["new_in_steps"][-1] != step):
            slot["new_in_steps"].append(step)

    @property
    def result(self) -> dict[str, Any] | None:
        """The first non-finite result from finite inputs that propagated (or was never masked: it reached the end
        of the run, a NaN loss printed), else the first from non-finite inputs, else ``None``."""
        if self.first is None:
            left = next((c for c in self._cands if not c.info and not c.masked), None)
            if left is not None:
                return left.doc
        return self.first or self.propagated

    @property
    def masked_count(self) -> int:
        """Non-finite results from finite inputs masked before any use (where, nan_to_num, indexing): not findings."""
        return self.masked + sum(1 for c in self._cands if not c.info and c.masked)

    @property
    def steps_observed(self) -> int:
        return len(self._steps)

    def dynamic_shapes(self, fraction: float = DEFAULT_FRACTION) -> list[dict[str, Any]]:
        """``[{"op", "location", "distinct", "shapes", "new_in_steps", "steps"}]``: the (op, line) pairs whose
        input shapes were new in more than ``fraction`` of the observed steps after their first (module
        docstring); empty with fewer than :data:`MIN_STEPS` steps observed."""
        if len(self._steps) < MIN_STEPS:
            return []
        last = max(self._steps)
        out = []
        for slot in self._lines.values():
            later = sum(1 for s in self._steps if slot["first_step"] < s <= last)
            if later >= MIN_STEPS - 1 and len(slot["new_in_steps"]) > fraction * later:
                out.append({**slot, "steps": later + 1})
        out.sort(key=lambda d: (-d["distinct"], d["location"]["path"], d["location"]["line"], d["op"]))
        return out

    def to_dict(self, fraction: float = DEFAULT_FRACTION) -> dict[str, Any]:
        """``{"nan_check", "checked", "gave_up", "first_nonfinite", "dynamic_shapes", "steps_observed"}``."""
        return {"nan_check": self.nan_check, "checked": self.checked, "gave_up": self.gave_up,
                "first_nonfinite": self.result, "masked": self.masked_count, "degenerate": list(self.notes),
                "skipped": self.skipped, "skipped_kinds": dict(self.skipped_kinds),
                "dynamic_shapes": self.dynamic_shapes(fraction) if self.shapes else None,
                "steps_observed": self.steps_observed if self.shapes else None}


def _version(t: Any) -> int | None:
    """The tensor's version counter; ``None`` for an inference tensor (``torch.inference_mode``), which has
    none ("Inference tensors do not track version counter")."""
    try:
        return t._version
    except RuntimeError:
        return None


def _constant(args: Any, kwargs: Any) -> bool:
    """Whether a Python float argument is NaN/Inf (a constant the program wrote: ``full(..., -inf)``)."""
    for v in args:
        if v.__class__ is float and not math.isfinite(v):
            return True
    if kwargs:
        for v in kwargs.values():
            if v.__class__ is float and not math.isfinite(v):
                return True
    return False


def _all_finite(t: Any) -> Any:
    torch = _torch()
    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        return torch.isfinite(t).all()
