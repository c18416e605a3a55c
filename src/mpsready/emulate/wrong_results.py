"""Wrong-result advisories matched on completed calls of the emulated device (``ops/data/mps_wrong_results.yaml``
and the mined advisories, :mod:`mpsready.ops.advisories`): the call's facts, the value probes some advisories
need, and the record at the user's line. Called by the dispatch mode (:mod:`.dispatch`) and by the kernels of
composite-implicit ops MPS runs whole (:mod:`.cia`)."""

from __future__ import annotations

import torch

from mpsready.emulate.session import Emulator
from mpsready.emulate.value_probes import probe as class_probe
from mpsready.emulate.widen import welford_call_kind
from mpsready.ops.advisories import AdvisoryFacts

_Tensor = torch.Tensor
_STRIDED = torch.strided
_DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                if isinstance(d, torch.dtype)}


def advise(emu: Emulator, op: str, schema_args, args, kwargs, ins, depth: int, out=None) -> None:
    """Match a completed call of ``op`` with a wrong-result advisory; on a hit, record it at the user's line. Without
    one, match it with the unverified regimes (sizes and arguments MPS has a record of failing in, no fix recorded:
    :meth:`mpsready.ops.advisories.AdvisoryIndex.regime`); on a hit the run cannot be a pass (``Emulator.note_regime``).
    ``schema_args``: the schema's argument names (the dispatch mode's, or ``emu/cia.py``'s kernels of
    composite-implicit ops MPS runs whole: ``linear``); ``depth``: the frames from here to the call's kernel;
    ``out``: the call's result where the caller has it (an empty result: ``AdvisoryFacts.result_empty``)."""
    names = _DTYPE_NAMES
    argv = {n: a for n, a in zip(schema_args, args) if not isinstance(a, (_Tensor, list, tuple))
            or (isinstance(a, (list, tuple)) and not any(isinstance(w, _Tensor) for w in a))}
    argv.update((k, v) for k, v in kwargs.items() if not isinstance(v, _Tensor))
    if op not in emu.advisories.wrong_ops:  # only a regime to match: dtypes, shapes and arguments suffice
        regime = emu.advisories.regime(op, AdvisoryFacts(
            dtypes=tuple(names.get(t.dtype, "") for t in ins), shapes=tuple(tuple(t.shape) for t in ins),
            contiguous=(), args=argv, strides=tuple(tuple(t.stride()) for t in ins if t.layout is _STRIDED),
            result_empty=_empty(out)))
        if regime is not None:
            emu.note_regime(regime, emu.frames.locate(depth))
        return
    strided = [t for t in ins if t.layout is _STRIDED]
    named = {n: a for n, a in zip(schema_args, args) if isinstance(a, _Tensor)}
    named.update((k, v) for k, v in kwargs.items() if isinstance(v, _Tensor))
    compiling = bool(emu.compiling)
    facts = AdvisoryFacts(dtypes=tuple(names.get(t.dtype, "") for t in ins),
                          shapes=tuple(tuple(t.shape) for t in ins),
                          contiguous=tuple(t.is_contiguous() for t in strided), args=argv,
                          strides=tuple(tuple(t.stride()) for t in strided),
                          offsets=tuple(t.storage_offset() for t in strided), compiled=compiling,
                          compiled_welford=welford_call_kind(op, ins, args) if compiling else None,
                          tensor_names=tuple(named), generator_restored=emu.generator_restored,
                          result_empty=_empty(out),
                          probe=lambda key, want: _probe(key, want, ins, named, argv, op))
    adv = emu.advisories.match(op, facts)
    if adv is not None:
        emu.note_wrong_result(adv, emu.frames.locate(depth))
        if compiling and ("compiled" in adv.when or "compiled_welford" in adv.when):
            emu.compiled_named.add(op)  # what Inductor makes of this call is known: it runs, wrong
        return
    regime = emu.advisories.regime(op, facts)
    if regime is not None:  # a regime the data cannot vouch for (mps_unverified_regimes.yaml): not a pass
        emu.note_regime(regime, emu.frames.locate(depth))


def _empty(out) -> bool:
    """Whether the call's result has no elements: a tensor, or every tensor of several (a training batch norm of an
    empty batch still computes its per-channel statistics, which have elements)."""
    if isinstance(out, (list, tuple)):
        outs = [o for o in out if isinstance(o, _Tensor)]
        return bool(outs) and all(o.numel() == 0 for o in outs)
    return isinstance(out, _Tensor) and out.numel() == 0


def _probe(key: str, want, ins, named, argv, op: str = "") -> bool:
    """The value conditions of a wrong-result advisory (advisories.PROBED), read from the call's tensors with every
    mode off (as the NaN watch reads them): ``masked_row`` (the ``attn_mask`` argument blocks every key of some
    query: a bool row all False or a float row all -inf), ``non_contiguous_arg`` (the tensor argument of that name
    is not contiguous), ``arg_dtype_differs`` (the tensor argument of that name has another dtype than the first
    tensor argument), ``spatial_size_ge`` (the tensor argument NAME has a dim from index 2 of at least N: a
    convolution's kernel), ``holds_zero`` (the first tensor holds a zero), ``nonfinite`` (a floating tensor argument holds an inf or a NaN),
    ``int_abs_gt`` (an integer tensor argument holds a value
    beyond N in magnitude), ``outside_range_within`` (the first tensor has a value outside ``[min, max]`` by at
    most the given margin: histc's widened range test). Any error reading them: the condition does not hold."""
    try:
        with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
            got = class_probe(key, want, ins, argv, op)  # the wrong-result classes' conditions (value_probes.py)
            if got is not None:
                return got
            if key == "masked_row":
                mask = named.get("attn_mask")
                if mask is None or mask.dim() == 0 or mask.numel() == 0:
                    return not want
                blocked = (~mask) if mask.dtype is torch.bool else torch.isneginf(mask)
                return bool(blocked.all(dim=-1).any()) == bool(want)
            if key == "int_abs_gt":
                for t in ins:
                    if t.numel() and not t.is_floating_point() and not t.is_complex() and t.dtype is not torch.bool:
                        return bool(t.abs().max() > int(want))
                return False
            if key == "non_contiguous_arg":
                t = named.get(want)
                return t is not None and t.layout is _STRIDED and not t.is_contiguous()
            if key == "spatial_size_ge":  # {NAME: N}: the tensor argument NAME has a dim from index 2 of at least N
                for name, n in dict(want).items():
                    t = named.get(name)
                    if t is None or not any(int(d) >= int(n) for d in tuple(t.shape)[2:]):
                        return False
                return True
            if key == "nonfinite":  # a floating tensor argument holds an inf or a NaN
                return any(t.numel() and t.is_floating_point() and not bool(torch.isfinite(t).all())
                           for t in ins) == bool(want)
            if key == "holds_zero":  # the first tensor argument holds a zero (either sign)
                x = ins[0] if ins else None
                return x is not None and bool(x.numel()) and bool((x == 0).any()) == bool(want)
            if key == "arg_dtype_differs":
                t = named.get(want)
                return t is not None and bool(ins) and t.dtype is not ins[0].dtype
            if key == "outside_range_within":
                lo, hi = argv.get("min"), argv.get("max")
                x = ins[0] if ins else None
                if x is None or not x.numel() or lo is None or hi is None or float(lo) >= float(hi):
                    return False
                eps = float(want)
                edge = ((x < lo) & (x >= lo - eps)) | ((x > hi) & (x <= hi + eps))
                return bool(edge.any())
    except (RuntimeError, TypeError, ValueError):
        return False
    return False
