"""The judge's half for dtypes, generators and the availability floor (issue 33), per release and macOS: the
dtype support table (``data/curated/mps_dtype_support.yaml``: creation, the copy to MPS and back, compute), the
generator-device checks of MPS's random kernels, and the availability floor with its message
(``data/curated/mps_availability.yaml``). :class:`mpsready.ops.judge.Judge` inherits :class:`DtypeChecks`; no
torch import (a call is described by plain values).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mpsready import versions

if TYPE_CHECKING:
    from mpsready.ops.api import SupportDB
    from mpsready.ops.judge import Judgement

_ALLOCATION_EXCEPTION = "TypeError"  # TORCH_CHECK_TYPE in aten/src/ATen/mps/EmptyTensor.cpp (2.3-2.14)
_DEFAULT_BRANCH = ("aten/src/ATen/native/mps/OperationUtils.mm getMPSDataType default branch (TORCH_CHECK_TYPE; "
                   "stored copies bff2c90, 001d046)")


# c10::ScalarType names (c10/core/ScalarType.h), as AT_DISPATCH's "not implemented for '<name>'" prints them
C10_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
              "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
              "uint64": "UInt64"}


# Metal type names of c10/metal (scalarToMetalTypeString), as MPS's Metal kernel names spell them
_METAL_NAMES = {"float32": "float", "float16": "half", "bfloat16": "bfloat", "int64": "long", "int32": "int",
                "int16": "short", "int8": "char", "uint8": "uchar", "bool": "bool"}


_MLIR_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def metal_names(message: str, dtypes: tuple[str, ...]) -> str:
    """``message`` with ``{self_metal}`` (the first tensor's dtype) and ``{promoted_metal}`` (the promotion of the
    first two) as Metal spells them: a kernel name MPS builds at run time (``add_alpha_dense_cast_half_float``)."""
    if "{" not in message or not dtypes:
        return message
    from mpsready.ops.shape_tests import _promoted_differs

    first = dtypes[0]
    promoted = dtypes[1] if len(dtypes) > 1 and _promoted_differs(dtypes[1], first) else first
    if {first, promoted} == {"float16", "bfloat16"}:
        promoted = "float32"
    return (message.replace("{self_metal}", _METAL_NAMES.get(first, first))
            .replace("{promoted_metal}", _METAL_NAMES.get(promoted, promoted)))


def call_message(message: str, dtypes: tuple[str, ...], facts: Any) -> str:
    """A call check's ``message`` as the kernel prints it: :func:`metal_names`, then the sizes a matmul check
    prints (``{out_rows}``, ``{out_cols}``: one matrix of the result; ``{inner}``: the contracted size), read from
    the call's :class:`~mpsready.ops.judge.CallFacts`."""
    message = metal_names(message, dtypes)
    if "{mlir" in message:  # MLIR element types as MPSGraph's verifier prints them: {mlir0} input, {mlir2} bias
        for i in (0, 2):
            d = dtypes[i] if i < len(dtypes) else ""
            message = message.replace("{mlir%d}" % i, _MLIR_NAMES.get(d, d))
    if "{out_rows}" in message:
        message = (message.replace("{out_rows}", str(facts.out_matrix[0]))
                   .replace("{out_cols}", str(facts.out_matrix[1])).replace("{inner}", str(facts.inner)))
    return message


@lru_cache(maxsize=None)
def _dtype_support_rules() -> tuple[dict[str, Any], ...]:
    """``data/curated/mps_dtype_support.yaml`` ``rules``: per dtype and release, creation, copies and compute."""
    from mpsready.ops.build import curated

    return tuple(curated.load("mps_dtype_support")["rules"])


# c10 ScalarType names of the dtypes the support table does not list (quantized, bit and sub-byte dtypes): MPS's
# getMPSDataType refuses them in its default branch with this name (OperationUtils.mm, every stored copy)
_C10_PREFIX = (("quint", "QUInt"), ("qint", "QInt"), ("uint", "UInt"), ("int", "Int"), ("bits", "Bits"),
               ("float", "Float"))
