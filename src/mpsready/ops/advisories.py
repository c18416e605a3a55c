"""Known silent wrong results of MPS kernels (``data/curated/mps_wrong_results.yaml``), matched per call.

A call that completes on MPS can still return wrong numbers on some releases (a public PyTorch report or fix PR
says so). :class:`AdvisoryIndex` holds the advisories of one target (PyTorch release and macOS) and matches a
call, described by plain values (:class:`AdvisoryFacts`), against them. No torch import: the emulated device
(:mod:`mpsready.emulate.dispatch`) builds the facts. A match is a *prediction* from the report, never an
observation.

The condition vocabulary is closed (:data:`CONDITIONS`, documented at the top of the YAML file); an entry with
an unknown condition or field fails loading with ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Mapping

from packaging.specifiers import SpecifierSet
from packaging.version import Version

TABLE = "mps_wrong_results"
FIELDS = frozenset({"id", "op", "dtypes", "when", "torch", "macos", "fixed_in", "summary", "report", "source",
                    "note"})
REQUIRED = ("id", "op", "torch", "summary", "report", "source")
CONDITIONS = ("non_contiguous", "storage_offset", "channels_last", "expanded", "ndim_gt", "numel_gt",
              "dim_size_gt", "negative_dim", "arg", "output_size_nondivisible", "compiled", "size_eq", "size_gt",
              "grouped_heads", "broadcast_batch", "full_reduction", "arg_odd", "matmul_out_numel_gt",
              "offset_not_multiple_of", "tensor_arg", "generator_restored", "masked_row", "int_abs_gt",
              "outside_range_within", "cache_key_ignores", "matmul_k_ge", "matmul_out_dims_ge",
              "non_contiguous_arg", "arg_dtype_differs", "arg_false_at", "compiled_welford",
              "spatial_size_ge", "holds_zero", "total_numel_gt", "nonfinite", "empty_input",
              "attention_scores_bytes_gt", "pool_ceil_rounds", "any_empty", "mixed_float_dtypes",
              "trailing_size_one", "strided_view", "pad_extent_ge", "any_empty_input", "rank_gt",
              "holds_nan", "row_variance_clamped", "signed_zero_or_tiny", "int_sum_overflows",
              "int_reduce_identity_wins")
# conditions that read the values of the call's tensors: asked of AdvisoryFacts.probe, only once every other
# condition of the entry holds (a set look-up per call until then); the last three are the wrong-result classes'
# (data/curated/mps_wrong_classes.yaml, mpsready/emulate/value_probes.py)
PROBED = ("masked_row", "int_abs_gt", "outside_range_within", "non_contiguous_arg", "arg_dtype_differs",
          "spatial_size_ge", "holds_zero", "nonfinite", "holds_nan", "row_variance_clamped", "signed_zero_or_tiny",
          "int_sum_overflows", "int_reduce_identity_wins")
_REPORT_PREFIX = "https://github.com/pytorch/pytorch/"


@dataclass(frozen=True)
class AdvisoryFacts:
    """One call's tensor arguments in order: ``dtypes`` (``"float32"``), ``shapes``, ``contiguous``
    (``Tensor.is_contiguous()``); ``args``: its non-tensor schema arguments by name (or None). Optional, same
    order as the tensors: ``strides``, ``offsets`` (storage offsets); empty when not known (conditions that
    need them then do not hold)."""

    dtypes: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    contiguous: tuple[bool, ...]
    args: Mapping[str, Any] | None = None
    strides: tuple[tuple[int, ...], ...] = ()
    offsets: tuple[int, ...] = ()
    compiled: bool = False  # the call is part of a region compiled by torch.compile (run eagerly here)
    tensor_names: tuple[str, ...] = ()  # the schema names of the tensor arguments given (``bias`` of a linear)
    generator_restored: bool = False  # the call's generator= is an MPS generator restored with set_state
    # inside a compiled region: how Inductor generates the call if it is a Welford reduction (ops/inductor.py
    # welford_kind: "welford", "welford_multistage", "welford_split", "welford_split_maybe"), else None
    compiled_welford: str | None = None
    # (condition, its value) -> whether the call's tensor values meet it (PROBED); None: such conditions never hold
    probe: Callable[[str, Any], bool] | None = None
    result_empty: bool = False  # the call's result has no elements (known only where the caller had the result)


@dataclass(frozen=True)
class Advisory:
    """One entry of the table (fields as in the YAML file); ``dtype``: the dtype of the matched call, set by
    :meth:`AdvisoryIndex.match`."""

    id: str
    ops: tuple[str, ...]
    summary: str
    torch: str
    report: str
    source: str
    macos: str | None = None
    fixed_in: str | None = None
    dtypes: tuple[str, ...] | None = None
    when: Mapping[str, Any] = field(default_factory=dict)
    note: str | None = None
    op: str | None = None  # the overload matched
    dtype: str | None = None
    # a wrong-result class (mps_wrong_classes.yaml): the releases its evidence holds in, read per release by
    # mpsready.ops.build.wrong_classes (``torch`` is then only the bound of the fix), and its family
    releases: tuple[str, ...] | None = None
    family: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``id, op, dtype, summary, condition, torch, macos, fixed_in, report, source`` (all plain values)."""
        return {"id": self.id, "op": self.op or self.ops[0], "dtype": self.dtype, "summary": self.summary,
                "condition": dict(self.when), "torch": self.torch, "macos": self.macos, "fixed_in": self.fixed_in,
                "report": self.report, "source": self.source}


