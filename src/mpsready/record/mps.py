"""The MPS-specific calls of ``record``, behind one small interface (:class:`MPSBackend`).

There is no Mac on the machines that build mpsready, so everything MPS does is reached
through :class:`MPSBackend`; :class:`TorchMPS` is the real one, and the tests use a fake
that reproduces MPS behaviour (the texts below, ``is_built``/``is_available`` combinations,
per-operator kernel tables).

PyTorch API used, as documented for PyTorch 2.13 (https://docs.pytorch.org/docs/2.13/):

* ``torch.backends.mps.is_built()`` / ``is_available()`` (backends.html#torch-backends-mps);
  meaning of each combination: :data:`mpsready.env.torchinfo.MPS_MEANING` (notes/mps.html).
* ``torch.mps.synchronize()``, ``torch.mps.current_allocated_memory()`` ("the current GPU memory
  occupied by tensors in bytes"), ``torch.mps.driver_allocated_memory()`` ("total GPU memory
  allocated by Metal driver for the process in bytes") (mps.html).
* ``torch._C._dispatch_has_kernel_for_dispatch_key(op, key)``: whether ``op`` has a kernel
  registered directly for dispatch key ``key`` (private, present 1.13 to 2.14; see
  torch/_C/__init__.pyi). An operator falls back to the CPU on MPS exactly when the
  dispatcher finds no MPS kernel and no composite kernel for it, so it reaches the MPS
  backend fallback (c10/core/impl/OperatorEntry.cpp ``computeDispatchTableEntryWithDebug``,
  precedence: backend kernel, CompositeExplicitAutogradNonFunctional, CompositeExplicitAutograd,
  CompositeImplicitAutograd, backend fallback). That fallback is ``mps_fallback`` when
  ``PYTORCH_ENABLE_MPS_FALLBACK`` was set at library load, else ``mps_error_fallback``
  (aten/src/ATen/mps/MPSFallback.mm). A few operators are registered *to* the CPU fallback
  explicitly there and always run on the CPU (:data:`CPU_FALLBACK_ALWAYS`).
* The fallback warning is ``TORCH_WARN_ONCE``: once per operator per process, so it is
  never used to count calls; :class:`FallbackCounter` counts every call instead.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Protocol

from mpsready.env.torchinfo import mps_meaning

# Exact texts PyTorch prints (MPSFallback.mm and Copy.mm / MPS tensor conversion, 2.3 to 2.14).
FALLBACK_WARNING = ("The operator '{op}' is not currently supported on the MPS backend and will fall back to "
                    "run on the CPU. This may have performance implications.")
# As printed by PyTorch <= 2.5 (quoted verbatim in user reports, e.g. the CAREamics FAQ); 2.6+ points
# to issue #141287 instead of #77764 (research/mps_support_data.md §2.3). Matching uses only the
# stable middle part ("is not currently implemented for the MPS device").
NOT_IMPLEMENTED = ("The operator '{op}' is not currently implemented for the MPS device. If you want this op to "
                   "be added in priority during the prototype phase of this feature, please comment on "
                   "https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the "
                   "environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. "
                   "WARNING: this will be slower than running natively on MPS.")
FLOAT64_REFUSAL = ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
                   "Please use float32 instead.")
_FALLBACK_MARK = "is not currently supported on the MPS backend and will fall back to run on the CPU"
_NOT_IMPL_MARK = "is not currently implemented for the MPS device"
_FLOAT64_MARK = "MPS framework doesn't support float64"

# Registered to the boxed CPU fallback in MPSFallback.mm, so they run on the CPU even though
# the dispatcher has an "MPS kernel" for them. Per release (research/mps_support_data.md §2.3,
# measured from the macOS wheels): 2.8.0-2.13.0 all three; 2.14.1 only embedding_renorm_.
CPU_FALLBACK_ALWAYS = frozenset({"aten::embedding_renorm_", "aten::linalg_svd", "aten::linalg_svd.U"})
COMPOSITE_KEYS = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd",
                  "CompositeImplicitAutograd")


class MPSBackend(Protocol):
    """What ``record`` needs from MPS (real: :class:`TorchMPS`; tests: a fake)."""

    name: str
    device_type: str  # the tensor device type whose operators are checked ("mps")

    def is_built(self) -> bool: ...

    def is_available(self) -> bool: ...

    def has_kernel(self, op: str, dispatch_key: str) -> bool: ...

    def synchronize(self) -> None: ...

    def current_allocated_memory(self) -> int: ...

    def driver_allocated_memory(self) -> int: ...


class TorchMPS:
    """The real MPS backend, through the documented calls listed in the module docstring."""

    name = "torch.mps"
    device_type = "mps"

    def is_built(self) -> bool:
        import torch

        return bool(torch.backends.mps.is_built())

    def is_available(self) -> bool:
        import torch

        return bool(torch.backends.mps.is_available())

    def has_kernel(self, op: str, dispatch_key: str) -> bool:
        import torch

        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(op, dispatch_key))

    def synchronize(self) -> None:
        import torch

        torch.mps.synchronize()

    def current_allocated_memory(self) -> int:
        import torch

        return int(torch.mps.current_allocated_memory())

    def driver_allocated_memory(self) -> int:
        import torch

        return int(torch.mps.driver_allocated_memory())


def unavailable_reason(backend: MPSBackend) -> str | None:
    """``None`` when MPS can be used; else why not, with the documented meaning of the combination."""
    built, available = backend.is_built(), backend.is_available()
    if built and available:
        return None
    return (f"MPS is not usable here (torch.backends.mps.is_built()={built}, is_available()={available}): "
            + mps_meaning(built, available))


def falls_back(backend: MPSBackend, op: str) -> bool:
    """True when ``op`` (``"aten::name.overload"``) runs through the CPU fallback on MPS (module docstring)."""
    if op in CPU_FALLBACK_ALWAYS:
        return True
    if backend.has_kernel(op, "MPS"):
        return False
    return not any(backend.has_kernel(op, key) for key in COMPOSITE_KEYS)


def op_name(func: Any) -> str:
    """An OpOverload's schema name, ``"aten::add.Tensor"`` (``"aten::relu"`` for default overloads)."""
    name = func.name()
    return name[: -len(".default")] if name.endswith(".default") else name