DTYPE_FACTS = ("create", "to_mps", "from_mps", "compute")


def c10_name(dtype: str) -> str:
    """``"qint8"`` -> ``"QInt8"``, ``"float4_e2m1fn_x2"`` -> ``"Float4_e2m1fn_x2"``: the name PyTorch's C++ prints."""
    for low, up in _C10_PREFIX:
        if dtype.startswith(low):
            return up + dtype[len(low):]
    return dtype


# The machines a target Mac can be: Apple silicon (arm64), or an Intel Mac (x86_64) with a discrete AMD GPU. PyTorch's
# last macOS x86_64 wheel is 2.2.2 (pip finds no torch>2.2.2 for macosx_10_9_x86_64), so an Intel target is 2.2 only.
# Its wheel's native_functions.yaml is byte-identical to the arm64 wheel's and its libtorch_cpu.dylib prints the
# same MPS messages (same source commit 39901f2) and names the same MPSFallback.mm registrations (ops/build/macho.py):
# the 2.2.2 table and facts stand for both (torch-2.2.2-cp311-none-macosx_10_9_x86_64.whl, docs/emulation.md "torch
# 2.2 and the Intel Mac"). On Intel, MPSDevice picks the first Metal device that is not low-power ("exclude Intel
# GPUs", aten/src/ATen/mps/MPSDevice.mm): MPS is available with an AMD GPU, never with the integrated Intel GPU alone
# (not emulated: the target has an AMD GPU).
MACHINES = {"arm64": "Apple silicon", "x86_64": "Intel Mac with an AMD GPU"}
INTEL_RELEASES = "==2.2.*"
# Python-level factories (as the device mode names them) whose MPS kernel is an out= kernel that dispatches on the
# result's dtype: torch.arange's composites (arange, arange.start, arange.start_step: CompositeExplicitAutograd,
# RangeFactories.cpp) call arange.start_out, whose MPS kernel is arange_mps_out; torch.range calls range.out
# (range_mps_out); native_functions.yaml of every shipped release (MPS: arange_mps_out, range_mps_out)
FACTORY_KERNELS = {"aten::arange": "aten::arange.start_out", "aten::range": "aten::range.out"}


def check_machine(machine: str, torch: str) -> str:
    """``machine`` when a Mac of that machine runs ``torch`` (:data:`MACHINES`); raises ``ValueError`` for an unknown
    machine and for an Intel Mac past 2.2 (its message names the last macOS x86_64 wheel)."""
    if machine not in MACHINES:
        raise ValueError(f"unknown Mac machine {machine!r} (one of: {', '.join(MACHINES)})")
    if machine == "x86_64" and Version(torch) not in SpecifierSet(INTEL_RELEASES):
        raise ValueError(f"an Intel Mac (x86_64) has no torch {torch}: the last macOS x86_64 wheel is torch 2.2.2 "
                         "(use --torch 2.2)")
    return machine


def _allocation_fixed_in(dtype: str, torch: str, macos: str) -> str | None:
    """The first shipped release after ``torch`` whose MPS device takes a ``dtype`` tensor on ``macos``: neither a
    global dtype rule (global_rules.yaml: ``error``, or ``unsupported_before`` a newer macOS) nor the dtype support
    table (``to_mps`` refused, or ``ok_macos_14`` below 14) refuses it there. bfloat16 on 2.2 is fixed in 2.3.0 on
    macOS 14, never on macOS 13. None when no shipped release takes it."""
    from mpsready.ops import api as ops_api
    from mpsready.ops.build import curated

    gl = [r for r in curated.load("global_rules")["dtype_rules"] if r["dtype"] == dtype]
    sup = [r for r in _dtype_support_rules() if r["dtype"] == dtype]
    now = Version(torch)
    for rel in ops_api.shipped_versions():
        v = Version(rel)
        if v <= now:
            continue
        g = next((r for r in gl if v in SpecifierSet(r.get("torch") or "")), None)
        if g is not None and (g["effect"] == "error" or g["effect"] == "unsupported_before"
                              and g.get("min_macos") and versions.macos_lt(macos, g["min_macos"])):
            continue
        s = next((r for r in sup if v in SpecifierSet(r.get("torch") or "")), None)
        if s is not None and (s["to_mps"] == "refused" or s["to_mps"] == "ok_macos_14"
                              and versions.macos_lt(macos, "14.0")):
            continue
        return rel
    return None


