"""The evidence envelope (issue 33, round 10): what PyTorch's own MPS tests exercise of each aten call, and the
unverified regimes it implies for the emulated Mac.

PyTorch's MPS consistency tests (``test/test_mps.py`` ``TestConsistency``: ``test_output_match`` and
``test_output_grad_match``) run every OpInfo's ``sample_inputs`` on MPS and compare with CPU, forward and, for ops
with autograd, backward with random gradients. A call whose tensors have a property no sample of its op ever had
(an empty tensor, floating tensors of two dtypes, a non-contiguous tensor, a trailing size-1 dimension, more
dimensions than any sample) was never compared on a Mac. Where the op's family has a public record of MPS aborts
or wrong results (:func:`family`; the records are listed with their sources in the mined file), such a call is not
a pass: the run ends ``unverified`` (``kind`` ``regime``, the feature and the records in the reason). Elsewhere, or
inside the envelope, nothing changes.

The envelope is mined by ``python -m mpsready.ops.build --envelope`` (:mod:`mpsready.ops.build.envelope`) into
``data/mined/mps_envelope.json``: the OpInfo samples of the installed release (2.13.0; the only release whose test
material runs here), applied to every release (inferred: the OpInfo samples change little between releases, and
a release's tests exercising less only widens what is unverified there). The features of a call are computed by
:func:`features` for both the miner and the emulator, so the two cannot drift."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

from mpsready.ops.advisories import Advisory

MINED = "mpsready.ops.data.mined"
FILE = "mps_envelope.json"
# feature -> (the advisory condition that tests it, the words of the reason, only for backward overloads)
# Layouts and size-1 dims count only in a backward: the consistency test's backward leg feeds contiguous random
# gradients shaped as its samples' outputs, so a backward kernel never sees a view or a shape a program's upstream
# gradient has; forwards of real programs take views and size-1 dims routinely (attention over transposed q/k/v,
# any() over a (B, 1, 1, 1, 1) batch: both completed on the Mac in the tuning reports, the cost this rule avoids).
FEATURES = {
    "empty": ("any_empty", "a tensor with no elements", False),
    "mixed_float": ("mixed_float_dtypes", "floating tensors of different dtypes", False),
    "noncontig": ("strided_view", "a non-contiguous view (permuted, transposed or sliced; not a broadcast)", True),
    "trailing_one": ("trailing_size_one", "a trailing dimension of size 1", True),
}
# prefixes and suffixes that name a variant of one kernel family (forward/backward, the MPS-routed form)
_PREFIXES = ("native_", "mps_", "cudnn_", "miopen_", "mkldnn_")
_SUFFIXES = ("_backward", "_forward", "_with_indices", "_for_mps", "_out", "_")
# families spelled by more than one root name
_ALIASES = {"conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution", "conv_transpose1d":
            "convolution", "conv_transpose2d": "convolution", "conv_transpose3d": "convolution",
            "convolution_transpose": "convolution", "_convolution": "convolution", "batch_norm_legit": "batch_norm",
            "batch_norm_legit_no_training": "batch_norm", "batch_norm_legit_functional": "batch_norm",
            "scaled_dot_product_attention_math": "scaled_dot_product_attention",
            "scaled_dot_product_attention_math_for_mps": "scaled_dot_product_attention",
            "scaled_dot_product_flash_attention": "scaled_dot_product_attention",
            "scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
            "scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention"}


def family(op: str) -> str:
    """The kernel family of an aten overload: ``aten::convolution_backward`` -> ``convolution``,
    ``aten::native_layer_norm`` -> ``layer_norm``, ``aten::_mps_convolution`` -> ``convolution``,
    ``max_pool2d_with_indices_backward.grad_input`` -> ``max_pool2d``."""
    name = op.split("::", 1)[-1].split(".", 1)[0].lstrip("_")
    if name in _ALIASES:
        return _ALIASES[name]
    changed = True
    while changed:
        changed = False
        for p in _PREFIXES:
            if name.startswith(p) and len(name) > len(p):
                name, changed = name[len(p):], True
        for s in _SUFFIXES:
            if name.endswith(s) and len(name) > len(s):
                name, changed = name[: -len(s)], True
    return _ALIASES.get(name, name)


def strided_view(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether a tensor of ``shape`` and ``stride`` is a non-contiguous view that is not a broadcast: its strides
    are not the row-major ones (size-1 dimensions ignored, as ``is_contiguous`` does) and no dimension longer than
    1 has stride 0. A broadcast (``expand``: the gradient of a ``sum`` or ``mean``) is left out: every backward of a
    summed loss has one, and MPS reads it through its own gather path."""
    if len(shape) != len(stride) or 0 in shape:
        return False
    if any(st == 0 and d > 1 for d, st in zip(shape, stride)):
        return False
    want = 1
    for d, st in zip(reversed(shape), reversed(stride)):
        if d != 1 and st != want:
            return True
        want *= d
    return False