def _check(entry: Any, i: int, table: str = TABLE) -> Advisory:
    if not isinstance(entry, dict):
        raise ValueError(f"{table}.yaml entry {i}: not a mapping")
    where = f"{table}.yaml entry {entry.get('id', i)!r}"
    extra = set(entry) - FIELDS
    if extra:
        raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
    for k in REQUIRED:
        if not entry.get(k):
            raise ValueError(f"{where}: lacks {k!r}")
    when = entry.get("when") or {}
    unknown = set(when) - set(CONDITIONS)
    if unknown:
        raise ValueError(f"{where}: unknown condition(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(CONDITIONS)})")
    for k in ("report", "source"):
        if not str(entry[k]).startswith(_REPORT_PREFIX):
            raise ValueError(f"{where}: {k} is not a {_REPORT_PREFIX} URL")
    SpecifierSet(entry["torch"])  # raises InvalidSpecifier
    if entry.get("macos"):
        SpecifierSet(entry["macos"])
    ops = entry["op"] if isinstance(entry["op"], list) else [entry["op"]]
    if not all(isinstance(o, str) and o.startswith("aten::") for o in ops):
        raise ValueError(f"{where}: op must be aten:: overloads")
    dtypes = entry.get("dtypes")
    return Advisory(id=entry["id"], ops=tuple(ops), summary=entry["summary"], torch=entry["torch"],
                    report=entry["report"], source=entry["source"], macos=entry.get("macos"),
                    fixed_in=entry.get("fixed_in"), dtypes=tuple(dtypes) if dtypes else None, when=dict(when),
                    note=entry.get("note"))


def parse(doc: Any, table: str = TABLE, key: str = "advisories") -> tuple[Advisory, ...]:
    """Check and convert a loaded table (``{"advisories": [...]}``; the regimes table: ``table``
    ``mps_unverified_regimes``, ``key`` ``regimes``); raises ``ValueError`` on a malformed entry (unknown field or
    condition, missing report/torch/summary, an id used twice)."""
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise ValueError(f"{table}.yaml: expected a mapping with an '{key}' list")
    out = tuple(_check(e, i, table) for i, e in enumerate(doc[key]))
    ids = [a.id for a in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"{table}.yaml: id(s) used twice: {', '.join(sorted(dup))}")
    return out


@lru_cache(maxsize=None)
def load_curated() -> tuple[Advisory, ...]:
    """Every advisory of the shipped per-bug table (``mps_wrong_results.yaml``)."""
    from mpsready.ops.build import curated

    return parse(curated.load(TABLE))


@lru_cache(maxsize=None)
def load() -> tuple[Advisory, ...]:
    """Every advisory: the per-bug table's, then the wrong-result classes' (:mod:`mpsready.ops.wrong_classes`:
    ``mps_wrong_classes.yaml`` with the releases its evidence was read to hold in)."""
    from mpsready.ops.wrong_classes import advisories

    return load_curated() + advisories()


REGIMES = "mps_unverified_regimes"


@lru_cache(maxsize=None)
def load_regimes() -> tuple[Advisory, ...]:
    """Every entry of ``data/curated/mps_unverified_regimes.yaml``: parameter regimes (sizes, arguments) of an op in
    which MPS has a public record of aborts or wrong results across releases and no fix is recorded for the
    releases in range. A call in such a regime is not a predicted failure: the emulated Mac cannot vouch for it,
    so the run is ``unverified`` (``summary`` is the reason line). Same fields and conditions as the wrong-result
    table."""
    from mpsready.ops.build import curated

    return parse(curated.load(REGIMES), REGIMES, "regimes")