def _dtype_fixed_in(target: str, dtype: str, torch: str, macos: str) -> str | None:
    """The first shipped release after ``torch`` where no dtype check of mps_dtype_checks.yaml refuses ``dtype`` for
    ``target`` on ``macos``: a check split over releases (another exception class, another dtype set: the range
    factories, histc) is not "fixed" where its next entry refuses the same dtype. None when every later one does."""
    from mpsready.ops import api as ops_api
    from mpsready.ops.judge import _kernel_checks

    op = target.split("::", 1)[-1]
    entries = [e for e in _kernel_checks()["dtype_checks"] if op in e["ops"]
               and ("*" in e["refuses"] or dtype in e["refuses"])
               and not (e.get("macos_below") and not versions.macos_lt(macos, e["macos_below"]))
               and not (e.get("macos_from") and versions.macos_lt(macos, e["macos_from"]))]
    now = Version(torch)
    for rel in ops_api.shipped_versions():
        v = Version(rel)
        if v > now and not any(v in SpecifierSet(e.get("torch") or "") for e in entries):
            return rel
    return None


class DtypeChecks:
    """Needs ``self.torch``, ``self.macos``, ``self.db``, ``self._dsupport`` (dtype -> the release's rule) and
    ``dtype_rules()``/``allocation()`` of :class:`mpsready.ops.judge.Judge`."""

    torch: str
    macos: str
    db: "SupportDB"
    _dsupport: dict[str, dict[str, Any]]

    if TYPE_CHECKING:  # the host's methods (Judge's), declared for the type checker only
        def dtype_rules(self) -> dict[str, Any]: ...

        def allocation(self, dtype: str) -> "Judgement | None": ...

        def _routed(self, name: str, grad: bool) -> tuple[str, Any, Any]: ...

        def _kernel_check(self, target: str, checks: Any, facts: Any, kernel: bool) -> "Judgement | None": ...

    def backward_check(self, name: str, facts: Any) -> "Judgement | None":
        """The refusal or abort of the MPS *backward* kernel of a forward call of ``name`` with ``facts``
        (``call_checks`` entries with ``stage: backward``: a 1-D weight of ``linear`` aborts in
        ``mps_linear_backward``), or None. The caller raises it when the backward runs."""
        _target, _rules, checks = self._routed(name, True)
        back = [(k, {**e, "stage": None}) for k, e in checks or () if e.get("stage") == "backward"]
        return self._kernel_check(name, back, facts, True) if back else None

    def _floor(self) -> dict[str, Any] | None:
        """This release's entry of mps_availability.yaml, or None (the table's ``min_macos`` then)."""
        from mpsready.ops.build import curated

        rel = Version(self.torch)
        return next((e for e in curated.load("mps_availability")["releases"]
                     if rel in SpecifierSet(e["torch"])), None)

    @property
    def available(self) -> bool:
        """``torch.backends.mps.is_available()`` on the target: False below the release's availability floor
        (mps_availability.yaml; 2.5 has none below macOS 13.0 although its message says 12.3+, pytorch#139425)."""
        hit = self.__dict__.get("_available")
        if hit is None:
            floor = self._floor()
            hit = self.__dict__["_available"] = (not versions.macos_lt(self.macos, floor["floor"]) if floor
                                                 else self.db.macos_supported(self.macos))
        return hit

    def unavailable_message(self) -> str:
        """The RuntimeError text of a tensor put on MPS where the macOS is too old (mps_availability.yaml; else the
        libtorch_cpu.dylib string 'The MPS backend is supported on MacOS X+', global_rules.yaml min_macos)."""
        floor = self._floor()
        if floor is not None:
            return str(floor["message"])
        return (f"The MPS backend is supported on MacOS {self.db.min_macos}+.Current OS version can be queried "
                "using `sw_vers`")

    def dtype_fact(self, dtype: str, what: str) -> tuple[str, str]:
        """``(support, source)`` of ``dtype`` for ``what`` (``create``, ``to_mps``, ``from_mps``, ``compute``) on
        this release and macOS (mps_dtype_support.yaml): ``ok``, ``refused``, ``wrong`` (completes with wrong
        values) or ``global`` (global_rules.yaml decides); ``ok_macos_14`` is resolved at this macOS. A dtype the
        table does not list is ``refused``: getMPSDataType's default branch."""
        rule = self._dsupport.get(dtype)
        if rule is None:
            return "refused", _DEFAULT_BRANCH
        v = rule[what]
        if v == "ok_macos_14":
            v = "refused" if versions.macos_lt(self.macos, "14.0") else "ok"
        return v, rule["source"]

    def dtype_support(self) -> dict[str, dict[str, Any]]:
        """The dtype support table of this release and macOS: dtype -> ``{create, to_mps, from_mps, compute,
        message, source, range}`` (:meth:`dtype_fact` per column; the global rules of global_rules.yaml resolved)."""
        out = {}
        for dtype, rule in self._dsupport.items():
            row: dict[str, Any] = {}
            for what in DTYPE_FACTS:
                v, _src = self.dtype_fact(dtype, what)
                if v == "global":
                    v = "refused" if self.allocation(dtype) is not None else "ok"
                row[what] = v
            row.update(message=self._dtype_message(dtype) if "refused" in row.values() else None,
                       source=rule["source"], range=rule["range"])
            out[dtype] = row
        return out

    def _dtype_message(self, dtype: str) -> str:
        rule = self._dsupport.get(dtype)
        if rule is not None and rule.get("message"):
            return rule["message"]
        g = self.dtype_rules().get(dtype)
        if g is not None and g.effect in ("error", "unsupported_before"):
            return g.message
        return f"Trying to convert {c10_name(dtype)} to the MPS backend but it does not have support for that dtype."

    def copy_off_device(self, src_dtype: str, dst_dtype: str) -> Judgement | str | None:
        """An MPS tensor of ``src_dtype`` copied into a CPU tensor of ``dst_dtype`` in one call
        (``x.to("cpu", torch.float64)``): the ``error`` MPS raises (``TypeError`` up to 2.13 for float64), the
        string ``"wrong"`` where it completes with wrong values (2.14: nothing is written, pytorch#197715; the
        advisory ``copy-back-float64-writes-nothing`` names it), or None. mps_dtype_support.yaml ``from_mps``."""
        if src_dtype == dst_dtype:
            return None
        v, src = self.dtype_fact(dst_dtype, "from_mps")
        if v == "wrong":
            return "wrong"
        if v != "refused":
            return None
        from mpsready.ops.judge import Judgement

        rule = self._dsupport.get(dst_dtype) or {}
        return Judgement(op="aten::_to_copy", outcome="error", kind="dtype",
                         exception=rule.get("exception", _ALLOCATION_EXCEPTION), message=self._dtype_message(dst_dtype),
                         dtype=dst_dtype, fixed_in=None, named="aten::_to_copy", source=src)

    def generator(self, name: str, op_on_mps: bool, generator_on_mps: bool) -> Judgement | None:
        """A random op ``name`` given an explicit ``generator=``: None when the generator's device is the op's,
        else the ``RuntimeError`` of ``check_generator`` (aten/src/ATen/core/Generator.h, every release 2.3-2.14;
        the MPS kernels take their generator with ``get_generator_or_default<MPSGeneratorImpl>``): a CPU
        generator with an MPS op (``torch.Generator()`` beside ``torch.set_default_device("mps")``: a shuffled
        DataLoader's RandomSampler draws ``torch.randperm(n, generator=torch.Generator())``, torch/utils/data/
        sampler.py) or an MPS generator with a CPU op. Kind ``generator``."""
        from mpsready.ops.judge import Judgement

        if op_on_mps == generator_on_mps:
            return None
        if name.startswith("aten::randperm"):  # its own check, with the result's and the generator's device
            want, found = ("mps:0", "cpu") if op_on_mps else ("cpu", "mps:0")
            return Judgement(name, "error", "generator", "RuntimeError",
                             f"Expected a '{want}' generator device but found '{found}'", None, None, name,
                             "aten/src/ATen/native/mps/operations/Distributions.mm randperm_out_mps and "
                             "TensorFactories.cpp randperm_out_cpu TORCH_CHECK (stored copies, c10::optional and "
                             "std::optional eras: 2.3-2.14 inferred); huggingface/transformers#31897 (2.3.0)")
        want, found = ("mps", "cpu") if op_on_mps else ("cpu", "mps")
        return Judgement(name, "error", "generator", "RuntimeError",
                         f"Expected a '{want}' device type for generator but found '{found}'", None, None, name,
                         "aten/src/ATen/core/Generator.h check_generator (TORCH_CHECK), reached from the MPS random "
                         "kernels' get_generator_or_default<MPSGeneratorImpl> (2.3-2.14)")

    def dtype_added(self, name: str, dtype: str) -> bool:
        """Whether the data says the MPS kernel of ``name`` (``aten::histc``) gained ``dtype`` at or before this
        release: a dtype check of mps_dtype_checks.yaml refused it in an earlier release and its range has ended.
        The emulated device computes such a call on a widened dtype where this CPU's kernel lacks it; any other
        CPU refusal stays the program's error (no data says the Mac runs it)."""
        from mpsready.ops import api as ops_api
        from mpsready.ops.judge import _kernel_checks

        bare = name.split("::", 1)[-1]
        rel = Version(self.torch)
        for e in _kernel_checks()["dtype_checks"]:
            if bare in e["ops"] and dtype in e["refuses"]:
                spec = SpecifierSet(e.get("torch") or "")
                first = next((r for r in ops_api.shipped_versions() if Version(r) in spec), None)
                # a check split over releases (histc's exception class) is gained where none of its entries refuses
                fixed = _dtype_fixed_in(name, dtype, first, self.macos) if first else None
                if fixed is not None and rel >= Version(fixed):
                    return True
        return False

    def factory_refusal(self, dtype: str, called: str) -> "Judgement | None":
        """A factory whose MPS kernel dispatches on the result's dtype (``torch.arange`` -> ``arange_mps_out``,
        :data:`FACTORY_KERNELS`): its AT_DISPATCH refusal of ``dtype`` (mps_dtype_checks.yaml) named by ``called``,
        at the line of the call; None when it takes the dtype."""
        from dataclasses import replace

        from mpsready.ops.judge import CallFacts

        kernel = FACTORY_KERNELS.get(called)
        checks = self._checks.get(kernel) if kernel else None  # type: ignore[attr-defined]
        if not kernel or not checks:
            return None
        found = self._kernel_check(kernel, checks, CallFacts(out_dtypes=(dtype,)), True)  # type: ignore[attr-defined]
        return None if found is None else replace(found, named=called)


def _rule_fixed_in(rule: dict[str, Any]) -> str | None:
    """The first shipped release the rule's specifier excludes after it applied (``<2.8`` -> ``2.8.0``); None
    where the rule says ``fixed_in: null`` (its range ends where the reading ends, not at a fix). Moved here from
    :mod:`mpsready.ops.judge` (the module size limit)."""
    from mpsready.ops import api as ops_api

    if "fixed_in" in rule and rule["fixed_in"] is None:
        return None
    spec = SpecifierSet(rule.get("torch") or "")
    seen = False
    for rel in ops_api.shipped_versions():
        inside = Version(rel) in spec
        if inside:
            seen = True
        elif seen:
            return rel
    return None
