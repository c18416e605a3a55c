"""Composite-implicit ops that MPS does not decompose.

A ``CompositeImplicitAutograd`` op (``linalg_svd``, ``linear``, ``max_pool2d``) is decomposed above the Python
dispatch key on this CPU, so the dispatch mode would only see its pieces. On MPS some of them have a kernel
of their own (an ``MPS:`` key in native_functions.yaml, e.g. ``linear``) or are forced onto the CPU
(``MPSFallback.mm``: ``linalg_svd`` up to 2.13, with a warning). For exactly those ops of the target release
(support data: status ``kernel`` / ``cpu_fallback_always`` / ``missing`` on an op that is CIA in the installed
torch) a Python kernel is registered for the ``AutogradCPU`` key (``torch.library.Library(..., "IMPL")``):
for resident inputs it asks the judge about the op itself, then runs the same decomposition
(``OpOverload.decompose``, autograd intact) without judging the pieces, which MPS never dispatches.
"""

from __future__ import annotations

import time

import torch

from mpsready.emulate import cpu_refusal, residence
from mpsready.emulate.aten import SIZED
from mpsready.emulate.dispatch import operands
from mpsready.emulate.widen import welford_call_kind
from mpsready.emulate.wrong_results import advise
from mpsready.emulate.session import Emulator
from mpsready.ops.judge import CallFacts

_MARKS = residence._MARKS
_REFS = _MARKS._refs
_Tensor = torch.Tensor
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}


def _overload(key: str):
    name, _, ov = key.partition(".")
    try:  # an op of the target table that the installed torch lacks (torch.ops raises, not AttributeError)
        return getattr(getattr(torch.ops.aten, name), ov or "default")
    except (AttributeError, RuntimeError):
        return None


def targets(emu: Emulator) -> list[tuple[str, object]]:
    """``(table key, OpOverload)`` for each CIA op whose MPS status is not its decomposition."""
    db = emu.judge.db
    out = []
    for key in db.op_names():
        rec = db.raw(key)
        if rec is None or rec["s"] not in ("kernel", "cpu_fallback_always", "missing") or rec["h"] == "yaml:implicit":
            continue
        qual = "aten::" + key
        try:
            cia = torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CompositeImplicitAutograd")
        except RuntimeError:  # an op of the target release that the installed torch does not have
            continue
        if not cia:
            continue
        op = _overload(key)
        if op is not None:
            out.append((qual, op))
    return out


_CIA = torch._C.DispatchKey.CompositeImplicitAutograd


def decomposer(op):
    """``op.decompose`` without its per-call question whether the op has a ``CompositeImplicitAutograd`` kernel
    (``torch._C._dispatch_has_kernel_for_dispatch_key`` by name, about 2 us of the 11 us a CPU ``linear`` call
    costs with the kernel below registered, issue 39): :func:`targets` asked it once. A Python decomposition
    registered for the key (``OpOverload.py_impl``, as ``torch._decomp`` does on import) still wins, as in
    ``OpOverload.decompose`` (torch/_ops.py, 2.0-2.13)."""
    run = op._op_dk

    def decompose(*args, **kwargs):
        py = op.py_kernels.get(_CIA)
        if py is not None:
            return py(*args, **kwargs)
        return run(_CIA, *args, **kwargs)
    return decompose