def _channels_last(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    if len(shape) != 4 or len(stride) != 4:
        return False
    n, c, h, w = shape
    want = (h * w * c, 1, w * c, c)
    same = all(s == e for d, s, e in zip(shape, stride, want) if d > 1)
    plain = (c * h * w, h * w, w, 1)
    return same and not all(s == e for d, s, e in zip(shape, stride, plain) if d > 1)


def _negative(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v < 0
    if isinstance(v, (list, tuple)):
        return any(_negative(x) for x in v)
    return False


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _arg_false_at(want: Mapping[str, int], f: AdvisoryFacts) -> bool:
    """``{NAME: INDEX}``: the list argument NAME holds False at INDEX (a backward's ``output_mask``)."""
    args = f.args or {}
    for name, index in want.items():
        v = args.get(name)
        if not isinstance(v, (list, tuple)) or not -len(v) <= int(index) < len(v) or v[int(index)] is not False:
            return False
    return True


def _size_at(longer: bool, want: Mapping[Any, int], f: AdvisoryFacts) -> bool:
    """``size_eq`` / ``size_gt`` (``longer``): the first tensor argument's size at each DIM is N / larger than N."""
    if not f.shapes:
        return False
    shape = f.shapes[0]
    return all(-len(shape) <= int(d) < len(shape) and (shape[int(d)] > n if longer else shape[int(d)] == n)
               for d, n in want.items())


_ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "bool": 1,
                  "int16": 2, "int32": 4, "int64": 8, "complex64": 8}


def _scores_bytes(want: Mapping[str, Any], f: AdvisoryFacts) -> bool:
    """``attention_scores_bytes_gt: {bytes: N, element_bytes: B | "dtype"}``: attention over a query ``(..., L, E)``
    and a key ``(..., S, E)`` (the first two tensor arguments) whose score matrix ``(..., L, S)`` takes more than N
    bytes at B bytes an element (``"dtype"``: the query's element size). A product of sizes, no walk."""
    if len(f.shapes) < 2 or len(f.shapes[0]) < 2 or len(f.shapes[1]) < 2:
        return False
    per = want.get("element_bytes", 4)
    if per == "dtype":
        per = _ELEMENT_BYTES.get(f.dtypes[0] if f.dtypes else "", 4)
    return _numel(f.shapes[0][:-1]) * f.shapes[1][-2] * int(per) > int(want["bytes"])


def _per_axis(v: Any, n: int, default: int) -> list[int]:
    """A pooling argument (an int, or a list of one or ``n`` ints; empty or None: ``default``) for ``n`` axes."""
    if v is None or (isinstance(v, (list, tuple)) and not v):
        return [default] * n
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    return vals * n if len(vals) == 1 else vals[:n]


def _pool_ceil_rounds(want: bool, f: AdvisoryFacts) -> bool:
    """A pooling call with ``ceil_mode=True`` whose output size ceil mode actually changes along some spatial axis:
    ``(size + 2 * padding - dilation * (kernel - 1) - 1)`` is not a multiple of the stride (the stride defaults to
    the kernel size, as PyTorch's pooling does; ``pooling_output_shape`` in ATen's Pool.h). Where it is a multiple,
    ceil and floor mode agree and the ceil-mode rounding is never reached."""
    args = f.args or {}
    k = args.get("kernel_size")
    if not args.get("ceil_mode") or k is None or not f.shapes:
        return not want
    n = len(k) if isinstance(k, (list, tuple)) else 1
    shape = f.shapes[0]
    if len(shape) < n:
        return not want
    ks = _per_axis(k, n, 1)
    ss = _per_axis(args.get("stride"), n, 0)
    ss = [s or kk for s, kk in zip(ss, ks)]
    ps, ds = _per_axis(args.get("padding"), n, 0), _per_axis(args.get("dilation"), n, 1)
    rounds = any(s > 0 and (size + 2 * p - d * (kk - 1) - 1) % s != 0
                 for size, kk, s, p, d in zip(shape[-n:], ks, ss, ps, ds))
    return rounds == bool(want)


def _any_empty(want: bool, f: AdvisoryFacts) -> bool:
    """Some tensor argument of at least one dimension has no elements and the result has elements (the envelope's
    ``empty``: a reduction or a loss over nothing). Where the result is empty too, MPS ops return before encoding
    any kernel (the ``numel() == 0`` early returns of aten/src/ATen/native/mps/operations: a linear over an empty
    batch, a random fill of an empty tensor), so there is nothing to vouch for."""
    return (not f.result_empty and any(len(s) and 0 in s for s in f.shapes)) == bool(want)


def _any_empty_input(want: bool, f: AdvisoryFacts) -> bool:
    """Some tensor argument of at least one dimension has no elements, whether or not the result has any (the
    envelope's ``empty`` for a kernel that is neither elementwise, in place nor a random draw:
    ``ops/envelope.py`` ``_encodes_when_empty``)."""
    return any(len(s) and 0 in s for s in f.shapes) == bool(want)


def _rank_gt(want: int, f: AdvisoryFacts) -> bool:
    """Some tensor argument has more than N dimensions (the envelope's ``rank``)."""
    return any(len(s) > int(want) for s in f.shapes)


def _mixed_float(want: bool, f: AdvisoryFacts) -> bool:
    """The floating tensor arguments have two or more dtypes (the envelope's ``mixed_float``)."""
    return (len({d for d in f.dtypes if d.startswith(("float", "bfloat"))}) > 1) == bool(want)


def _trailing_one(want: bool, f: AdvisoryFacts) -> bool:
    """Some tensor argument of two or more dimensions has a last dimension of size 1 (``trailing_one``)."""
    return any(len(s) >= 2 and s[-1] == 1 for s in f.shapes) == bool(want)


def _strided_view(want: bool, f: AdvisoryFacts) -> bool:
    """Some tensor argument is a non-contiguous view that is not a broadcast (``ops/envelope.py`` strided_view;
    needs the strides: without them the condition does not hold)."""
    from mpsready.ops.envelope import strided_view

    return any(strided_view(s, st) for s, st in zip(f.shapes, f.strides)) == bool(want)


def _pad_extent(want: int, f: AdvisoryFacts) -> bool:
    """A padding call whose ``max(output last dim, product of output dims after the padded axis)`` is at least N
    (MPSGraph's pad limit: :mod:`mpsready.ops.pad_limits`)."""
    from mpsready.ops.pad_limits import extent

    return extent(f.shapes, f.args or {}) >= int(want)


# the conditions of the unverified regimes table (load_regimes) and of the evidence envelope (ops/envelope.py)
_REGIME_CONDITIONS: dict[str, Callable[[Any, AdvisoryFacts], bool]] = {
    "attention_scores_bytes_gt": _scores_bytes, "pool_ceil_rounds": _pool_ceil_rounds, "any_empty": _any_empty,
    "mixed_float_dtypes": _mixed_float, "trailing_size_one": _trailing_one, "strided_view": _strided_view,
    "pad_extent_ge": _pad_extent,
    "any_empty_input": _any_empty_input, "rank_gt": _rank_gt}


def _holds(key: str, want: Any, f: AdvisoryFacts) -> bool:
    """Whether the call ``f`` meets the condition ``key: want`` (CONDITIONS; the table's YAML header says each)."""
    regime = _REGIME_CONDITIONS.get(key)
    return regime(want, f) if regime is not None else _holds_table(key, want, f)


def _holds_table(key: str, want: Any, f: AdvisoryFacts) -> bool:
    if key == "non_contiguous":
        return any(not c for c in f.contiguous) == bool(want)
    if key == "storage_offset":
        return any(o != 0 for o in f.offsets) == bool(want)
    if key == "channels_last":
        return any(_channels_last(s, st) for s, st in zip(f.shapes, f.strides)) == bool(want)
    if key == "expanded":
        return any(st == 0 and d > 1 for s, sts in zip(f.shapes, f.strides) for d, st in zip(s, sts)) == bool(want)
    if key == "ndim_gt":
        return bool(f.shapes) and len(f.shapes[0]) > want
    if key == "numel_gt":
        return any(_numel(s) > want for s in f.shapes)
    if key == "empty_input":  # the first tensor argument has no elements (a reduction over nothing)
        return (bool(f.shapes) and _numel(f.shapes[0]) == 0) == bool(want)
    if key == "total_numel_gt":  # the tensor arguments together (a concatenation's output)
        return sum(_numel(s) for s in f.shapes) > want
    if key == "dim_size_gt":
        return any(d > want for s in f.shapes for d in s)
    if key == "negative_dim":
        return _negative((f.args or {}).get("dim")) == bool(want)
    if key == "output_size_nondivisible":  # adaptive pooling: an input size the output size does not divide
        out = (f.args or {}).get("output_size")
        if not f.shapes or not isinstance(out, (list, tuple)) or not out:
            return not want
        tail = f.shapes[0][-len(out):]
        bad = any(isinstance(o, int) and o > 0 and i % o != 0 for i, o in zip(tail, out))
        return bad == bool(want)
    if key == "compiled":
        return f.compiled == bool(want)
    if key == "compiled_welford":  # a compiled Welford reduction of one of the listed kinds
        kinds = (want,) if isinstance(want, str) else tuple(want)
        return f.compiled and f.compiled_welford in kinds
    if key in ("size_eq", "size_gt"):  # {dim: size} of the first tensor argument (dim may be negative)
        return _size_at(key == "size_gt", want, f)
    if key == "broadcast_batch":  # a batched first operand (> 2 dims) against a second with fewer dims
        if len(f.shapes) < 2:
            return not want
        return (len(f.shapes[0]) > 2 and len(f.shapes[1]) < len(f.shapes[0])) == bool(want)
    if key == "matmul_out_numel_gt":  # the product of a (..., n, k) by a (..., k, m) operand has more elements
        if len(f.shapes) < 2 or len(f.shapes[0]) < 2 or len(f.shapes[1]) < 2:
            return False
        return _numel(f.shapes[0][:-1]) * f.shapes[1][-1] > want
    if key == "offset_not_multiple_of":  # the first tensor's storage offset is not a multiple of N elements
        return bool(f.offsets) and f.offsets[0] % int(want) != 0
    if key == "arg_odd":  # the integer argument NAME is odd
        v = (f.args or {}).get(want)
        return isinstance(v, int) and not isinstance(v, bool) and v % 2 == 1
    if key == "full_reduction":  # a reduction over every dimension (no `dim`, None or an empty list)
        dim = (f.args or {}).get("dim")
        return (dim is None or (isinstance(dim, (list, tuple)) and not dim)) == bool(want)
    if key == "generator_restored":
        return f.generator_restored == bool(want)
    if key == "tensor_arg":  # the named tensor argument is given
        return want in f.tensor_names
    if key == "grouped_heads":  # attention with fewer key/value heads than query heads (dim -3 of q and k)
        if len(f.shapes) < 2 or len(f.shapes[0]) < 3 or len(f.shapes[1]) < 3:
            return not want
        return (f.shapes[0][-3] != f.shapes[1][-3]) == bool(want)
    if key in ("matmul_k_ge", "matmul_out_dims_ge"):  # the last two tensors: (..., n, k) by (..., k, m)
        if len(f.shapes) < 2 or len(f.shapes[-2]) < 2 or len(f.shapes[-1]) < 2:
            return False
        a, b = f.shapes[-2], f.shapes[-1]
        if key == "matmul_k_ge":
            return a[-1] >= int(want)
        return a[-2] >= int(want) and b[-1] >= int(want)
    if key == "arg_false_at":
        return _arg_false_at(want, f)
    if key == "cache_key_ignores":  # stateful: AdvisoryIndex.match decides it
        return True
    if key in PROBED:
        return f.probe is not None and bool(f.probe(key, want))
    if key == "arg":
        args = f.args or {}
        # a dtype argument is a torch.dtype in the call and a name ("uint8") in the YAML
        return all(k in args and (args[k] == v or str(args[k]).replace("torch.", "") == str(v))
                   for k, v in want.items())
    raise ValueError(f"unknown advisory condition {key!r}")  # parse() keeps this unreachable


class AdvisoryIndex:
    """The advisories that apply to one target: ``torch`` a full release (``"2.5.1"``, as
    ``mpsready.ops.api.load_db(x).torch_version`` gives it), ``macos`` (``"14.4"``). :attr:`ops` is the set of
    overloads with any advisory in range, a cheap pre-check per call. Raises ``InvalidVersion`` for a malformed
    version."""

    def __init__(self, torch: str, macos: str, advisories: tuple[Advisory, ...] | None = None,
                 regimes: tuple[Advisory, ...] | None = None):
        rel, mac = Version(torch), Version(macos)
        self.torch, self.macos = torch, macos
        self._by_op: dict[str, list[Advisory]] = {}
        # the unverified regimes of this target (load_regimes): matched only where no wrong result is
        self._regimes_by_op: dict[str, list[Advisory]] = {}
        if regimes is None:  # the curated regimes first, then the evidence envelope's (ops/envelope.py)
            from mpsready.ops import envelope

            regimes = load_regimes() + envelope.regimes()
        for table, into in ((load() if advisories is None else advisories, self._by_op),
                            (regimes, self._regimes_by_op)):
            for a in table:
                if rel not in SpecifierSet(a.torch, prereleases=True):
                    continue
                if a.releases is not None and not any(rel == Version(r) for r in a.releases):
                    continue
                if a.macos and mac not in SpecifierSet(a.macos, prereleases=True):
                    continue
                for op in a.ops:
                    into.setdefault(op, []).append(a)
        # the overloads the dispatch mode hands to wrong_results.advise (either table); ``wrong_ops``: those with a
        # wrong-result advisory (the others are matched with the regimes only, on shapes and arguments)
        self.wrong_ops: frozenset[str] = frozenset(self._by_op)
        self.ops: frozenset[str] = self.wrong_ops | frozenset(self._regimes_by_op)
        # cache_key_ignores: (advisory, op, dtypes, shapes) -> the argument's value at the last such call
        self._graph_keys: dict[tuple, Any] = {}

    def match(self, op: str, facts: AdvisoryFacts) -> Advisory | None:
        """The first advisory of ``op`` whose dtype and conditions the call meets (with ``op`` and ``dtype``
        filled in), or None."""
        dtype = facts.dtypes[0] if facts.dtypes else None
        for a in self._by_op.get(op, ()):
            if a.dtypes is not None and dtype not in a.dtypes:
                continue
            if "cache_key_ignores" in a.when and not self._stale(a, op, facts):
                continue
            # the value probes last: they read tensors, the other conditions only shapes and arguments
            if all(_holds(k, v, facts) for k, v in a.when.items() if k not in PROBED) and all(
                    _holds(k, v, facts) for k, v in a.when.items() if k in PROBED):
                return replace(a, op=op, dtype=dtype)
        return None

    def regime(self, op: str, facts: AdvisoryFacts) -> Advisory | None:
        """The first unverified regime (:func:`load_regimes`) of ``op`` whose dtype and conditions the call meets
        (``op`` and ``dtype`` filled in), or None. No value probes: a regime is read from shapes and arguments."""
        dtype = facts.dtypes[0] if facts.dtypes else None
        for a in self._regimes_by_op.get(op, ()):
            if a.dtypes is not None and dtype not in a.dtypes:
                continue
            if all(_holds(k, v, facts) for k, v in a.when.items()):
                return replace(a, op=op, dtype=dtype)
        return None

    def _stale(self, a: Advisory, op: str, facts: AdvisoryFacts) -> bool:
        """``cache_key_ignores: NAME``: MPS caches the op's graph under a key of its tensors' dtypes and shapes that
        leaves out the argument NAME, so a call with the same tensors' dtypes and shapes as an earlier call of this
        run but another NAME reuses the earlier graph (with its NAME). Records this call's value either way."""
        name = a.when["cache_key_ignores"]
        key = (a.id, op, facts.dtypes, facts.shapes)
        value = (facts.args or {}).get(name)
        missing = object()
        before = self._graph_keys.get(key, missing)
        self._graph_keys[key] = value
        return before is not missing and before != value


def coverage(releases: list[str] | None = None) -> dict[str, dict[str, int]]:
    """Per release (default: every shipped table, ``mpsready.ops.api.shipped_versions``): ``advisories`` (entries
    whose ``torch`` range holds the release, any macOS), ``ops`` (distinct aten overloads with one) and
    ``conditioned`` (entries with a ``when`` condition, i.e. a class narrower than "every call of the op")."""
    if releases is None:
        from mpsready.ops import api

        releases = api.shipped_versions()
    table = load_curated()
    out: dict[str, dict[str, int]] = {}
    for rel in releases:
        v = Version(rel)
        hits = [a for a in table if v in SpecifierSet(a.torch, prereleases=True)]
        out[rel] = {"advisories": len(hits), "ops": len({op for a in hits for op in a.ops}),
                    "conditioned": sum(1 for a in hits if a.when)}
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m mpsready.ops.advisories``: the wrong-result coverage per shipped release (:func:`coverage`)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.advisories",
                                 description="silent wrong-result advisories per release (mps_wrong_results.yaml)")
    ap.parse_args(argv)
    print(f"{len(load_curated())} advisories, {len({op for a in load_curated() for op in a.ops})} aten overloads in "
          "all (the wrong-result classes: python -m mpsready.ops.build.wrong_classes)")
    print("release  advisories in range  aten overloads with one  with a condition")
    for rel, c in coverage().items():
        print(f"{rel:8} {c['advisories']:19} {c['ops']:24} {c['conditioned']:16}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
