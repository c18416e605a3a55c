"""The aten-level half of the emulated device: a thin ``TorchDispatchMode`` that observes and forwards.

Each aten call with a tensor resident on MPS (or made inside a factory or move onto MPS) is handed to
:meth:`mpsready.ops.judge.Judge.op` with plain facts (dtypes, sparse, ranks, a few schema arguments), then
forwarded unchanged to the CPU kernel; its results are marked resident. The mode never decides anything
itself (STYLE.md: torch/utils/_python_dispatch.py, torch/_subclasses/fake_tensor.py). What the judgement
says is carried out:

* ``error``: raise MPS's exception at the user's line (or, with ``--keep-going``, record it and go on);
* ``fallback``: MPS's warning once, the call timed as CPU fallback time;
* ``composite``: a ``CompositeExplicitAutograd`` kernel is run *below* the Python key with a child mode
  pushed (``func.redispatch``), so the ops it calls are judged where MPS would dispatch them (the
  trace recorder does the same, :mod:`mpsready.trace.recorder`); views are not expanded (their callees
  exist on MPS in every shipped release, tests/trace/test_recorder.py).

The dispatch mode is thread-local state that the autograd engine carries into its worker threads, so
backward ops are judged too.

A two-tensor call of the device function mode whose one aten call is learnt to take a plan that only counts
runs with the Python key off, the mode's count and residence mark done beside it (:mod:`mpsready.emulate.direct`).
"""

from __future__ import annotations

import time
from typing import Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mpsready.emulate import cpu_refusal, direct, dormant, residence
from mpsready.emulate.aten import SIZED as _SIZED, OpInfo, Plan, dtype_key, mark_all, op_name
from mpsready.emulate.call_checks import check_generator, copy_back, operands
from mpsready.emulate.call_facts import facts as _facts
from mpsready.emulate.session import Emulator, mac_error_kind
from mpsready.emulate.widen import CPU_DISPATCH_GAP, compiled_kind, widened
from mpsready.emulate.wrong_results import advise

_AFTER_PYTHON = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python)
_push = torch._C._push_on_torch_dispatch_stack
_pop = torch._C._pop_torch_dispatch_stack
_Tensor = torch.Tensor
_perf = time.perf_counter
_MARKS = residence._MARKS
_REFS = _MARKS._refs
_ref = residence._ref
_MAX_DEPTH = 6
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}
_STRIDED = torch.strided
_CPU_DEVICE = torch.device("cpu")
_graph_task = torch._C._current_graph_task_id
_grad_enabled = torch.is_grad_enabled  # -1 outside a backward pass (torch/csrc/autograd/init.cpp)