def _tensors(obj: Any) -> Iterable[Any]:
    import torch

    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


class FallbackCounter:
    """Counts, per operator and per stage, the calls on ``backend.device_type`` tensors that fall back.

    Use ``with counter.active(stage):`` around code running on the device. A call counts when
    one of its tensor arguments lives on the backend's device type and :func:`falls_back` says
    the operator has no MPS (nor composite) kernel. Lookups are cached per operator.
    """

    def __init__(self, backend: MPSBackend):
        self.backend = backend
        self.calls: Counter[str] = Counter()
        self.by_stage: dict[str, Counter[str]] = {}
        self._cache: dict[str, bool] = {}
        self._stage = "?"

    def observe(self, func: Any, args: tuple, kwargs: dict) -> None:
        name = op_name(func)
        fb = self._cache.get(name)
        if fb is None:
            fb = self._cache[name] = falls_back(self.backend, name)
        if not fb:
            return
        if any(t.device.type == self.backend.device_type for t in _tensors((args, kwargs))):
            self.calls[name] += 1
            self.by_stage.setdefault(self._stage, Counter())[name] += 1

    def set_stage(self, stage: str) -> None:
        self._stage = stage

    def active(self, stage: str) -> Any:
        self.set_stage(stage)
        from mpsready.record.randomness import observing_mode

        return observing_mode([self])

    def to_dict(self) -> dict[str, Any]:
        return {"calls": dict(sorted(self.calls.items())),
                "by_stage": {s: dict(sorted(c.items())) for s, c in self.by_stage.items()}}


def parse_fallback_warning(message: str) -> str | None:
    """The operator named by a CPU-fallback warning (:data:`FALLBACK_WARNING`), else ``None``."""
    if _FALLBACK_MARK not in message:
        return None
    return _quoted(message)


def classify_error(message: str | None) -> tuple[str | None, str | None]:
    """``(kind, operator)`` of an MPS error text: ``("float64_refused", None)``,
    ``("op_not_implemented", "aten::x")`` or ``(None, None)`` for anything else."""
    if not message:
        return None, None
    if _FLOAT64_MARK in message:
        return "float64_refused", None
    if _NOT_IMPL_MARK in message:
        return "op_not_implemented", _quoted(message)
    return None, None


def _quoted(message: str) -> str | None:
    _, sep, rest = message.partition("'")
    name, sep2, _ = rest.partition("'")
    return name if sep and sep2 and name else None