def features(shapes: Iterable[tuple[int, ...]], dtypes: Iterable[str],
             strides: Iterable[tuple[int, ...]]) -> dict[str, Any]:
    """The envelope features of one call from its tensor arguments (shapes, dtype names, strides, in order):
    ``rank`` (the most dimensions), ``empty`` (a tensor with no elements, of at least one dimension),
    ``mixed_float`` (floating tensors of two or more dtypes), ``noncontig`` (a non-contiguous view that is not a
    broadcast: :func:`strided_view`), ``trailing_one`` (a tensor of two or more dimensions whose last has size 1)."""
    shapes = [tuple(s) for s in shapes]
    floats = {d for d in dtypes if d.startswith(("float", "bfloat"))}
    return {"rank": max((len(s) for s in shapes), default=0),
            "empty": any(len(s) and 0 in s for s in shapes),
            "mixed_float": len(floats) > 1,
            "noncontig": any(strided_view(s, st) for s, st in zip(shapes, strides)),
            "trailing_one": any(len(s) >= 2 and s[-1] == 1 for s in shapes)}


@lru_cache(maxsize=None)
def load() -> dict[str, Any]:
    """The mined envelope (``data/mined/mps_envelope.json``); an empty one when the file is absent."""
    try:
        text = resources.files(MINED).joinpath(FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"ops": {}, "records": {}, "torch": None}
    return json.loads(text)


# An empty tensor is outside the envelope in every family, record or not: an MPSGraph kernel that does not return
# before encoding makes a Placeholder of it, and OperationUtils.mm's Placeholder constructor asserts
# ``[srcBuf length] > 0`` ("Placeholder tensor is empty!", in every wheel's libtorch_cpu.dylib read, 2.2.2-2.14.1).
# Which kernels return first is per kernel and per release; public reports of the assertion span unrelated ops:
# sort/argsort (pytorch#117941, torch 2.1), nll_loss over a zero-size spatial dim (pytorch#134431, 2.5), a matmul
# of an empty batch (the tuning reports), baddbmm (mps_shape_rules.yaml). Copies and fills are blits (no graph).
EMPTY_RECORD = ("MPSGraph kernels assert on an empty placeholder ('Placeholder tensor is empty!', OperationUtils.mm; "
                "public reports for sort, nll_loss and matmul) unless the kernel returns first")
EMPTY_REPORTS = [{"report": "https://github.com/pytorch/pytorch/issues/134431"}]
# More dimensions than any test sample, past rank 4, in a kernel that is not elementwise: MPS kernels written on
# MPSGraph or MPSNDArray have public records of aborting there (an FFT of a rank-6 tensor: 'original module failed
# verification', torch 2.12; a batch norm of a permuted 5-D tensor, 2.13; a linear's backward over 5-D inputs with
# singleton dims, 2.12 -- the tuning reports; reductions over a negative dim of a 5-D tensor and cumulative ops
# along a leading axis of >= 5-D tensors, issue 33) while elementwise kernels index any rank.
RANK_RECORD = ("kernels that are not elementwise have public records of MPS aborts past rank 4 (FFT, batch norm, "
               "reductions, cumulative ops)")
