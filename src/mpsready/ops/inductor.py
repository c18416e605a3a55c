"""What each release's Inductor Metal code generation can lower, as mined (``data/mined/inductor_mps.json``).

Written by ``python -m mpsready.ops.build.inductor --sources DIR -o src/mpsready/ops/data/mined/inductor_mps.json``
from each release's ``torch/_inductor/codegen/mps.py`` (the macOS arm64 wheels, 2.7.0-2.14.1, every release read in
its own file; docs/emulation.md "Round 4"). The judge (``Judge.compile_refusal``) raises what the release's code
generation raises on a compiled region: a reduction type it has no branch for, the multistage form of a type it
asserts away, a dtype outside its ``DTYPE_TO_METAL``.

Which reduction types a region needs is derived from the aten calls the emulator sees (Inductor's lowerings, read
in the installed torch 2.13 ``torch/_inductor/lowering.py`` and ``decomposition.py``: ``var``/``std``/``var_mean``
and the layer, group and training-mode batch norms lower to ``welford_reduce``; a split of such a reduction
combines its partial results with ``welford_combine``). When Inductor splits a reduction is its heuristic
(``torch/_inductor/choices.py`` ``reduction_split_factor``, inner reductions, read in 2.13.0; older releases
inferred): no split when the reduction has at most 8192 elements or when it has at least ``2 * cores`` outputs,
with ``cores`` the GPU's core count (``MpsInterface.get_device_properties``: ``torch.backends.mps.get_core_count``),
7 to 80 across Apple GPUs. So a reduction of more than 8192 elements with fewer than 14 outputs is split on every
Mac, one with 14 to 159 outputs only on some chips (not vouched for), and a longer one than the 1024-thread
threadgroup (``max_threadgroup_size``) without a split is multistage.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

NAME = "inductor_mps.json"
OPS_NAME = "inductor_mps_ops.json"  # the elementwise ops each release cannot generate (ops/build/inductor_ops.py)
FIRST_RELEASE = (2, 7)
NO_SPLIT_MAX = 8192  # choices.py reduction_split_factor: reduction_numel_hint <= 8192 -> no split (2.13.0 read)
FEWEST_CORES, MOST_CORES = 7, 80  # Apple GPU core counts (M1 7-core .. M3 Ultra 80-core)
THREADGROUP = 1024  # codegen/mps.py max_threadgroup_size (every mined release)
# aten ops (base names) Inductor lowers to a Welford reduction, with how to read the reduction's geometry
WELFORD_OPS = frozenset({"aten::var", "aten::var_mean", "aten::std", "aten::std_mean", "aten::native_layer_norm",
                         "aten::layer_norm", "aten::native_group_norm", "aten::group_norm",
                         "aten::native_batch_norm", "aten::_native_batch_norm_legit", "aten::batch_norm"})


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The shipped document (schema ``mpsready.inductor-mps`` v1)."""
    raw = resources.files("mpsready.ops.data.mined").joinpath(NAME).read_text(encoding="utf-8")
    return json.loads(raw)


@lru_cache(maxsize=1)
def load_ops() -> dict[str, Any]:
    """The shipped document of the elementwise ops each release's Metal handler has no code for (schema
    ``mpsready.inductor-mps-ops`` v1, ``python -m mpsready.ops.build.inductor_ops``)."""
    raw = resources.files("mpsready.ops.data.mined").joinpath(OPS_NAME).read_text(encoding="utf-8")
    return json.loads(raw)


def unlowerable(torch: str, aten_ops: Any) -> tuple[str, str, str] | None:
    """The first of ``aten_ops`` (names as judged: ``aten::sinh``, ``aten::sinh_``, ``aten::cosh.out``) that Inductor
    lowers to an ops-handler method release ``torch``'s Metal handler has no code for, as ``(aten op, method, the
    mined release read)``;
    None when there is none or the release was not mined (before 2.7). A release given as ``2.9`` is read as its
    first mined patch release."""
    doc = load_ops()
    rels = doc["releases"]
    name = torch if torch in rels else next(iter(sorted(
        (r for r in rels if r.split(".")[:2] == torch.split(".")[:2]), key=lambda r: tuple(int(p) for p in r.split(".")))),
        None)
    if name is None:
        return None
    missing = set(rels[name]["missing"])
    by_aten = {a: m for m, atens in doc["lowered_as"].items() if m in missing for a in atens}
    for op in sorted(aten_ops):
        base = op.split("::", 1)[-1].split(".", 1)[0]
        method = by_aten.get(base) or by_aten.get(base.rstrip("_"))  # an in-place op is functionalized first
        if method is not None:
            return op, method, name
    return None


