"""Judge the torch API calls whose behaviour on MPS PyTorch decides in Python, per release: autocast, the
optimizers' ``fused``/``capturable`` checks, ``torch.compile``, GradScaler's inverse scale, the ``torch.mps``
names a release lacks and ``torch.load``'s ``weights_only`` default.

Part of the one judge (:class:`mpsready.ops.judge.Judge` inherits :class:`ApiChecks`): the emulated Mac
(:mod:`mpsready.emulate.autocast`, :mod:`mpsready.emulate.release_api`) binds the program's arguments to plain
values, asks here, and acts on the answer. No torch import. The facts, with their releases, texts and sources
(the Python files of each release's macOS arm64 wheel), are ``data/curated/python_checks.yaml``.

An answer is a :class:`~mpsready.ops.judge.Judgement` (``outcome`` ``error``: the call raises ``exception``
with ``message``; ``warns``: it goes on after the release's ``UserWarning`` ``message``, and for autocast the
region is disabled) or None when the call does what the installed PyTorch does.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, TypedDict

from mpsready import versions

if TYPE_CHECKING:
    from mpsready.ops.judge import Judgement

KIND_API = "release_api"
KIND_COMPILE = "compile"
KIND_AUTOCAST = "autocast"
# composite ops Inductor decomposes into pointwise and reduction kernels before code generation
# (torch/_decomp/decompositions.py, torch/_inductor/decomposition.py) or falls back to aten for on MPS: softmax,
# norms, embedding, SDPA's math path (MPS's own kernel, judged as an aten call), concatenation, indexing and
# constant padding (a pointwise load with a bound check); aten::layer_norm is the call a layer norm reaches the
# emulated device as where MPS runs it whole (under inference_mode); SDPA's CPU math decomposition (matmuls and a
# softmax); eye (an index comparison: pointwise); batch norm (Inductor decomposes it into welford reductions and
# pointwise ops); matmul is the composite of the mm/bmm extern kernels
# A compiled region's calls Inductor's Metal code generation is known to refuse, per release: releases, the ops
# (any of them in the region), optionally the dtypes of those calls and torch.compile(dynamic=True), the
# InductorError's message, the first fixed release and the source; ``kinds``: only calls Inductor generates as one of
# these kinds (emulate/widen.py compiled_kind: a Welford reduction's welford / welford_multistage / welford_split...);
# ``unsure``: kinds the source neither shows refused nor shows compiled (the region is then unverified, never
# completed: Judge.compile_region)
class _Refusal(TypedDict, total=False):
    torch: str
    ops: frozenset[str]
    dtypes: frozenset[str]
    kinds: frozenset[str]
    unsure: frozenset[str]
    dynamic: bool
    message: str
    fixed_in: str | None
    source: str


_COMPILE_REFUSED: tuple[_Refusal, ...] = (
    {"torch": "==2.13.*", "ops": frozenset({"aten::eye", "aten::eye.m"}), "message": "KeyError: torch.uint16",
     "fixed_in": "2.14.0",
     "source": "https://github.com/pytorch/pytorch/issues/191942 (torch.eye(256) in a compiled graph gives uint16 "
               "index expressions; Metal's DTYPE_TO_METAL has no torch.uint16); fix "
               "https://github.com/pytorch/pytorch/pull/192020 (2026-08-04: 2.14.0 inferred, 2.13 inferred)"},
    {"torch": ">=2.8,<2.11", "ops": frozenset({"aten::constant_pad_nd", "aten::gelu"}),
     "dtypes": frozenset({"bfloat16"}), "message": "SyntaxError: failed to compile", "fixed_in": "2.11.0",
     "source": "https://github.com/pytorch/pytorch/pull/176436 (bare float literals assigned to bfloat in generated "
               "Metal: a padding value, GELU's constants), cherry-picked to release/2.11 as #177193 and verified "
               "fixed in 2.11.0; 2.8-2.10 inferred (bfloat16 Metal kernels from 2.8)"},
    {"torch": "==2.12.*", "ops": frozenset({"aten::native_batch_norm", "aten::_native_batch_norm_legit"}),
     "kinds": frozenset({"welford_multistage"}), "unsure": frozenset({"welford_split", "welford_split_maybe"}),
     "message": "SyntaxError: failed to compile", "fixed_in": "2.13.0",
     "source": "https://github.com/pytorch/pytorch/pull/184502 (a compiled train-mode BatchNorm2d of 4 x 8 x 32 x 32, "
               "4096 elements per channel: the second looped (multistage) pass over the same reduction root reuses "
               "index names it did not declare; 2026-05-20, after the 2.12 branch cut: 2.12 failing and 2.13 first "
               "fixed inferred from the merge date; only the looped form: a batch norm of at most 1024 elements per "
               "channel compiles and computes wrong statistics instead (advisory compiled-welford-missing-barrier, PR "
               "#184328); a split one is not established; the train-mode calls: in eval mode the installed torch "
               "calls native_batch_norm with training=False, which reduces nothing)"},
    {"torch": "==2.12.*", "ops": frozenset({"aten::native_layer_norm", "aten::layer_norm", "aten::native_group_norm",
                                            "aten::group_norm"}),
     "kinds": frozenset(), "unsure": frozenset({"welford_multistage", "welford_split", "welford_split_maybe"}),
     "message": "SyntaxError: failed to compile", "fixed_in": "2.13.0",
     "source": "https://github.com/pytorch/pytorch/pull/184502 (a norm reads its Welford statistics in a second "
               "looped pass over the same reduction root, as the batch norm of the PR does; whether a looped or split "
               "layer or group norm failed on 2.12 is not established: unverified, never refused)"},
    {"torch": "==2.9.*", "ops": frozenset({"aten::reflection_pad1d", "aten::reflection_pad2d",
                                           "aten::reflection_pad3d"}), "dynamic": True,
     "message": "use of undeclared identifier 'Where'", "fixed_in": None,
     "source": "https://github.com/pytorch/pytorch/issues/169643 (ReflectionPad under torch.compile(dynamic=True) "
               "emits a Where(...) call the Metal compiler rejects; 2025-12-05, release inferred 2.9; closed, no "
               "fixing release identified)"},
)
def _first_release(has) -> str | None:
    """The first mined release whose Inductor facts satisfy ``has`` (data/mined/inductor_mps.json), or None."""
    from mpsready.ops import inductor

    rels = inductor.load()["releases"]
    for name in sorted(rels, key=lambda r: tuple(int(p) for p in r.split("."))):
        if has(rels[name]):
            return name
    return None


def _later_release(torch: str, has) -> str | None:
    """The first mined release after ``torch`` whose Inductor facts satisfy ``has``, or None."""
    from packaging.version import Version

    from mpsready.ops import inductor

    rels = inductor.load()["releases"]
    for name in sorted(rels, key=Version):
        if Version(name) > Version(torch) and has(rels[name]):
            return name
    return None


_COMPILE_DECOMPOSED = frozenset({"aten::_softmax", "aten::_log_softmax", "aten::native_layer_norm", "aten::layer_norm",
                                 "aten::_fused_rms_norm", "aten::embedding", "aten::cat", "aten::stack",
                                 "aten::_scaled_dot_product_attention_math_for_mps", "aten::index_select",
                                 "aten::_scaled_dot_product_attention_math", "aten::eye", "aten::eye.m",
                                 "aten::native_batch_norm", "aten::_native_batch_norm_legit",
                                 "aten::_native_batch_norm_legit_no_training",
                                 "aten::index.Tensor", "aten::where.self", "aten::unbind.int", "aten::split.Tensor",
                                 "aten::constant_pad_nd"})
# aten kernels Inductor calls as extern kernels, not generated Metal (torch/_inductor/lowering.py
# make_fallback / the mm templates' aten fallbacks): judged as aten calls by the emulated device
_COMPILE_EXTERN = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul",
                             "aten::_mps_convolution", "aten::convolution", "aten::t", "aten::empty.memory_format",
                             "aten::empty_strided", "aten::copy_", "aten::_to_copy", "aten::clone",
                             "aten::detach", "aten::lift_fresh"})


@lru_cache(maxsize=None)
def _doc() -> dict[str, Any]:
    from mpsready.ops.build import curated

    return curated.load("python_checks")


def release_checks(release: str) -> dict[str, list[dict[str, Any]]]:
    """The ``python_checks.yaml`` entries that apply to ``release`` (a full version, ``"2.4.1"``): section ->
    entries (a one-entry section such as ``optimizer_foreach`` as a list)."""
    from mpsready.ops.build import curated

    out: dict[str, list[dict[str, Any]]] = {}
    for section, entries in _doc().items():
        out[section] = curated.for_release(entries if isinstance(entries, list) else [entries], release)
    return out


def _text(entry: dict[str, Any]) -> str:
    return entry["message"].format(devices=list(entry.get("devices", [])))


class ApiChecks:
    """The torch-API half of the judge; needs ``self.torch`` (the target's full version) and ``self.macos``."""

    torch: str
    macos: str

    def _api(self, section: str) -> list[dict[str, Any]]:
        cache: dict[str, list[dict[str, Any]]] | None = getattr(self, "_api_checks", None)
        if cache is None:
            cache = release_checks(self.torch)
            self._api_checks = cache
        return cache.get(section) or []

    # ------------------------------------------------------------------ autocast
    @property
    def autocast_checked(self) -> bool:
        """Whether this release checks ``torch.autocast("mps")`` differently from the installed code
        (python_checks.yaml ``autocast``: releases below 2.10)."""
        return bool(self._api("autocast"))

    def autocast(self, dtype: str, enabled: bool = True) -> Judgement | None:
        """``torch.autocast(device_type="mps", dtype=dtype, enabled=enabled)`` (``dtype``: ``"float16"``, the
        region's dtype after the default is applied): an ``error`` (kind ``autocast``) where the release has no
        MPS autocast (before 2.5, ``RuntimeError``), ``warns`` where it refuses the dtype and disables the region
        (2.5: only float16; 2.6-2.9: bfloat16 only from macOS 14), else None. Source: torch/amp/autocast_mode.py
        autocast.__init__ of each release (python_checks.yaml)."""
        from mpsready.ops.judge import Judgement

        rules = self._api("autocast")
        if not rules:
            return None
        rule = rules[0]
        if "exception" in rule:
            return Judgement(op="torch.autocast", outcome="error", kind=KIND_AUTOCAST, exception=rule["exception"],
                             message=rule["message"], fixed_in=rule.get("fixed_in"), named="torch.autocast",
                             source=rule["source"])
        if not enabled:
            return None
        message = None
        if dtype not in rule["supported"]:
            message = rule["warning"]
        elif dtype == "bfloat16" and rule.get("bfloat16_min_macos") and \
                versions.release(self.macos)[:2] < versions.release(rule["bfloat16_min_macos"])[:2]:
            message = rule["bfloat16_warning"]
        if message is None:
            return None
        return Judgement(op="torch.autocast", outcome="warns", kind=KIND_AUTOCAST, message=message, dtype=dtype,
                         named="torch.autocast", source=rule["source"])

    # ------------------------------------------------------------------ optimizers
    def fused_optimizers(self) -> tuple[str, ...]:
        """The ``torch.optim`` classes whose constructor checks ``fused=True`` against a device list in this
        release (Adam, AdamW before 2.5; SGD, Adagrad in 2.4)."""
        return tuple(n for e in self._api("optimizer_fused") for n in e["optimizers"])

    def optimizer_fused(self, name: str, param_devices: frozenset[str], all_floating: bool) -> Judgement | None:
        """``torch.optim.<name>(params, fused=True)`` whose params are on ``param_devices`` (``{"mps"}``) and all
        floating point (``all_floating``): the release's constructor ``RuntimeError`` (kind ``release_api``,
        fixed in 2.5.0) when a device is not on its list or a param is not floating, else None. Source:
        torch/optim/adam.py etc. ``__init__`` and torch/utils/_foreach_utils.py of 2.3.0/2.4.0."""
        from mpsready.ops.judge import Judgement

        for entry in self._api("optimizer_fused"):
            if name not in entry["optimizers"]:
                continue
            if all_floating and param_devices <= set(entry["devices"]):
                return None
            return Judgement(op=f"torch.optim.{name}", outcome="error", kind=KIND_API, exception=entry["exception"],
                             message=_text(entry), named=f"torch.optim.{name}", fixed_in="2.5.0",
                             source=entry["source"])
        return None

    def capturable_optimizers(self) -> tuple[str, ...]:
        """The ``torch.optim`` classes whose per-tensor step asserts the device of ``capturable=True`` params."""
        return tuple(n for e in self._api("optimizer_capturable") for n in e["optimizers"])

    def optimizer_step(self, name: str, capturable: bool, fused: bool, grads_on_mps: bool) -> Judgement | None:
        """``step()`` of a ``torch.optim.<name>`` param group (``capturable``, ``fused`` as set; ``grads_on_mps``:
        a param with a gradient is on MPS): the release's ``AssertionError`` (MPS is on no release's capturable
        list; torch/optim/adam.py _single_tensor_adam, torch/optim/optimizer.py 2.3.0-2.14.0), else None."""
        from mpsready.ops.judge import Judgement

        if not capturable or fused or not grads_on_mps:
            return None
        for entry in self._api("optimizer_capturable"):
            if name in entry["optimizers"]:
                return Judgement(op=f"torch.optim.{name}.step", outcome="error", kind=KIND_API,
                                 exception="AssertionError", message=_text(entry), named=f"torch.optim.{name}.step",
                                 source=entry["source"])
        return None

    @property
    def foreach_per_tensor(self) -> bool:
        """Whether the optimizers and ``clip_grad_norm_`` default to the per-tensor path on MPS (no release lists
        mps among the foreach devices: torch/utils/_foreach_utils.py 2.3.0-2.14.0)."""
        return bool(self._api("optimizer_foreach"))

    # ------------------------------------------------------------------ amp
    @property
    def grad_scaler_float64(self) -> bool:
        """Whether ``GradScaler.unscale_`` computes the inverse scale in float64 on the MPS scale tensor (before
        2.8: torch/amp/grad_scaler.py); the ``.double()`` is then judged as any float64 tensor on MPS."""
        return any(e.get("double_inverse_scale") for e in self._api("grad_scaler"))

    # ------------------------------------------------------------------ API surface, torch.load
    def missing_api(self) -> dict[str, frozenset[str]]:
        """``{"torch.mps": names, "torch.backends.mps": names}``: the public names this release lacks (each
        module's ``__all__`` per release, python_checks.yaml ``mps_api``); the program's access raises
        ``AttributeError: module 'torch.mps' has no attribute '...'``."""
        from mpsready.ops.build import curated

        out: dict[str, set[str]] = {"torch.mps": set(), "torch.backends.mps": set()}
        for e in _doc()["mps_api"]:
            if not curated.applies(e, self.torch):
                out.setdefault(e["module"], set()).add(e["name"])
        return {k: frozenset(v) for k, v in out.items()}

    def torch_load_default(self) -> dict[str, Any] | None:
        """This release's ``torch.load`` default where it differs from 2.6+ (``{"weights_only_default": False,
        "force_true_variable": "TORCH_FORCE_WEIGHTS_ONLY_LOAD", ...}`` before 2.6: torch/serialization.py), else
        None."""
        rules = self._api("torch_load")
        return rules[0] if rules else None

    # ------------------------------------------------------------------ torch.compile
    @property
    def compile_checked(self) -> bool:
        """Whether the data states this release's ``torch.compile`` on MPS (every shipped release: then the
        emulated Mac runs compiled functions eagerly so that their ops are judged, see docs/emulation.md)."""
        return bool(self._api("compile"))

    def compile_refusal(self, ops: Iterable[tuple[str, str, str]], dynamic: bool = False) -> Judgement | None:
        """What this release's Inductor is known to refuse in a compiled region on MPS (``ops`` as for
        :meth:`compile_region`), raised at the call as the release raises it; None otherwise. 2.7 (the Metal
        prototype): a reduction over more than one 1024-thread threadgroup (a multistage reduction) generates a
        shader that does not compile (pytorch#152155 on 2.7.0: "In 2.7 release, this is an expected thing, but
        should be fixed in 2.8 timeframe"; fix PR #153362, 2025-05). From 2.8, the known refusals of
        ``_COMPILE_REFUSED`` (``torch.eye`` in a compiled graph on 2.13: pytorch#191942; bfloat16 padding or GELU
        before 2.11: PR #176436; reflection padding under ``dynamic=True`` on 2.9: pytorch#169643; ``dynamic``:
        the region was compiled with ``dynamic=True``). ``InductorError`` (kind ``compile``)."""
        from mpsready.ops.judge import Judgement

        rules = self._api("compile")
        ops = list(ops)
        if rules and rules[0]["outcome"] == "supported":
            from packaging.specifiers import SpecifierSet
            from packaging.version import Version

            for rule in _COMPILE_REFUSED:
                if Version(self.torch) not in SpecifierSet(rule["torch"]) or (rule.get("dynamic") and not dynamic):
                    continue
                dtypes, kinds = rule.get("dtypes"), rule.get("kinds")
                if any(op in rule["ops"] and (dtypes is None or dtype in dtypes) and (kinds is None or kind in kinds)
                       for op, dtype, kind in ops):
                    return Judgement(op="torch.compile", outcome="error", kind=KIND_COMPILE,
                                     exception="InductorError", message=rule["message"], named="torch.compile",
                                     fixed_in=rule["fixed_in"], source=rule["source"])
        if rules and rules[0]["outcome"] in ("experimental", "supported"):
            mined = self._inductor_refusal(ops, dynamic)
            if mined is not None:
                return mined
        if not rules or rules[0]["outcome"] != "experimental":
            return None
        long = sorted({op for op, _dtype, kind in ops if kind == "long_reduction"})
        if not long:
            return None
        return Judgement(op="torch.compile", outcome="error", kind=KIND_COMPILE, exception="InductorError",
                         message="SyntaxError: failed to compile", named="torch.compile", fixed_in="2.8.0",
                         source="https://github.com/pytorch/pytorch/issues/152155 (torch 2.7.0, a multistage "
                                "reduction's Metal shader); fix https://github.com/pytorch/pytorch/pull/153362")

    def _inductor_refusal(self, ops: list[tuple[str, str, str]], dynamic: bool = False) -> Judgement | None:
        """What this release's own ``torch/_inductor/codegen/mps.py`` raises on the region, as mined
        (``ops/inductor.py``, data/mined/inductor_mps.json, every release read in its wheel): a buffer dtype outside
        its ``DTYPE_TO_METAL`` (``KeyError: torch.uint16`` before 2.14: the unsigned 16/32/64-bit types are keys from
        2.14.0; complex types are left to :meth:`compile_region`, Inductor may fall back to aten for them), a
        Welford reduction whose multistage form the release asserts away (2.7's ``welford_reduce``), and a split
        Welford reduction on a release without ``welford_combine`` (2.7: ``NotImplementedError: welford_combine``;
        PR #151152, 2025-04-12, after the 2.7 cut, added it), and, under ``dynamic=True``, a Welford reduction on a
        release whose ``welford_reduce`` branch prints its symbolic buffer size raw (2.9.0-2.12.1: ``Min(1024,
        r0_numel)`` in the Metal source, ``use of undeclared identifier 'Min'``; PR #184206, 2.13.0 prints it as
        Metal). None when nothing is known to be refused."""
        from mpsready.ops import inductor
        from mpsready.ops.judge import Judgement

        facts = inductor.facts(self.torch)
        if facts is None:
            return None
        src = facts["source"]
        where = f"torch/_inductor/codegen/mps.py of {src['wheel']} (sha256 {src['sha256'][:12]}, read)"

        def refused(message: str, fixed_in: str | None, why: str) -> Judgement:
            return Judgement(op="torch.compile", outcome="error", kind=KIND_COMPILE, exception="InductorError",
                             message=message, named="torch.compile", fixed_in=fixed_in, source=f"{where}: {why}")

        metal = set(facts["metal_dtypes"])
        for dtype in sorted({dtype for _op, dtype, _kind in ops}):
            if dtype and dtype not in metal and dtype.startswith(("uint", "int", "float64")):
                first = _first_release(lambda f, d=dtype: d in f["metal_dtypes"])
                why = f"DTYPE_TO_METAL has no torch.{dtype} (MetalKernel.dtype_to_str)"
                if dtype == "float64":  # a float64 CPU tensor moved to MPS with a cast, inside the region
                    why += (": the _to_copy decomposition puts the float64 buffer on MPS before the cast (no "
                            "float64 check for mps in torch/_decomp/decompositions.py, read in the 2.7.1, 2.12.1 "
                            "and 2.13.0 wheels); ComfyUI-TeaCache#26 (a compiled rope in float64)")
                return refused(f"KeyError: torch.{dtype}", first, why)
        lacking = inductor.unlowerable(self.torch, {op for op, _dtype, kind in ops if kind == "pointwise"})
        if lacking is not None:
            op, method, read = lacking
            sha = inductor.load_ops()["releases"][read]["source"]["torch/_inductor/codegen/mps.py"][:12]
            return Judgement(
                op="torch.compile", outcome="error", kind=KIND_COMPILE, exception="InductorError",
                message="NotImplementedError: ", named="torch.compile", fixed_in=None,
                source=(f"torch/_inductor/codegen/mps.py (sha256 {sha}), codegen/common.py and ops_handler.py of the "
                        f"torch {read} wheel (read; python -m mpsready.ops.build.inductor_ops): Inductor lowers {op} "
                        f"to ops.{method}, which MetalOverrides does not implement, so OpsHandler's abstract "
                        "method raises NotImplementedError"))
        kinds = {kind for _op, _dtype, kind in ops}
        if "welford_split" in kinds and "welford_combine" not in facts["reductions"]:
            return refused("NotImplementedError: welford_combine",
                           _first_release(lambda f: "welford_combine" in f["reductions"]),
                           "no welford_combine branch in the kernel's reduction(): a split variance or norm's "
                           "second stage reaches raise NotImplementedError(reduction_type)")
        printed = facts.get("symbolic_size_printed", {}).get("welford_reduce")
        if dynamic and printed and any(kind.startswith("welford") for kind in kinds):
            return refused(f"use of undeclared identifier '{printed}'", _later_release(
                self.torch, lambda f: "welford_reduce" not in f.get("symbolic_size_printed", {})),
                "_reduction_nocache assigns acc_buf_size = sympy.Min(...) and the welford_reduce branch formats "
                "acc_buf_size itself into the kernel source: with a dynamic reduction length (a symbolic size, "
                "always the looped form) the Metal compiler reads the sympy call; "
                "https://github.com/pytorch/pytorch/pull/184206 (a compiled x.var(dim=-1) with dynamic=True)")
        message = facts["multistage_refused"].get("welford_reduce")
        if "welford_multistage" in kinds and message:
            return refused(f"AssertionError: {message}",
                           _first_release(lambda f: "welford_reduce" not in f["multistage_refused"]),
                           "the welford_reduce branch asserts not self.multistage_reduction")
        return None

    def compile_region(self, ops: Iterable[tuple[str, str, str]]) -> str | None:
        """Whether the emulated Mac can vouch for a region compiled by ``torch.compile`` (Inductor) on MPS
        that this release lets through (2.7 and later, :meth:`compile`): ``ops`` are the region's aten calls as
        ``(op, dtype, kind)`` with kind ``pointwise``, ``view`` or ``other``. Returns None when it can, else the
        reason it cannot (the run's outcome is then ``unverified``, never ``completed``).

        The region runs eagerly here, so its aten calls are judged; what is not emulated is Inductor's Metal
        code generation. Its source calls itself "an early prototype that shows that one can compile elementwise
        ops into a Metal shader" (header of torch/_inductor/codegen/mps.py, stored copies 2.7-2.9), and public
        reports show it refusing graphs beyond that (reductions, bfloat16 kernels: issue 33). So a region is
        vouched for only from 2.8 (no prototype warning), when every call in it is elementwise (the ``pointwise``
        tag of native_functions.yaml), a view, a reduction (the ``reduction`` tag; reductions longer than one
        1024-thread threadgroup are multistage, fixed in MPSInductor by PRs #148975, 2025-03, and #153362, 2025-05:
        2.8 inferred; pytorch#152155 on 2.7.0 fails there), or one of the extern kernels Inductor leaves to
        aten (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``linear``, ``_mps_convolution``: judged above as aten
        calls), or a composite Inductor decomposes into those (softmax, layer/RMS norm, embedding, SDPA's math
        path, cat), in float32, float16 or an integer dtype, and bfloat16 from 2.11 (bare float literals assigned
        to ``bfloat`` in generated Metal were fixed for 2.11 by PR #176436, cherry-picked to release/2.11 as
        #177193). Anything else, or any region on 2.7 (the prototype), is reported unverified."""
        rules = self._api("compile")
        outcome = rules[0]["outcome"] if rules else None
        if outcome not in ("experimental", "supported"):  # refused at the first call, or eager by suppress_errors
            return None
        if outcome == "experimental":
            return (f"torch {self.torch}: Inductor's Metal back-end is a prototype (codegen/mps.py warns so); which "
                    "graphs it lowers is not emulated (the region ran eagerly here)")
        ops = list(ops)
        unsure = self._compile_unsure(ops)
        if unsure is not None:
            return unsure
        others = sorted({op for op, dtype, kind in ops if kind == "other" and op not in _COMPILE_EXTERN
                         and op not in _COMPILE_DECOMPOSED})
        lowp = ("float32", "float16", "bool", "int64", "int32") + (("bfloat16",) if versions.release(self.torch)
                                                                   >= (2, 11) else ())
        dtypes = sorted({dtype for _op, dtype, kind in ops if kind != "view" and dtype and dtype not in lowp})
        if not others and not dtypes:
            return None
        what = []
        if others:
            shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
            what.append(f"non-elementwise ops ({shown})")
        if dtypes:
            what.append(f"dtype {', '.join(dtypes)}")
        return (f"compiled region with {' and '.join(what)}: Inductor's Metal code generation of such graphs "
                f"(other kernels, bfloat16 before 2.11) is not emulated, and torch {self.torch} may refuse it")

    def _compile_unsure(self, ops: list[tuple[str, str, str]]) -> str | None:
        """The reason a region is not vouched for when a known refusal of this release (``_COMPILE_REFUSED``) covers
        some kinds of a call and its source leaves the call's kind open (``unsure``: a split train-mode batch norm
        on 2.12, whose looped form PR #184502 shows refused), else None."""
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        for rule in _COMPILE_REFUSED:
            unsure = rule.get("unsure")
            if not unsure or Version(self.torch) not in SpecifierSet(rule["torch"]):
                continue
            hit = sorted({f"{op} ({kind})" for op, _dtype, kind in ops if op in rule["ops"] and kind in unsure})
            if hit:
                return (f"compiled region with {', '.join(hit)}: torch {self.torch}'s Inductor is known to refuse "
                        f"other forms of this reduction ({rule['message']}), and whether it compiles this one "
                        f"correctly is not established ({rule['source'].split(' ', 1)[0]})")
        return None

    def compile(self, on_mps: bool, suppress_errors: bool = False) -> Judgement | None:
        """The first call of a function compiled by ``torch.compile`` (Inductor), with MPS tensors among its
        inputs or the module's parameters (``on_mps``): an ``error`` (``BackendCompilerFailed``, kind
        ``compile``, fixed in 2.7.0) before 2.7 unless ``torch._dynamo.config.suppress_errors``; ``warns`` with
        2.7's prototype warning; None otherwise (a CPU graph is not judged). Source: torch/_inductor/scheduler.py
        and codegen/mps.py of each release (python_checks.yaml ``compile``)."""
        from mpsready.ops.judge import Judgement

        rules = self._api("compile")
        if not rules or not on_mps:
            return None
        entry = rules[0]
        if entry["outcome"] == "unsupported" and not suppress_errors:
            return Judgement(op="torch.compile", outcome="error", kind=KIND_COMPILE,
                             exception="BackendCompilerFailed", message=entry["message"], named="torch.compile",
                             fixed_in="2.7.0", source=entry["source"])
        if entry["outcome"] == "experimental":
            return Judgement(op="torch.compile", outcome="warns", kind=KIND_COMPILE, message=entry["warning"],
                             named="torch.compile", source=entry["source"])
        return None