RANK_REPORT = "https://github.com/pytorch/pytorch/issues/194922"
_BLITS = frozenset({"aten::fill_.Scalar", "aten::zero_", "aten::fill_.Tensor", "aten::_to_copy", "aten::copy_",
                    "aten::empty.memory_format", "aten::empty_strided", "aten::clone", "aten::_copy_from",
                    "aten::_copy_from_and_resize"})


def _rank_fact_ops() -> set[str]:
    """The overloads with a rank fact of their own: a call check of ``mps_dtype_checks.yaml`` whose condition
    reads the number of dimensions (``any`` past 4-D, the scan/sort kernels' four minor axes: cumsum, sort, topk
    before 2.9). The rank regime leaves them to that fact and its release range (topk of a 5-D tensor along dim 0
    completes from 2.9, PR #155950)."""
    from mpsready.ops.build import curated

    keys = ("ndim", "input_ndim_gt", "dim_beyond_minor4")
    out: set[str] = set()
    for e in curated.load("mps_dtype_checks").get("call_checks", []):
        if any(k in (e.get("when") or {}) for k in keys):
            for o in e["ops"]:
                out.update((o, o.split(".", 1)[0]))
    return out


def _encodes_when_empty(op: str) -> bool:
    """Whether an empty result is no sign that the MPS kernel of ``op`` returns before encoding: a kernel that is
    neither elementwise (the ``pointwise`` tag), in place (a fill of its own tensor) nor a random draw
    (``nondeterministic_seeded``), nor a view (a result that aliases an argument). Elementwise kernels, fills and
    random draws of an empty tensor return first on MPS (the ``numel() == 0`` returns of
    aten/src/ATen/native/mps/operations; a random fill of an empty tensor completes on a Mac,
    tests/run/test_reports43_classes.py), while a matrix-vector product of an empty batch with an empty result
    raised 'Placeholder tensor is empty!' on torch 2.4 (the tuning reports). Tags read in the installed torch's
    ``native_functions.yaml``; False where the overload is unknown."""
    try:
        import torch

        name, _, overload = op.partition(".")
        ov = getattr(getattr(torch.ops.aten, name), overload or "default")
        tags = {str(t).rsplit(".", 1)[-1] for t in ov.tags}
        aliases = any(r.alias_info is not None for r in ov._schema.returns)  # a view, or an in-place/out result
    except (AttributeError, ImportError, RuntimeError):
        return False
    return not aliases and not tags & {"pointwise", "inplace", "nondeterministic_seeded", "view_copy"}


def _report(records: list[dict[str, Any]]) -> str:
    for r in records:
        if str(r.get("report", "")).startswith("https://github.com/pytorch/pytorch/"):
            return r["report"]
    return "https://github.com/pytorch/pytorch/blob/main/torch/testing/_internal/common_mps.py"


# the wrong-result table's conditions that state a fact about an envelope feature: an advisory of the same overload
# with one of them says what the Mac does there (named before its fix, vouched for from it)
_VOUCHED_BY = {"empty": {"empty_input"}, "mixed_float": {"arg_dtype_differs"},
               "noncontig": {"non_contiguous", "non_contiguous_arg", "channels_last", "storage_offset"},
               "trailing_one": {"size_eq"}}