class MPSDispatch(TorchDispatchMode):
    """See the module docstring; ``depth`` > 0 for the callees of an expanded composite.

    The per-call work beyond forwarding is memoised per (op, argument dtypes, grad mode, depth) in a
    :class:`~mpsready.emulate.aten.Plan` whenever the judge reads nothing else of the call (:meth:`Judge.reads_only_dtypes`, no CPU
    operand beside MPS ones, dense tensors, none past ``aten.SIZED`` elements where sizes are read): a repeated call then costs one walk of
    its arguments (collecting its tensors and asking their residence, or reading the device mode's hint), the
    plan's look-up in the mode's table (:meth:`_remember`), the count on the plan's record, and one look-up of
    its result's dtype (``refused``) before its residence mark."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: no ``torch._disable_dynamo`` wrapper when the class is made; :mod:`mpsready.emulate.dynamo_shim`
        puts it on once the program imports ``torch._dynamo``."""
        return False


    def __init__(self, emu: Emulator, depth: int = 0):
        super().__init__()
        self.emu = emu
        self.depth = depth
        self.slot = 2 * (depth > 0)  # the plans of a composite's callees are kept apart (OpInfo.plans)
        self.infos: dict[int, OpInfo] = {}  # one dict, the root's, shared by its children
        # torch dtype -> whether MPS refuses to allocate it (Judge.allocation); shared by the children
        self.refused: dict[object, bool] = {}
        self.root = self
        self.children: dict[int, "MPSDispatch"] = {}
        self.parent: str | None = None  # for a child: the composite whose kernel runs below it now
        # the inline path's plans (_remember): id(op) -> (OpInfo, {(dtypes..., grad mode): Plan}, sized); shared
        # by the children, whose plans are kept apart from the root's (``slot``)
        self.quick: dict[int, tuple[OpInfo, dict, bool]] = {}
        # what direct.binary learnt: (torch function, dtypes, grad mode) -> (Plan, OpInfo, sized), or the number of
        # tries that learnt nothing; the torch functions whose aten calls are not one of their own name
        self.direct: dict[tuple, object] = {}
        self.indirect: set = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """Every aten call of the program, judged as MPS would dispatch it, then computed on the CPU, in three
        named steps, as PyTorch's ``FakeTensorMode`` lays out its own (``dispatch``, ``_cached_dispatch_impl``,
        ``_dispatch_impl`` in torch/_subclasses/fake_tensor.py):

        1. **resident check** (here, inline): one walk of the positional arguments collects the tensor arguments
           and whether one is on MPS; the placement check (whether a CPU tensor of the program's sits beside them,
           ``emu.cpu_operands``, device.py) runs on every call where the device mode handed such tensors in;
        2. **plan from the cache**: the judgement of this kind of call, memoised per (op, argument dtypes, grad
           mode, depth) when the judge reads nothing else of it (:meth:`_learn`); a first call is judged
           (:meth:`_plan`). The emulator holds one release, so the key is per (op, dtypes, release) too;
        3. **carry out** (:meth:`_carry_out`): raise, warn, run (expanded or not), count, mark the results.

        The common call (positional arguments only, one on MPS, no CPU operand, factory, kernel, deadline or
        compiled region under way, a plan that only counts: :attr:`Plan.quick`) is carried out here, inline;
        every other call takes :meth:`_dispatch`, the same steps in full. Long because it is the hot path (one
        call per aten op): each helper call here costs per op, and ``benchmarks/dispatch_bench.py`` measures this
        function's cost against a bare dispatch mode. The tensors collected in step 1 are handed to the numerics
        watch, which does not walk the arguments again."""
        refs = _REFS  # ``t in _MARKS`` without the method call: this runs for every argument of every call
        if len(args) == 2 and isinstance(t := args[0], _Tensor) and isinstance(u := args[1], _Tensor):
            ins = args  # the common binary op: its arguments are its tensors
            if t is _MARKS.hint:  # the device function mode found it resident (residence._Marks.hint)
                on = True
                if _MARKS.learn is not None:  # direct.binary learns what this call does
                    return direct.learnt(self, _HANDLE, func, args, ins)
            else:
                r = refs.get(id(t))
                on = r is not None and r() is t
            if not on:
                r = refs.get(id(u))
                on = r is not None and r() is u
        else:
            ins = []
            on = False
            for v in args:
                if isinstance(v, _Tensor):
                    ins.append(v)
                    if not on:
                        r = refs.get(id(v))
                        on = r is not None and r() is v
                elif isinstance(v, (list, tuple)):
                    for w in v:
                        if isinstance(w, _Tensor):
                            ins.append(w)
                            if not on:
                                r = refs.get(id(w))
                                on = r is not None and r() is w
        emu = self.emu
        if not on:
            if _MARKS.learn is not None:
                _MARKS.learn.append(None)  # not the one aten call direct.binary can stand in for
            # a CPU call of the program's (no tensor on MPS, none made onto it): run as it is (_off_device's
            # common case), through the overload's C++ callable, unless a keyword may hold a resident tensor
            # (``out=``), a generator (judged where it is used) or a device (a factory naming MPS)
            if emu.creating or emu.cpu_operands or emu.numerics is not None:
                return self._dispatch(func, args, kwargs or {}, ins, on)
            if not kwargs:
                return getattr(func, "_op", func)(*args)
            if "device" in kwargs or "generator" in kwargs:
                return self._dispatch(func, args, kwargs, ins, on)
            for v in kwargs.values():
                if isinstance(v, _Tensor):
                    return self._dispatch(func, args, kwargs, ins, on)
            return getattr(func, "_op", func)(*args, **kwargs)
        if kwargs or emu.creating or emu.cpu_operands or emu.inside_kernel or emu.compiling \
                or emu.deadline is not None:
            return self._dispatch(func, args, kwargs or {}, ins, on)
        # 2. the plan from the cache: the mode's plan table (_remember), keyed by the tensors' dtypes and the grad
        # mode, one look-up per op and one per kind of call
        q = self.quick.get(id(func))
        if q is None:
            return self._dispatch(func, args, {}, ins, on)
        info, plans, sized = q
        n = len(ins)
        if n == 2:
            t, u = ins
            key: object = (t.dtype, u.dtype, _grad_enabled()) if t.layout is _STRIDED and u.layout is _STRIDED \
                and not (sized and (t.numel() > _SIZED or u.numel() > _SIZED)) else None
        elif n == 1:
            t = ins[0]
            key = (t.dtype, _grad_enabled()) if t.layout is _STRIDED and not (sized and t.numel() > _SIZED) \
                else None
        else:
            key = dtype_key(ins, sized)
            if key is not None:
                key = (*key, _grad_enabled())
        plan = plans.get(key)
        if plan is None:
            return self._dispatch(func, args, {}, ins, on)
        if not plan.quick:
            return self._carry_out(plan, info, func, args, {}, ins)
        # 3. carry it out: a plan that only counts (_carry_out's common case, inline)
        t0 = _perf()
        try:
            out = info.op(*args)
        except Exception as exc:  # the CPU kernel's own check? (emulate/cpu_refusal.py)
            cpu_refusal.note(emu, exc, info.name, func, args, {}, 2)
            raise
        seconds = _perf() - t0
        rec = plan.record
        rec.calls += 1
        rec.seconds += seconds
        if isinstance(out, _Tensor) and (self.depth or not self.refused.get(out.dtype, True)):
            refs[id(out)] = _ref(out)  # its residence mark (residence._Marks.__setitem__, inline)
            if len(refs) > _MARKS._limit:
                _MARKS._sweep()
        else:
            land(emu, out, info.name, ins, self.depth, self.refused)
        if emu.numerics is not None:  # the first NaN/Inf and shapes per line (mpsready/numerics/hooks.py)
            emu.numerics.observe(info.name, info.inplace, args, {}, out, self.depth, info.view, ins)
        return out

    def _dispatch(self, func, args, kwargs, ins: Sequence, on: bool):
        """Steps 1 to 3 of :meth:`__torch_dispatch__` for every call its inline path does not take (``ins``: the
        tensors of ``args``, lists opened; ``on``: one of them is on MPS): keyword arguments (factories naming
        MPS, ``generator=``, moves off the device), CPU operands beside MPS tensors, calls inside a factory, an
        MPS kernel or a compiled region, the deadline's check, and each kind of call's first call."""
        emu = self.emu
        if _MARKS.learn is not None:
            _MARKS.learn.append(None)  # not the one aten call direct.binary can stand in for
        if not on and kwargs:
            if emu.creating > 0:
                on = True
            else:
                for v in kwargs.values():
                    if isinstance(v, _Tensor) and v in _MARKS:
                        on = True
                        break
        elif emu.creating > 0:
            on = True
        cpu = emu.cpu_operands
        mixed = False  # a CPU tensor the program handed in beside MPS ones (device.py) reaches this op
        if cpu:
            for t in ins:
                if id(t) in cpu:
                    mixed = True
                    break
            if not mixed and kwargs:
                mixed = any(isinstance(v, _Tensor) and id(v) in cpu for v in kwargs.values())
        if kwargs and emu.generators:  # an explicit generator= (keyword-only in every aten schema)
            gen = kwargs.get("generator")
            if gen is not None:
                check_generator(emu, op_name(func), on)
        if not on and kwargs:
            dev = kwargs.get("device")
            if dev is not None and (dev == "mps" or getattr(dev, "type", None) == "mps"):
                # a factory naming MPS inside a library's Python function that the device mode forwarded whole
                # (F.fractional_max_pool2d's torch.rand(device=input.device)): made on this CPU, on the device
                kwargs = {**kwargs, "device": _CPU_DEVICE}
                on = True
        if not on:
            return self._off_device(func, args, kwargs, mixed, cpu)
        info = self.infos.get(id(func)) or self._info(func)
        if info.copy and kwargs.get("device") is not None and emu.creating == 0:
            dt = kwargs.get("dtype")
            if dt is not None and ins and dt != ins[0].dtype:  # .to("cpu", torch.float64): the copy back casts
                copy_back(emu, ins[0], dt)
            return func(*args, **kwargs)  # .cpu(): leaves the device, the result is not resident
        if emu.inside_kernel:
            out = func(*args, **kwargs)
            mark_all(out)
            return out
        if emu.deadline is not None:
            emu.check_time()
        # 2. the plan from the cache
        grad = _grad_enabled()
        plan = None
        key: object = None
        if not mixed and ins and (info.dtype_only or (info.dtype_only is None and self._learn(info))):
            key = dtype_key(ins, info.sized)
            if key is not None:
                if len(ins) == 1:
                    key = key[0]
                plan = info.plans[grad + self.slot].get(key)
        if plan is None:
            plan = self._plan(info, args, kwargs, ins, grad, mixed, cpu)
            if key is not None and plan.memo:
                info.plans[grad + self.slot][key] = plan
                self._remember(func, info, key, grad, plan)
        # 3. carry it out
        return self._carry_out(plan, info, func, args, kwargs, ins)

    def _off_device(self, func, args, kwargs, mixed: bool, cpu):
        """A call with no tensor on MPS: run as it is (a view of a CPU operand stays one; the NaN check of the
        program's CPU calls, when on)."""
        emu = self.emu
        if mixed and self._info(func).view:
            out = func(*args, **kwargs)  # a view of such a tensor is the same CPU data
            for t in (out if isinstance(out, (list, tuple)) else (out,)):
                if isinstance(t, _Tensor):
                    cpu[id(t)] = t
            return out
        if emu.numerics is not None and emu.numerics.nan_active:  # the program's CPU calls: NaN check only
            out = func(*args, **kwargs)
            info = self._info(func)
            emu.numerics.observe_cpu(info.name, info.inplace, args, kwargs, out, info.view)
            return out
        return func(*args, **kwargs)

    def _carry_out(self, plan: Plan, info: OpInfo, func, args, kwargs, ins):
        """Step 3 of :meth:`__torch_dispatch__`: what ``plan`` says, then the call on the CPU (its overload's C++
        callable, ``OpOverload.__call__`` only forwards to it), its count and time on the plan's record, the
        wrong-result advisories, the results' residence marks and the numerics watch."""
        emu = self.emu
        name = info.name
        if plan.fails:
            exc = emu.fail(plan.j, name)
            if exc is not None:
                raise exc
        if emu.compiling and not self.depth:  # a call of a compiled region (release_api.py judges the region)
            emu.compiled_ops.add((plan.j.op, plan.dtype or "", compiled_kind(info, func, ins, args)))
        t0 = _perf()
        wide = False  # computed on a wider dtype: never the inline path, which calls the op as it is
        try:
            out = self._expand(func, ins, args, kwargs, name) if plan.expand else info.op(*args, **kwargs)
        except NotImplementedError as exc:  # this CPU lacks a dtype the target's MPS kernel has (histc on ints)
            if (plan.fails or plan.fallback or plan.expand or not CPU_DISPATCH_GAP.match(str(exc))
                    or not emu.judge.dtype_added(name, plan.dtype or "")):
                cpu_refusal.note(emu, exc, name, func, args, kwargs, 3)
                raise
            out = widened(info.op, args, kwargs)
            wide = True
        except Exception as exc:  # the CPU kernel's own check? (emulate/cpu_refusal.py)
            cpu_refusal.note(emu, exc, name, func, args, kwargs, 3)
            raise
        seconds = _perf() - t0
        if plan.fallback:
            emu.warn_fallback(plan.j)
            emu.note(plan.j, name, plan.dtype, seconds, emu.frames.locate(3))
        elif not plan.fails:
            rec = plan.record
            if rec is None:  # the line of a call judged on no data is kept: the run lists it (unverified)
                rec = plan.record = emu.note(plan.j, name, plan.dtype, seconds,
                                             emu.frames.locate(3) if plan.unknown else None)
                plan.quick = plan.advise is None and not plan.expand and not wide
            else:
                rec.calls += 1
                rec.seconds += seconds
            if plan.advise is not None:  # known silent wrong results (mps_wrong_results.yaml)
                _advise(emu, plan.advise, info, args, kwargs, ins, 4, out)
        if isinstance(out, _Tensor) and (self.depth or emu.creating or not self.refused.get(out.dtype, True)):
            refs = _REFS
            r = refs.get(id(out))  # one result of an allowed dtype: its mark, inline (land() otherwise)
            if r is None or r() is not out:
                refs[id(out)] = _ref(out)  # residence._Marks.__setitem__, inline
                if len(refs) > _MARKS._limit:
                    _MARKS._sweep()
        else:
            land(emu, out, name, ins, self.depth, self.refused)
        if emu.numerics is not None:  # the first NaN/Inf and shapes per line (mpsready/numerics/hooks.py)
            emu.numerics.observe(name, info.inplace, args, kwargs, out, self.depth, info.view, ins)
        return out

    def forward(self, func, types, args=(), kwargs=None):
        """Run one aten call through this mode, called from the ``__torch_dispatch__`` of a mode stacked right
        above it (the trace recorder's on the emulated device, :mod:`mpsready.trace.emulated`), instead of that
        mode's ``func(*args, **kwargs)``. Same arguments and result; the same exceptions, raised at the same
        point. The call reaches :meth:`__torch_dispatch__` as the dispatcher would hand it over (this mode off
        the mode stack while it runs, back on afterwards, as ``StashTorchDispatchModeGuard`` does in
        torch/csrc/utils/torch_dispatch_mode.h, 2.1-2.13), without a second trip through the dispatcher, the
        Python key's fallback and the dynamo-disable shim (``TorchDispatchMode.__init_subclass__``): the
        calling mode's shim already covers this one. When this mode is not the top of the stack (a program
        pushed its own mode under the caller's), the call goes through the dispatcher as before."""
        dormant.wake(self.emu)  # off the stack while nothing was resident (dormant.py): back under the caller's
        top = _pop(None)
        if top is not self:
            _push(top)
            return func(*args, **(kwargs or {}))
        try:
            return _HANDLE(self, func, types, args, kwargs)
        finally:
            _push(self)

    def _remember(self, func, info: OpInfo, key, grad: bool, plan: Plan) -> None:
        """Put a plan just memoised in ``info.plans`` (under ``key``, this mode's slot and ``grad``) in the table
        the inline path of :meth:`__torch_dispatch__` reads: ``id(func)`` -> (its info, {(argument dtypes...,
        grad mode): plan}, ``info.sized``). The inline path keys a call as :func:`~mpsready.emulate.aten.dtype_key`
        does (no sparse tensor, none of more than INT_MAX elements where the judge reads ``dim_max``), so a hit
        is the plan ``info.plans`` holds for the call."""
        q = self.quick.get(id(func))
        if q is None:
            q = self.quick[id(func)] = (info, {}, info.sized)
        q[1][(*key, grad) if isinstance(key, tuple) else (key, grad)] = plan

    def forget_plans(self) -> None:
        """Drop every memoised plan (the judge's assumptions changed: ``PYTORCH_ENABLE_MPS_FALLBACK`` read at the
        program's first ``import torch``, run/child.py): what a plan holds depends on the judge's target, its
        fallback setting and the call's kind, and the key names only the call's kind."""
        for info in self.infos.values():
            info.plans = ({}, {}, {}, {})
        self.quick.clear()
        for child in self.children.values():
            child.quick.clear()
        self.direct.clear()

    def _learn(self, info: OpInfo) -> bool:
        """On an op's first memoisable-looking call: whether the judge reads only its dtypes (class docstring),
        and whether it reads ``dim_max`` (then a call with a tensor of more than INT_MAX elements is judged
        afresh)."""
        judge = self.emu.judge
        if info.wants is None:
            info.wants = judge.wants(info.name)
        info.sized = "dim_max" in info.wants and not info.view
        only = info.dtype_only = judge.reads_only_dtypes(info.name, True) and \
            judge.reads_only_dtypes(info.name, False)
        return only

    def _plan(self, info: OpInfo, args, kwargs, ins, grad: bool, mixed: bool, cpu) -> Plan:
        """Judge one call (:meth:`mpsready.ops.judge.Judge.call`) and say how to carry the answer out."""
        emu = self.emu
        facts = _facts(info, args, kwargs, ins, emu.judge)
        placement = None
        if mixed and emu.creating == 0 and _graph_task() == -1:  # the program's own CPU tensor, not autograd's
            placement = (_operands(info, args, kwargs, cpu), info.pointwise)
        parent = self.parent if self.depth else None
        j = emu.judge.call(info.name, facts, grad, inside=self.depth > 0, exact=emu.exact_composites,
                           installed=torch.__version__, placement=placement, parent=parent)
        adv_ops = emu.advisories.ops
        advise = None
        if adv_ops and j.outcome != "fallback":
            advise = info.name if info.name in adv_ops else j.op if j.op in adv_ops else None
        expand = j.outcome == "composite" and not info.view and self.depth < _MAX_DEPTH
        # inside another release's composite a failing callee's judgement depends on its parent: not memoised
        memo = not (parent is not None and not emu.exact_composites
                    and (j.fails or j.kind == "callee_of_other_release"))
        return Plan(j, facts.dtypes[0] if facts.dtypes else None, expand, advise, memo)

    def _info(self, func) -> OpInfo:
        infos = self.infos
        info = infos.get(id(func))
        if info is None:
            info = infos[id(func)] = OpInfo(func)
        return info

    def _expand(self, func, ins, args, kwargs, name: str | None = None):
        if ins:
            keys = torch._C._dispatch_keys(ins[0])
            for t in ins[1:]:
                keys = keys | torch._C._dispatch_keys(t)
        else:
            keys = torch._C._dispatch_keys(torch.empty(0))
        child = self.children.get(self.depth + 1)
        if child is None:
            child = self.children[self.depth + 1] = MPSDispatch(self.emu, self.depth + 1)
            child.root, child.infos, child.refused = self.root, self.infos, self.refused
            if self.depth:  # every child (depth > 0) reads the plans of slot 2: one table for them all
                child.quick = self.quick
        outer = child.parent
        child.parent = name
        _push(child)
        try:
            try:
                return func.redispatch(keys & _AFTER_PYTHON, *args, **kwargs)
            except (RuntimeError, TypeError) as exc:
                # a Mac failure of a callee stands; anything else is the redispatch refusing the overload's
                # arguments (a Scalar overload such as remainder.Scalar: "Unable to cast 37 to Tensor"), and
                # the plain call below computes the op (or raises the program's own error again)
                if mac_error_kind(exc) is not None:
                    raise
        finally:
            _pop(None)
            child.parent = outer
        return func(*args, **kwargs)