def facts(torch: str) -> dict[str, Any] | None:
    """The mined facts of release ``torch`` ("2.9.1", or "2.9": its first mined patch release), or None when it
    was not mined (before 2.7 there is no Metal back-end)."""
    rels = load()["releases"]
    if torch in rels:
        return rels[torch]
    parts = torch.split(".")
    if len(parts) == 2:
        for name in sorted(rels, key=lambda r: tuple(int(p) for p in r.split("."))):
            if name.split(".")[:2] == parts:
                return rels[name]
    return None


def welford_kind(reduced: int, outputs: int) -> str:
    """How Inductor generates a Welford reduction of ``reduced`` elements per output and ``outputs`` outputs on
    MPS (module docstring): ``welford_split`` (split on every Mac: a ``welford_reduce`` stage, then
    ``welford_combine``), ``welford_split_maybe`` (split on some chips), ``welford_multistage`` (one kernel looping
    over more than a threadgroup) or ``welford``."""
    if reduced > NO_SPLIT_MAX and outputs < 2 * FEWEST_CORES:
        return "welford_split"
    if reduced > NO_SPLIT_MAX and outputs < 2 * MOST_CORES:
        return "welford_split_maybe"
    if reduced > THREADGROUP:
        return "welford_multistage"
    return "welford"


def welford_geometry(op: str, shape: tuple[int, ...], args: tuple) -> tuple[int, int] | None:
    """(elements reduced per output, outputs) of a call of a Welford op (``WELFORD_OPS``, base name ``op``) on an
    input of ``shape``, from its arguments; None when the call reduces nothing (batch norm in eval mode) or the
    arguments cannot be read."""
    numel = 1
    for s in shape:
        numel *= int(s)
    if numel == 0:
        return None
    try:
        if op in ("aten::native_layer_norm", "aten::layer_norm"):
            reduced = 1
            for s in args[1]:
                reduced *= int(s)
        elif op in ("aten::native_group_norm",):
            n, c, hxw, group = int(args[3]), int(args[4]), int(args[5]), int(args[6])
            return (c // max(group, 1)) * hxw, n * group
        elif op == "aten::group_norm":
            group = int(args[1])
            return numel // (shape[0] * group), shape[0] * group
        elif op in ("aten::native_batch_norm", "aten::_native_batch_norm_legit", "aten::batch_norm"):
            training = args[5] if len(args) > 5 else False
            if op == "aten::_native_batch_norm_legit" and len(args) > 3 and isinstance(args[3], bool):
                training = args[3]  # the no_stats overload
            if not training or len(shape) < 2:
                return None
            return numel // int(shape[1]), int(shape[1])
        else:  # var / std / var_mean / std_mean: dim=None reduces everything
            dims = args[1] if len(args) > 1 else None
            if dims is None or (isinstance(dims, (list, tuple)) and not dims):
                return numel, 1
            dims = [dims] if isinstance(dims, int) else list(dims)
            reduced = 1
            for d in dims:
                reduced *= int(shape[d])
    except (IndexError, TypeError, ValueError):
        return None
    return (reduced, numel // reduced) if reduced else None


# torch.compile modes whose compiled code the emulated Mac's data covers: the default one. PyTorch's own Inductor
# tests on MPS (test/inductor/test_mps_basic.py, which reuses test_torchinductor.py's common tests) compile in the
# default mode; the other modes add CUDA graphs ("reduce-overhead", "max-autotune": triton.cudagraphs) and
# autotuning ("max-autotune", "max-autotune-no-cudagraphs"), which no mined fact covers on MPS. Public record:
# pytorch#188970 (2026-07, torch 2.13): mode="reduce-overhead" or "max-autotune" crashes the process (SIGSEGV in
# MPSStream::copy) on the first compiled run, where the default mode and max-autotune-no-cudagraphs are correct.
VOUCHED_MODES = (None, "default")


def mode_reason(torch: str, mode: Any, options: Any) -> str | None:
    """Why a region compiled with ``mode`` and ``options`` (``torch.compile``'s arguments) is not vouched for on
    torch ``torch``, or None for the default mode without options (:data:`VOUCHED_MODES`). Every release from 2.7
    (the first whose Inductor has a Metal back-end); the record is of 2.13, the others are inferred."""
    opts = sorted(str(k) for k in options) if isinstance(options, dict) and options else []
    if mode in VOUCHED_MODES and not opts:
        return None
    what = f"mode={mode!r}" if mode not in VOUCHED_MODES else ""
    if opts:
        what += (", " if what else "") + "options " + ", ".join(opts)
    crash = (" (mode='reduce-overhead' and 'max-autotune' turn on CUDA graphs: pytorch#188970, a crash in "
             "MPSStream::copy on torch 2.13)" if mode in ("reduce-overhead", "max-autotune")
             or "triton.cudagraphs" in opts else "")
    return (f"torch.compile with {what}: Inductor's MPS tests compile in the default mode only, so no fact covers "
            f"this mode's code on MPS{crash}: not verified on torch {torch}")