def _vouched() -> dict[str, dict[str, str]]:
    """aten overload -> envelope feature -> the first shipped release from which a curated wrong-result advisory of
    the overload covers that feature (``_VOUCHED_BY``): from there its range says what the Mac does (named inside,
    unaffected after); before it the advisory says nothing (``layer-norm-half-input-float32-affine`` is ``>=2.8``)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from mpsready.ops.advisories import load as load_advisories
    from mpsready.ops.api import shipped_versions

    releases = shipped_versions()
    out: dict[str, dict[str, str]] = {}
    for a in load_advisories():
        first = next((r for r in releases if Version(r) in SpecifierSet(a.torch, prereleases=True)), None)
        if first is None:
            continue
        for feat, conds in _VOUCHED_BY.items():
            if conds & set(a.when) and (feat != "trailing_one" or 1 in dict(a.when["size_eq"]).values()):
                for op in a.ops:
                    have = out.setdefault(op, {}).get(feat)
                    if have is None or Version(first) < Version(have):
                        out[op][feat] = first
    return out


@lru_cache(maxsize=None)
def regimes() -> tuple[Advisory, ...]:
    """The unverified regimes of the envelope: for every aten overload the mined tests exercised whose family has
    a record (``records``), one entry per feature its samples never had (``FEATURES``), condition as in
    :mod:`mpsready.ops.advisories`; every release (``torch`` ``>=2.2``). A feature that a curated wrong-result
    advisory of the same overload states a fact about (``_VOUCHED_BY``: ``count_nonzero`` over an empty tensor,
    wrong on 2.5; a batch norm backward of a channels_last input, fixed in 2.14) is left to that advisory from the
    first release its range covers (``torch`` ``<that release`` before it; dropped where that is the oldest)."""
    from mpsready.ops.api import shipped_versions

    doc = load()
    vouched = _vouched()
    releases = shipped_versions()
    release = doc.get("torch") or "?"
    src = f"https://github.com/pytorch/pytorch/blob/v{release}/test/test_mps.py"
    out: list[Advisory] = []
    rank_facts = _rank_fact_ops()
    for op, seen in sorted(doc.get("ops", {}).items()):
        fam = family(op)
        records = doc.get("records", {}).get(fam)
        if not records and (seen.get("empty") or "aten::" + op in _BLITS):
            continue
        what = (", ".join(r["id"] for r in records[:3]) + (f" and {len(records) - 3} more" if len(records) > 3
                                                           else "")) if records else ""
        backward = "_backward" in op
        for feat, (cond, words, backward_only) in FEATURES.items():
            if seen.get(feat) or (backward_only and not backward):
                continue
            if not records and feat != "empty":  # only an empty tensor is gated in every family (EMPTY_RECORD)
                continue
            since = vouched.get("aten::" + op, {}).get(feat)  # a curated advisory speaks from this release on
            if since == releases[0]:
                continue
            record = (f"the {fam} family has a record of MPS aborts or wrong results ({what})" if records
                      else EMPTY_RECORD)
            if feat == "empty" and _encodes_when_empty(op):
                cond = "any_empty_input"  # the result's emptiness is no early return for this kind of kernel
            out.append(Advisory(
                id=f"envelope-{op.replace('.', '-')}-{feat}", ops=("aten::" + op,),
                torch=f"<{since}" if since else ">=2.2",
                summary=(f"{op} with {words}: no sample of torch {release}'s MPS OpInfo tests had one, and "
                         f"{record}"),
                report=_report(records or EMPTY_REPORTS), source=src, when={cond: True},
                note="envelope mined by python -m mpsready.ops.build --envelope (ops/build/envelope.py)"))
        rank = int(seen.get("rank") or 0)
        # only ops whose samples took 3-D or larger tensors: a 1-D or 2-D-only op (dot, mm, addmv) never meets one,
        # and a regime puts every call of its op on the wrong-result path (a few microseconds a call)
        if rank >= 3 and "aten::" + op not in _BLITS and op not in rank_facts and _encodes_when_empty(op):
            out.append(Advisory(  # more dimensions than any sample, past MPSGraph's common rank 4 (RANK_RECORD)
                id=f"envelope-{op.replace('.', '-')}-rank", ops=("aten::" + op,), torch=">=2.2",
                summary=(f"{op} with a tensor of more than {max(rank, 4)} dimensions: no sample of torch "
                         f"{release}'s MPS OpInfo tests had one, and {RANK_RECORD}"),
                report=RANK_REPORT, source=src, when={"rank_gt": max(rank, 4)},
                note="envelope mined by python -m mpsready.ops.build --envelope (ops/build/envelope.py)"))
    return tuple(out)


def coverage() -> dict[str, int]:
    """Counts of the mined envelope: overloads exercised, families with a record, overloads gated, regimes."""
    doc = load()
    ops = doc.get("ops", {})
    recs = doc.get("records", {})
    return {"overloads_exercised": len(ops), "families_with_a_record": len(recs),
            "overloads_gated": sum(1 for op in ops if family(op) in recs), "regimes": len(regimes())}
