"""Judge one operator call as MPS would dispatch it, for one PyTorch release and macOS.

The emulated MPS device (:mod:`mpsready.emulate`) only observes calls and forwards them; every decision
is made here, from the shipped support data (:mod:`mpsready.ops.api`) and the curated shape rules
(``data/curated/mps_shape_rules.yaml``). No torch import: a call is described by plain values.

A :class:`Judgement` says what a Mac does with the call:

* ``runs``: an MPS kernel takes it (its dtype, macOS and shape conditions hold);
* ``composite``: a backend-agnostic kernel; the ops it calls are judged on their own;
* ``error``: the call raises ``exception`` (``NotImplementedError``, ``TypeError``, ``RuntimeError``) with
  ``message``, the text MPS prints (without the class name);
* ``fallback``: the call runs on the CPU with MPS's ``UserWarning`` (``message``): always-fallback ops
  (``MPSFallback.mm``), or ops without a kernel when ``PYTORCH_ENABLE_MPS_FALLBACK=1``;
* ``crash``: macOS aborts the process (an MPSNDArray assertion), ``message`` is what it prints;
* ``unknown``: the data does not know the op (another namespace): never guessed as supported;
* ``warns`` (torch API calls only, :mod:`mpsready.ops.api_judge`): the call goes on after the release's
  ``UserWarning`` (``message``): autocast disables its region, ``torch.compile`` warns of a prototype.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mpsready.ops import api as ops_api
from mpsready.ops import learned, size_regime
from mpsready.ops.shape_tests import _SHAPE_TESTS, SHAPE_TESTS  # noqa: F401  (SHAPE_TESTS: the judge's public name)
from mpsready.ops.api_judge import ApiChecks
from mpsready.ops.judge_dtypes import DTYPE_FACTS, c10_name  # noqa: F401 (re-exported: part of the judge's API)
from mpsready.ops.judge_dtypes import _DEFAULT_BRANCH, C10_NAMES, DtypeChecks, _dtype_support_rules, call_message
from mpsready.ops.judge_dtypes import MACHINES, _allocation_fixed_in, _dtype_fixed_in, _rule_fixed_in, check_machine  # noqa: F401
from mpsready.ops.call_facts import CallFacts  # noqa: F401 (re-exported: part of the judge's API)
from mpsready.ops.messages import fallback_warning, not_implemented_message
from mpsready import versions

OUTCOMES = ("runs", "composite", "error", "fallback", "crash", "unknown")
FAILING = frozenset({"error", "crash"})
_ALLOCATION_EXCEPTION = "TypeError"  # TORCH_CHECK_TYPE in aten/src/ATen/mps/EmptyTensor.cpp (2.3-2.14)


@dataclass(frozen=True)
class Judgement:
    """What MPS does with one call (module docstring). ``op``: the overload MPS dispatches (after routing,
    e.g. ``aten::_mps_convolution`` for a CPU ``aten::mkldnn_convolution``); ``named``: the overload MPS's
    message names (``aten::index_copy.out`` for ``aten::index_copy_``); ``kind``: ``missing``,
    ``always_fallback``, ``guard``, ``sparse``, ``dtype``, ``macos``, ``shape``, ``unknown`` or None."""

    op: str
    outcome: str
    kind: str | None = None
    exception: str | None = None
    message: str | None = None
    dtype: str | None = None
    fixed_in: str | None = None
    named: str | None = None
    source: str | None = None

    @property
    def fails(self) -> bool:
        return self.outcome in FAILING


@dataclass(frozen=True)
class Reason:
    """:meth:`Judge.reason`: the ``kind`` of problem (``composite_unseen`` reads ``unknown``), a few words of
    ``detail`` and the ``message`` Python would print (or None)."""

    kind: str
    detail: str
    message: str | None


def _strip_class(text: str) -> str:
    """``"NotImplementedError: The operator ..."`` -> ``"The operator ..."`` (messages.py keeps the class)."""
    head, sep, rest = text.partition(": ")
    return rest if sep and head.endswith(("Error", "Warning")) else text


@lru_cache(maxsize=None)
def _shape_rules() -> tuple[dict[str, Any], ...]:
    from mpsready.ops.build import curated

    return tuple(curated.load("mps_shape_rules")["rules"])


@lru_cache(maxsize=None)
def _kernel_checks() -> dict[str, tuple[dict[str, Any], ...]]:
    """``data/curated/mps_dtype_checks.yaml``: ``{"dtype_checks": (...), "call_checks": (...)}``."""
    from mpsready.ops.build import curated

    doc = curated.load("mps_dtype_checks")
    from mpsready.ops.mined_checks import complex_checks  # the mined complex refusals, after the curated checks

    return {"dtype_checks": tuple(doc.get("dtype_checks") or ()) + complex_checks(),
            "call_checks": tuple(doc.get("call_checks") or ())}


ANY_OP = "*"  # a call check of every op with an MPS kernel that is not a view (mps_dtype_checks.yaml)

class Judge(ApiChecks, DtypeChecks):
    """Judgements for one target: ``torch`` (a version, resolved with :func:`mpsready.ops.api.load_db`),
    ``macos`` (``"14.4"``) and ``fallback`` (``PYTORCH_ENABLE_MPS_FALLBACK=1``). Raises ``ValueError`` for a
    release without a table or a malformed macOS version. The torch API calls PyTorch checks in Python
    (autocast, optimizers, ``torch.compile``, ...) are judged by the methods of :class:`ApiChecks`."""

    def __init__(self, torch: str, macos: str, fallback: bool = False, machine: str = "arm64"):
        self.db = ops_api.load_db(torch)
        versions.release(macos)
        self.torch = self.db.torch_version
        self.macos = macos
        self.fallback = fallback
        self.machine = check_machine(machine, self.torch)
        self._memo: dict[tuple, Judgement] = {}
        self._alloc: dict[str, Judgement | None] = {}  # dtype -> allocation refusal (the fallback flag never matters)
        self._routes: dict[tuple, tuple] = {}
        rel = Version(self.torch)
        self._shape: dict[str, list[dict[str, Any]]] = {}
        for rule in _shape_rules():
            if rel in SpecifierSet(rule.get("torch") or ""):
                self._shape.setdefault("aten::" + rule["op"], []).append(rule)
        # per-dtype support of this release (mps_dtype_support.yaml): the first rule of each dtype that applies
        self._dsupport: dict[str, dict[str, Any]] = {}
        for rule in _dtype_support_rules():
            if rel in SpecifierSet(rule.get("torch") or ""):
                self._dsupport.setdefault(rule["dtype"], rule)
        # per-kernel dtype and call checks of this release and macOS (mps_dtype_checks.yaml)
        self._checks: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self._any_checks: list[dict[str, Any]] = []
        for kind, entries in _kernel_checks().items():
            for e in entries:
                if rel not in SpecifierSet(e.get("torch") or ""):
                    continue
                if e.get("macos_below") and not versions.macos_lt(macos, e["macos_below"]):
                    continue
                if e.get("macos_from") and versions.macos_lt(macos, e["macos_from"]):
                    continue
                for op in e["ops"]:
                    if op == ANY_OP:
                        self._any_checks.append(e)
                    else:
                        self._checks.setdefault("aten::" + op, []).append((kind, e))
        self._size_fact_ops = size_regime.size_fact_ops(e for e in _kernel_checks()["call_checks"]
                                                        if rel in SpecifierSet(e.get("torch") or ""))

    def set_fallback(self, fallback: bool) -> None:
        """Change the ``PYTORCH_ENABLE_MPS_FALLBACK`` assumption (the program set it before importing torch)."""
        if bool(fallback) != self.fallback:
            self.fallback = bool(fallback)
            self._memo.clear()

    # ------------------------------------------------------------------ the device itself
    def dtype_rules(self) -> dict[str, Any]:
        """The global dtype rules at this target's macOS, by dtype (``{"float64": DtypeRule, ...}``,
        :meth:`mpsready.ops.api.SupportDB.dtype_rules`, global_rules.yaml): what a tensor of that dtype meets on
        MPS (``effect`` ``error``, ``unsupported_before`` or ``limited``, with its message and source)."""
        rules = getattr(self, "_dtype_rules", None)
        if rules is None:
            rules = self._dtype_rules = {r.dtype: r for r in self.db.dtype_rules(macos=self.macos)}
        return rules

    def allocation(self, dtype: str) -> Judgement | None:
        """A tensor of ``dtype`` created on, or moved to, the MPS device: None when allowed, else the
        ``TypeError`` MPS raises at that point (global dtype rules at this macOS; float64 and complex128 never,
        bfloat16 and complex64 from macOS 14)."""
        try:  # asked for every result the emulated device computes
            return self._alloc[dtype]
        except KeyError:
            pass
        hit = None
        r = self.dtype_rules().get(dtype)
        own = self._dsupport.get(dtype)
        if r is not None and r.effect in ("error", "unsupported_before") and not (
                own and own.get("to_mps") == "refused" and own.get("message")):
            hit = Judgement(op="aten::_to_copy", outcome="error", kind="dtype", exception=_ALLOCATION_EXCEPTION,
                            message=r.message, dtype=dtype, source=r.source)
        elif dtype and (self.dtype_fact(dtype, "to_mps")[0] == "refused" or r is not None and r.effect in
                        ("error", "unsupported_before")):
            rule = self._dsupport.get(dtype) or {}
            hit = Judgement(op="aten::_to_copy", outcome="error", kind="dtype",
                            exception=rule.get("exception", _ALLOCATION_EXCEPTION),
                            message=self._dtype_message(dtype), dtype=dtype,
                            fixed_in=_allocation_fixed_in(dtype, self.torch, self.macos) if rule else None,
                            source=rule.get("source") or _DEFAULT_BRANCH)
        self._alloc[dtype] = hit
        return hit

    def placement(self, name: str, operands, pointwise: bool) -> Judgement | None:
        """A call of ``name`` that reaches its MPS kernel with ``operands``
        (:class:`mpsready.ops.placement.Operand`, some on the CPU): None when PyTorch allows the placement, else
        the ``RuntimeError`` MPS raises (kind ``placement``; :mod:`mpsready.ops.placement` for the rules and
        their sources)."""
        from mpsready.ops import placement

        refusal = placement.judge(name, operands, pointwise, self.torch)
        if refusal is None:
            return None
        return Judgement(name, "error", "placement", refusal.exception, refusal.message, None, None, name,
                         refusal.source)

    # ------------------------------------------------------------------ one op
    def target(self, op: str, grad: bool = True) -> str:
        """The overload MPS dispatches for a CPU-specific ``op`` (routing.yaml); ``grad``: grad mode is on
        (SDPA takes its ``otherwise`` route in training)."""
        info = self.db.route_info(op)
        if not info:
            return op
        if info.get("otherwise") and grad:
            return "aten::" + info["otherwise"]
        return "aten::" + info["to"]

    def wants(self, name: str) -> frozenset[str]:
        """The extra facts a call of ``name`` needs for this target's kernel checks: ``"args"`` (named schema
        arguments), ``"numel0"``, ``"dim_max"`` (``"dim_max_any"`` too where a bound is below INT_MAX, so that the
        sizes of every tensor are read, not only of those with more than INT_MAX elements: the 65536 output-size
        limit of MPS convolutions); empty for most ops (the emulated device computes no more)."""
        want = set()
        for _kind, e in self._checks.get(name) or self._checks.get(self.target(name)) or ():
            for test, value in (e.get("when") or {}).items():
                want.add({"arg": "args", "numel_gt": "numel0", "dim_gt": "dim_max",
                          "dim_beyond_minor4": "args", "alpha_mixed": "args",
                          "alpha_self_promoted": "args", "dtypes_differ": "args"}.get(test, test))
                if test == "dim_gt" and value < 2**31 - 1:  # a bound a tensor can pass without INT_MAX elements
                    want.add("dim_max_any")
        if self._any_checks:
            want.add("dim_max")
        return frozenset(want)

    def _routed(self, name: str, grad: bool) -> tuple[str, Any, Any]:
        """``(target, shape rules, kernel checks)`` of ``name``: routing and rule lookup once per op name (this
        runs for every emulated call)."""
        routed = self._routes.get((name, grad))
        if routed is None:
            target = self.target(name, grad)
            routed = self._routes[(name, grad)] = (target, self._shape.get(name) or self._shape.get(target),
                                                    self._checks.get(name) or self._checks.get(target))
        return routed

    def reads_only_dtypes(self, name: str, grad: bool = True) -> bool:
        """Whether :meth:`op` of ``name`` reads no fact but ``dtypes``, ``out_dtypes`` and ``sparse`` as long as
        ``dim_max`` is 0 (no tensor dimension above INT_MAX): no shape rule and only dtype checks apply to it.
        A caller may then memoise the judgement per (op, dtypes, sparse, grad)."""
        _target, rules, checks = self._routed(name, grad)
        return not rules and all(kind == "dtype_checks" for kind, _e in checks or ())

    def op(self, name: str, facts: CallFacts = CallFacts(), grad: bool = True) -> Judgement:
        """Judge a call of ``name`` (``"aten::cumsum"``) with ``facts``. Shape rules and the per-kernel dtype
        and call checks (mps_dtype_checks.yaml: any tensor argument, not only the first) are checked on every
        call; the rest is memoised by (op, first dtype, sparse, grad), which is all it reads."""
        target, rules, checks = self._routed(name, grad)
        main = (facts.dtypes[:1] or facts.out_dtypes[:1] or ("",))[0]
        key = (target, main, facts.sparse)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._judge(target, main, facts.sparse)
        # the kernel's own checks come first: they run before anything that could abort the process
        regime = None  # a size regime (unverified) gives way to a failure a shape rule predicts
        if (checks or self._any_checks) and (hit.outcome in ("runs", "composite") or hit.kind == "dtype"):
            regime = self._kernel_check(target, checks or (), facts, hit.outcome == "runs")
            if regime is not None and regime.kind != "size_regime":
                return regime
        if rules:
            found = self._shape_judgement(target, rules, facts)
            if found is not None:
                return found
        return regime or hit

    def call(self, name: str, facts: CallFacts = CallFacts(), grad: bool = True, inside: bool = False,
             exact: bool = True, installed: str = "", expanded: bool = True,
             placement: tuple[Sequence[Any], bool] | None = None, parent: str | None = None) -> Judgement:
        """The one judgement of a call of ``name`` as a dispatcher saw it, for the emulated device and the trace
        alike: :meth:`op` with ``facts`` and ``grad``; then, for a call reached inside a composite (``inside``)
        as ``installed`` decomposes it, :meth:`inside_composite` (``exact``: that is the target release); then,
        where the call ``runs`` and the program itself handed a CPU tensor in (``placement``: its operands,
        :class:`mpsready.ops.placement.Operand` values, and whether the op is pointwise), :meth:`placement`;
        last, for a composite whose callees were not recorded (``expanded`` False), :meth:`callees_unseen`.
        ``parent``: the composite whose kernel made this call (inside only), see :meth:`inside_composite`."""
        j = self.op(name, facts, grad)
        if inside and j.outcome in FAILING:
            j = self.inside_composite(j, True, exact, installed, parent)
        if placement is not None and j.outcome == "runs":
            j = self.placement(name, placement[0], placement[1]) or j
        if not expanded and j.outcome == "composite":
            j = self.callees_unseen(j)
        return j

    def landing(self, dtype: str, called: str) -> Judgement | None:
        """A tensor of ``dtype`` made by ``called`` (``"aten::_to_copy"``, ``"aten::zeros"``) that lands on MPS:
        :meth:`allocation`'s refusal named by the call that made the tensor, or None when MPS allocates it."""
        j = self.allocation(dtype)
        return self.factory_refusal(dtype, called) if j is None else replace(j, op=called, named=called)

    def sparse_landing(self, dtype: str, called: str) -> Judgement | None:
        """A sparse COO tensor of ``dtype`` made by ``called`` that lands on MPS: MPS builds it with
        ``_sparse_coo_tensor_with_dims_and_tensors`` on the SparseMPS key (aten/src/ATen/native/sparse/
        SparseTensor.cpp; pytorch#141711); its failure (no SparseMPS kernel before the release that adds it),
        or None when it runs. A dtype refusal is named by ``called``."""
        j = self.op("aten::_sparse_coo_tensor_with_dims_and_tensors", CallFacts(dtypes=(dtype,), sparse=True))
        if not j.fails:
            return None
        return replace(j, op=called, named=called) if j.kind == "dtype" else j

    def _kernel_check(self, target: str, checks, facts: CallFacts, kernel: bool) -> Judgement | None:
        """The first check of mps_dtype_checks.yaml that refuses this call, as an ``error`` (``crash`` where the
        entry's ``effect`` says the process aborts; kind ``dtype`` for a dtype refusal, ``shape`` for a size or
        argument refusal) with ``fixed_in`` where a later release drops the check; None when none does.
        ``kernel``: the op itself runs an MPS kernel (``*`` checks)."""
        dtypes = facts.dtypes or facts.out_dtypes
        for kind, e in (c for c in checks if c[1].get("stage") != "backward"):  # backward_check judges those
            if kind == "dtype_checks":
                refused = e["refuses"]
                if e.get("any_tensor"):
                    bad = next((d for d in dtypes if d in refused), None)
                else:
                    i = e.get("tensor", 0)
                    d = dtypes[i] if i < len(dtypes) else None
                    bad = d if d is not None and ("*" in refused or d in refused) else None
                if bad is not None:  # a dtype an MPS kernel refuses, or aborts on (effect: crash)
                    return Judgement(target, "crash" if e.get("effect") == "crash" else "error", "dtype",
                                     e["exception"], e["message"].replace("{scalar_type}", C10_NAMES.get(bad, bad)),
                                     bad, _dtype_fixed_in(target, bad, self.torch, self.macos), target, e["source"])
            elif all(_SHAPE_TESTS[k](v, facts) for k, v in e["when"].items()):
                if e.get("effect") == "unverified":  # a size regime of this op the data cannot vouch for
                    return size_regime.judgement(Judgement, target, call_message(e["message"], dtypes, facts), dtypes, e)
                return Judgement(target, "crash" if e.get("effect") == "crash" else "error", "shape",
                                 e["exception"], call_message(e["message"], dtypes, facts), (dtypes[:1] or (None,))[0],
                                 _rule_fixed_in(e), target, e["source"])
        if kernel and (facts.dim_max or facts.bytes_max):
            for e in self._any_checks:
                if all(_SHAPE_TESTS[k](v, facts) for k, v in e["when"].items()):
                    if e.get("effect") == "unverified":
                        if target in size_regime.EXEMPT or target in self._size_fact_ops:
                            continue  # the op's own size facts of this release vouch for its sizes
                        return size_regime.judgement(Judgement, target, e["message"], dtypes, e)
                    return Judgement(target, "crash" if e.get("effect") == "crash" else "error", "shape",
                                     e["exception"], e["message"], (dtypes[:1] or (None,))[0], _rule_fixed_in(e),
                                     target, e["source"])
        return None


    def _judge(self, target: str, dtype: str, sparse: bool) -> Judgement:
        fact = None if sparse else learned.lookup(target, self.torch, self.macos)
        if fact is not None:
            return self._observed(target, dtype, fact)
        sup = self.db.lookup(target, macos=self.macos)
        st, tv = sup.status, self.torch
        src = "; ".join(sup.sources[:2]) if sup.sources else None
        if sparse and st in ("kernel", "missing", "cpu_fallback_always", "guard"):
            if not sup.sparse_mps:
                fixed = ops_api.later_release(tv, lambda d: d.lookup(target).sparse_mps)
                return Judgement(target, "error", "sparse", "NotImplementedError",
                                 f"Could not run '{target}' with arguments from the 'SparseMPS' backend.",
                                 dtype or None, fixed, target, src)
            return Judgement(target, "runs", source=src)
        if st == "missing":
            named = sup.delegate or target
            if self.fallback:
                return Judgement(target, "fallback", "missing", None, _strip_class(fallback_warning(named)),
                                 dtype or None, sup.fixed_in, named, src)
            return Judgement(target, "error", "missing", "NotImplementedError",
                             _strip_class(not_implemented_message(named, tv)), dtype or None, sup.fixed_in, named, src)
        if st == "cpu_fallback_always":
            return Judgement(target, "fallback", "always_fallback", None, _strip_class(fallback_warning(target)),
                             dtype or None, sup.fixed_in, target, src)
        if st == "guard":
            return Judgement(target, "error", "guard", "RuntimeError",
                             f"{target}: registered on MPS only to raise (MPSFallback.mm, torch {tv})",
                             dtype or None, sup.fixed_in, target, src)
        if st == "unknown":
            return Judgement(target, "unknown", "unknown", None, None, dtype or None, None, target, src)
        if st == "kernel":
            if sup.min_macos and versions.macos_lt(self.macos, sup.min_macos):
                return Judgement(target, "error", "macos", "RuntimeError",
                                 f"{target} on MPS needs macOS {sup.min_macos} (this target: {self.macos})",
                                 dtype or None, None, target, src)
            exc = sup.dtype_exceptions.get(dtype) or sup.dtype_exceptions.get("*")
            if exc and exc.get("unsupported"):
                fixed = ops_api.later_release(tv, lambda d: dtype not in d.lookup(target, macos=self.macos).dtype_exceptions)
                return Judgement(target, "error", "dtype", "RuntimeError",
                                 f"{target} does not support input type '{dtype}' in MPS backend "
                                 f"({exc.get('message') or 'common_mps.py expected failure'})",
                                 dtype, fixed, target, src)
            if exc and exc.get("min_macos") and versions.macos_lt(self.macos, exc["min_macos"]):
                return Judgement(target, "error", "dtype", "RuntimeError",
                                 f"{target} supports {dtype} on MPS from macOS {exc['min_macos']} "
                                 f"({exc.get('message') or 'common_mps.py'})", dtype, None, target, src)
            return Judgement(target, "runs", source=src)
        return Judgement(target, "composite", source=src)

    def _observed(self, target: str, dtype: str, fact: learned.Fact) -> Judgement:
        """A local fact (``mpsready learn``): what a real Mac did with ``target`` on this release and macOS major
        version, in place of the shipped tables; its source, and the message a failure prints, say where it was
        observed (``observed on <machine> ...``)."""
        src = fact.label
        if fact.status == "runs":
            return Judgement(target, "runs", source=src)
        if self.fallback:
            return Judgement(target, "fallback", "missing", None, f"{_strip_class(fallback_warning(target))} [{src}]",
                             dtype or None, None, target, src)
        return Judgement(target, "error", "missing", "NotImplementedError",
                         f"{_strip_class(not_implemented_message(target, self.torch))} [{src}]", dtype or None, None,
                         target, src)

    def _shape_judgement(self, target: str, rules: Sequence[dict[str, Any]], facts: CallFacts) -> Judgement | None:
        for rule in rules:
            if all(_SHAPE_TESTS[k](v, facts) for k, v in rule["when"].items()):
                return Judgement(target, "crash" if rule["effect"] == "crash" else "error", "shape",
                                 rule.get("exception"), rule["message"],
                                 (facts.dtypes[:1] or (None,))[0], _rule_fixed_in(rule), target, rule["source"])
        return None

    # ------------------------------------------------------------------ why, in words
    def reason(self, j: Judgement) -> Reason | None:
        """Why ``j`` does not simply run, in a few words (None for ``runs`` and ``composite``): the trace's and the
        report's text of a judgement. ``message`` is what Python would print (exception class first, MPS's
        ``UserWarning`` for a fallback), None for an unknown op."""
        if j.outcome in ("runs", "composite"):
            return None
        kind, tv = j.kind or "unknown", self.torch
        if j.outcome == "fallback":
            msg = f"UserWarning: {j.message}" if j.message else None
        elif j.exception and j.message:
            msg = f"{j.exception}: {j.message}"
        else:
            msg = j.message
        sup = self.db.lookup(j.op, macos=self.macos)
        exc = (sup.dtype_exceptions.get(j.dtype or "") or {}) if kind == "dtype" else {}
        if kind == "missing":
            detail = f"no MPS kernel in torch {tv}"
        elif kind == "always_fallback":
            detail = f"on PyTorch's always-CPU list in torch {tv} (MPSFallback.mm)"
        elif kind == "guard":
            detail = f"registered to raise on MPS in torch {tv}"
        elif kind == "sparse":
            detail = f"no SparseMPS kernel in torch {tv}"
        elif kind == "macos" and sup.min_macos:
            detail = f"the MPS kernel needs macOS {sup.min_macos}"
        elif kind == "dtype" and exc.get("unsupported"):
            detail = f"{j.dtype} unsupported by the MPS kernel"
        elif kind == "dtype" and exc.get("min_macos"):
            detail = f"{j.dtype} needs macOS {exc['min_macos']}"
        elif kind == "size_regime":
            detail = f"{j.message}; torch {tv} has no fact for this op at that size: not verified"
        elif kind == "composite_unseen":
            kind, detail, msg = "unknown", "composite op whose callees were not recorded (trace with this --torch)", None
        elif kind == "unknown":
            ns = j.op.split("::", 1)[0]
            msg = None
            detail = (f"custom operator namespace '{ns}': MPS support not in the shipped data" if ns != "aten"
                      else f"not in the support table of torch {tv}")
        else:  # callee_of_other_release, shape, and kinds added later: the judgement's own words
            detail = j.message or kind
        return Reason(kind, detail, msg)

    # ------------------------------------------------------------------ autocast
    def autocast_policy(self, name: str) -> str | None:
        """The AutocastMPS policy of ``name`` in this release (``lower_precision_fp``, ``fp32``, ...), None
        when the op is not on the list. Only meaningful where :attr:`autocast_known`."""
        return self.db.autocast_mps_policy.get(name)

    @property
    def autocast_known(self) -> bool:
        """Whether the data ships this release's AutocastMPS list (autocast_mps.yaml: 2.5.1 only so far)."""
        return bool(self.db.autocast_mps)

    # ------------------------------------------------------------------ where the call was made (run and trace)
    def same_release(self, version: str | None) -> bool:
        """Whether ``version`` (the PyTorch that ran the program or recorded the trace, ``"2.13.0+cpu"``) is this
        target's release (same major.minor): only then are a composite's callees the ones the target's own
        kernel calls. An empty ``version`` (a trace saved before it was kept) counts as the same."""
        if not version:
            return True
        return versions.release(version)[:2] == versions.release(self.torch)[:2]

    def inside_composite(self, j: Judgement, inside_composite: bool, exact_composites: bool,
                         installed: str, parent: str | None = None) -> Judgement:
        """``j`` for a call reached inside a composite's kernel (``inside_composite``) as the installed PyTorch
        ``installed`` decomposes it. When that is not the target release (``exact_composites`` False, see
        :meth:`same_release`), a failing callee is not a certain failure: the target's own kernel of that
        composite may call other ops (``_safe_softmax``: ``eq`` in 2.5, ``isneginf`` later; docs/emulation.md),
        so it is ``unknown`` with kind ``callee_of_other_release``. Any other ``j`` is returned unchanged.

        Except where the target's own table settles it: ``parent`` (the composite that made the call) is a
        ``CompositeExplicitAutograd`` op of the target release and ``j`` is a ``missing`` overload of the same
        name (``linalg_lstsq`` -> ``linalg_lstsq.out``): such a kernel is the functional form of its own out
        variant (torchgen's structured/out pattern, the ``.out`` overload is what it calls in every release), so
        the target's table saying the out variant has no MPS kernel is a fact about this call, and the failure
        stands (issue 33: a solver read through such a callee used to "complete" on every release before the one
        that added its kernel). Nor is a kernel check (not a missing kernel) of an MPS-only kernel (``_mps_*``,
        ``mps_*``: reached by MPS's routing of the composite in every release), such as the 65536 output-size
        limit of ``_mps_convolution``, nor a check every MPS kernel makes (``ops: ["*"]``: a dimension above
        INT_MAX, whose tensor the target's own callees meet too; not a fill, which may blit: fill_mps_tensor_)."""
        if not (j.fails and inside_composite and not exact_composites):
            return j
        if parent is not None and self.own_variant(parent, j):
            return j
        if j.kind == "shape" and j.op not in _BLIT_FILLS and any(j.message == e["message"] for e in self._any_checks):
            return j
        if j.kind != "missing" and j.op.split("::")[-1].startswith(("_mps_", "mps_")):
            # a kernel check of an MPS-only kernel (_mps_convolution): every release's composite reaches it by
            # MPS's own routing (routing.yaml; ConvBackend::Mps since 1.12), so the refusal is the target's
            return j
        return replace(j, outcome="unknown", kind="callee_of_other_release",
                       message=f"{j.message} (reached inside a composite as torch {installed} decomposes "
                               f"it; torch {self.torch}'s own decomposition may differ)")

    def own_variant(self, parent: str, j: Judgement) -> bool:
        """Whether the failing callee ``j`` of composite ``parent`` is ``parent``'s own overload that the target's
        table lists as ``missing`` (see :meth:`inside_composite`)."""
        if j.kind != "missing":
            return False
        base = parent.split(".", 1)[0]
        if (j.op.split(".", 1)[0] != base) or j.op == parent:
            return False
        sup = self.db.lookup(parent, macos=self.macos)
        return sup.status == "composite" and sup.how == "yaml:CompositeExplicitAutograd"

    # ------------------------------------------------------------------ what a judgement rests on
    def basis(self, op: str, outcome: str, kind: str | None) -> str:
        """What a judgement of ``op`` with ``outcome``/``kind`` rests on, for the run's count of judged calls:

        * ``"facts"``: a fact the data states for this release: the table's status of the op (no kernel,
          always-fallback, guard, composite), a dtype exception of ``common_mps.py``, a kernel check of
          ``mps_dtype_checks.yaml``, a shape rule, a placement rule; or an op that runs on an MPS kernel for which
          the release's data holds dtype facts (an entry of ``common_mps.py`` or of ``mps_dtype_checks.yaml``)
          that did not refuse this call;
        * ``"defaults"``: the op runs because the release's yaml gives it an MPS kernel and no fact refuses it,
          but the data holds no dtype fact for that op in that release: every dtype the global rules allow is
          assumed to work (the table's default);
        * ``"none"``: no data: an op the release's table does not know (another namespace, an op absent from
          that release), a callee of a composite decomposed by another release (``callee_of_other_release``), a
          composite whose callees were not recorded.
        """
        if outcome == "unknown":
            return "none"
        if outcome != "runs" or kind is not None:
            return "facts"
        key = op
        memo = self.__dict__.setdefault("_basis_memo", {})
        hit = memo.get(key)
        if hit is None:
            sup = self.db.lookup(op, macos=None)
            hit = "facts" if (sup.dtype_exceptions or sup.conditions or op in self._checks) else "defaults"
            memo[key] = hit
        return hit

    def callees_unseen(self, j: Judgement) -> Judgement:
        """``j`` for a composite whose callees were not recorded (a trace expanded for another release): never
        assumed to run, ``unknown``. Other judgements are returned unchanged."""
        if j.outcome != "composite":
            return j
        return replace(j, outcome="unknown", kind="composite_unseen",
                       message="composite op whose callees were not recorded (trace with this --torch)")


_BLIT_FILLS = frozenset({"aten::fill_.Scalar", "aten::zero_"})

# What each outcome means for the user, worst first: the verdict of an op over all its calls is the worst outcome
# among them; the severity of a finding follows the outcome (a predicted exception or abort blocks the move, a
# CPU fallback degrades it, an unknown op is information: never assumed to run).
SEVERITY_OF_OUTCOME = {"crash": "blocker", "error": "blocker", "fallback": "degrades", "unknown": "info"}


def verdict(outcomes: Sequence[str], composite: bool = False) -> str:
    """The verdict of one op from the ``outcomes`` of its judged calls: ``error`` (a crash counts as an error),
    ``fallback``, ``unknown``, else ``composite`` when the op is a composite (``composite``) or ``runs``."""
    seen = set(outcomes)
    for o in ("crash", "error", "fallback", "unknown"):
        if o in seen:
            return "error" if o == "crash" else o
    return "composite" if composite else "runs"


def severity(outcome: str) -> str | None:
    """``"blocker"``, ``"degrades"`` or ``"info"`` for a finding about a call judged ``outcome``
    (:attr:`Judgement.outcome`); None for ``runs`` and ``composite``."""
    return SEVERITY_OF_OUTCOME.get(outcome)