# __torch_dispatch__ as written, without the dynamo-disable shim TorchDispatchMode wraps it in (torch/utils/
# _python_dispatch.py __init_subclass__, 2.1-2.13; functools.wraps keeps it as __wrapped__)
_HANDLE = getattr(MPSDispatch.__dict__["__torch_dispatch__"], "__wrapped__", MPSDispatch.__dict__["__torch_dispatch__"])


def _operands(info: OpInfo, args, kwargs, cpu) -> list:
    return operands(info.schema_args, args, kwargs, cpu, info.inplace)


def land(emu: Emulator, out, name: str, ins=(), depth: int = 0, refused: dict | None = None) -> None:
    """Mark the results ``out`` of op ``name`` (called with tensors ``ins``) resident on MPS, first judging
    each result's dtype as an allocation there at depth 0 (``x.double()``: MPS cannot allocate float64,
    EmptyTensor.cpp TORCH_CHECK_TYPE); factories and moves are judged once, where they land (device.py).
    ``refused``: a cache of the judge's allocation verdict per torch dtype, filled here. Raises the Mac's
    exception unless ``--keep-going``."""
    if isinstance(out, _Tensor):
        outs: Sequence = (out,)
    elif isinstance(out, (list, tuple)):
        outs = [t for t in out if isinstance(t, _Tensor)]
    else:
        return
    check = depth == 0 and emu.creating == 0
    for t in outs:
        # a result of the dtype of a resident input (a slice or detach of a float64 tensor that reached MPS
        # under --keep-going) follows from the failure already listed where that input reached MPS: a Mac
        # never gets this far, so it is not a failure of its own
        if check and _refuses(emu, t.dtype, refused) and not any(i.dtype == t.dtype and i in _MARKS for i in ins):
            exc = emu.fail(emu.judge.landing(_DTYPE_NAMES.get(t.dtype, ""), name), name)  # type: ignore[arg-type]
            if exc is not None:
                raise exc
        _MARKS[t] = True