def _kernel(emu: Emulator, name: str, op):
    decompose = decomposer(op)

    def kernel(*args, **kwargs):
        if not _REFS:  # nothing resident on MPS (a CPU-only program or test): the decomposition as it is
            return decompose(*args, **kwargs)
        ins = [a for a in args if isinstance(a, _Tensor)]
        if emu.inside_kernel or not any(t in _MARKS for t in ins):
            return decompose(*args, **kwargs)
        big = 0  # the size regime's bytes (mps_dtype_checks.yaml bytes_gt), read past aten.SIZED elements only
        for t in ins:
            if t.numel() > SIZED:
                big = max(big, t.numel() * t.element_size())
        facts = CallFacts(dtypes=tuple(_DTYPE_NAMES.get(t.dtype, "") for t in ins), bytes_max=big)
        if name == "aten::linear" and len(ins) >= 2:  # the shapes its kernel checks read
            facts = _linear_facts(facts, args)
        cpu = emu.cpu_operands
        placement = None
        if cpu and any(id(t) in cpu for t in ins):  # a CPU input into an MPS kernel
            placement = (operands([a.name for a in op._schema.arguments], args, kwargs, cpu), False)
        j = emu.judge.call(name, facts, torch.is_grad_enabled(), placement=placement)
        if j.fails:
            exc = emu.fail(j, name)
            if exc is not None:
                raise exc
        back = None
        if facts.ndims is not None and torch.is_grad_enabled() and any(t.requires_grad for t in ins):
            back = emu.judge.backward_check(name, facts)
        t0 = time.perf_counter()
        emu.inside_kernel += 1
        try:
            out = decompose(*args, **kwargs)
        except Exception as exc:  # MPS runs the op as one kernel: a check of the CPU's path may not be its own
            cpu_refusal.note(emu, exc, name, op, args, kwargs, 2)
            raise
        finally:
            emu.inside_kernel -= 1
        if j.outcome == "fallback":
            emu.warn_fallback(j)
        if not j.fails:
            emu.note(j, name, facts.dtypes[0] if facts.dtypes else None, time.perf_counter() - t0,
                     emu.frames.locate(2) if j.outcome in ("fallback", "unknown") else None)
            if emu.compiling:  # inside a compiled region (release_api.py judges the region)
                emu.compiled_ops.add((name, facts.dtypes[0] if facts.dtypes else "",
                                      welford_call_kind(name, ins, args) or "other"))
            if j.outcome != "fallback" and name in emu.advisories.ops:  # known silent wrong results
                advise(emu, name, [a.name for a in op._schema.arguments], args, kwargs, ins, 3)
        if back is not None and isinstance(out, _Tensor):  # the MPS backward kernel of this call refuses
            out = _FailInBackward.apply(out, emu, back, name)
        for t in (out if isinstance(out, (list, tuple)) else (out,)):
            if isinstance(t, _Tensor):
                _MARKS[t] = True
        if emu.numerics is not None:  # MPS runs the op as one kernel: watched whole (mpsready/numerics/hooks.py)
            emu.numerics.observe(name, False, args, kwargs, out, 0)
        return out
    return kernel


def _linear_facts(facts: CallFacts, args) -> CallFacts:
    """``facts`` of a ``linear`` call with what its MPS kernel checks read: the weight's and input's ranks, the
    result as one matrix (rows: every input dim but the last; cols: out_features) and the contracted size."""
    x, w = args[0], args[1]
    if not (isinstance(x, _Tensor) and isinstance(w, _Tensor)) or not x.dim():
        return facts
    rows = 1
    for n in x.shape[:-1]:
        rows *= n
    cols = w.shape[0] if w.dim() == 2 else 1
    ndims = {"input": x.dim(), "weight": w.dim()}
    if len(args) > 2 and isinstance(args[2], _Tensor):
        ndims["bias"] = args[2].dim()
    return CallFacts(dtypes=facts.dtypes, ndims=ndims, out_matrix=(rows, cols), inner=x.shape[-1],
                     bytes_max=facts.bytes_max)


class _FailInBackward(torch.autograd.Function):
    """The identity, whose backward raises the failure the MPS backward kernel of the call would raise (a forward
    that runs on the Mac, a backward that aborts): raised where the program runs ``.backward()``."""

    @staticmethod
    def forward(ctx, x, emu, judgement, name):  # noqa: D102
        ctx.emu, ctx.judgement, ctx.name = emu, judgement, name
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        exc = ctx.emu.fail(ctx.judgement, ctx.name)
        if exc is not None:
            raise exc
        return grad, None, None, None


def install(emu: Emulator):
    lib = torch.library.Library("aten", "IMPL")
    found = targets(emu)
    for name, op in found:
        lib.impl(op, _kernel(emu, name, op), "AutogradCPU")
    emu.cia_ops = sorted(n for n, _ in found)

    def undo():
        lib._destroy()
    return undo