def _refuses(emu: Emulator, dtype, refused: dict | None) -> bool:
    """Whether MPS refuses to allocate a tensor of torch ``dtype`` (:meth:`Judge.allocation`), cached in
    ``refused``."""
    hit = None if refused is None else refused.get(dtype)
    if hit is None:
        hit = emu.judge.allocation(_DTYPE_NAMES.get(dtype, "")) is not None
        if refused is not None:
            refused[dtype] = hit
    return hit


def _advise(emu: Emulator, op: str, info: OpInfo, args, kwargs, ins, skip: int = 3, out=None) -> None:
    """Match a completed call of an op with a wrong-result advisory; on a hit, record it at the user's line
    (``skip``: this function's frame and its callers' inside the mode; ``out``: the call's result)."""
    advise(emu, op, info.schema_args, args, kwargs, ins, skip + 1, out)


def install(emu: Emulator):
    """Push the mode for the rest of the process (kept as ``emu.dispatch``, for :meth:`MPSDispatch.forward`);
    returns the undo. Dynamo's shim goes back on when the program imports ``torch._dynamo`` (dynamo_shim.py)."""
    from mpsready.emulate import dynamo_shim

    mode = emu.dispatch = MPSDispatch(emu)
    unwatch = dynamo_shim.watch(MPSDispatch, _HANDLE)
    mode.__enter__()

    def undo() -> None:
        dormant.wake(emu)  # back on the stack, to come off it as it went on
        mode.__exit__(None, None, None)
        unwatch()
    return undo
