"""``mpsready ops --dump-installed``: observe the installed PyTorch's MPS dispatcher (on a Mac) as a table.

The dispatcher sits behind :class:`Dispatcher` so the logic runs with a fake here (no Mac). The real one,
:class:`TorchDispatcher`, uses ``torch._C._dispatch_get_all_op_names()``,
``torch._C._dispatch_has_kernel_for_dispatch_key(name, key)`` and ``torch._C._dispatch_dump_table(name)``
(whose ``MPS: registered at <file>:<line> [kernel]`` line tells MPSFallback.mm registrations apart).

Only meaningful on macOS with an MPS build: on the Linux CPU wheel every op answers False for "MPS"
(research note §9 pitfall 8), so :func:`check_platform` refuses anywhere else.
"""

from __future__ import annotations

import platform
import sys
from typing import Any, Protocol

from mpsready.ops.format import SCHEMA_NAME, SCHEMA_VERSION

COMPOSITE_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")


class NotOnMac(Exception):
    """Raised when the live dispatcher cannot say anything about MPS here."""


class Dispatcher(Protocol):
    """What the dump needs from a PyTorch runtime."""

    torch_version: str

    def op_names(self) -> list[str]:
        """Every registered operator overload, ``"aten::add.Tensor"`` style."""

    def has_kernel(self, op: str, key: str) -> bool:
        """``torch._C._dispatch_has_kernel_for_dispatch_key(op, key)``."""

    def registration(self, op: str, key: str) -> str | None:
        """Where the kernel for ``key`` was registered (``".../MPSFallback.mm:123"``), or None."""

    def mps_available(self) -> tuple[bool, bool]:
        """``(torch.backends.mps.is_built(), torch.backends.mps.is_available())``."""


class PlatformProbe(Protocol):
    """What :func:`check_platform` needs: the release and whether it is built with MPS (a :class:`Dispatcher`
    is one; so is a stand-in that imports no torch)."""

    torch_version: str

    def mps_available(self) -> tuple[bool, bool]:
        """``(torch.backends.mps.is_built(), torch.backends.mps.is_available())``."""


class TorchDispatcher:
    """The real dispatcher of the installed torch (imports torch on construction)."""

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self.torch_version = torch.__version__

    def op_names(self) -> list[str]:
        return sorted(self._torch._C._dispatch_get_all_op_names())

    def has_kernel(self, op: str, key: str) -> bool:
        try:
            return bool(self._torch._C._dispatch_has_kernel_for_dispatch_key(op, key))
        except RuntimeError:  # a key name this torch does not know (e.g. an older release)
            return False

    def registration(self, op: str, key: str) -> str | None:
        for line in self._torch._C._dispatch_dump_table(op).splitlines():
            head, _, rest = line.partition(": registered at ")
            if head.strip() == key and rest:
                return rest.rsplit(" [", 1)[0].strip()
        return None

    def mps_available(self) -> tuple[bool, bool]:
        mps = self._torch.backends.mps
        return bool(mps.is_built()), bool(mps.is_available())


def check_platform(dispatcher: PlatformProbe, system: str | None = None) -> None:
    """Raise :class:`NotOnMac` unless this is macOS with an MPS-built torch."""
    system = system or sys.platform
    if system != "darwin":
        raise NotOnMac(
            "--dump-installed reads the live MPS dispatcher and only works on macOS with an MPS build of "
            f"PyTorch; this is {system}. On Linux the CPU wheel answers 'no MPS kernel' for every op "
            "(research note §9 pitfall 8), so a dump here would be all wrong. Use the shipped tables "
            "(mpsready ops OP --torch V) instead.")
    built, _available = dispatcher.mps_available()
    if not built:
        raise NotOnMac(f"torch {dispatcher.torch_version} is not built with MPS (torch.backends.mps.is_built() "
                       "is False): its dispatcher has no MPS kernels to read.")


def classify(dispatcher: Dispatcher, op: str) -> tuple[str, str]:
    """(status, how) of one overload as the live dispatcher sees it."""
    if dispatcher.has_kernel(op, "MPS"):
        where = dispatcher.registration(op, "MPS") or ""
        if "MPSFallback.mm" in where:
            status = "guard" if op.split("::", 1)[-1].startswith("_slow_conv2d_forward") else "cpu_fallback_always"
            return status, f"observed:{where}"
        return "kernel", f"observed:{where}" if where else "observed:dispatcher"
    for key in COMPOSITE_KEYS:
        if dispatcher.has_kernel(op, key):
            return "composite", f"observed:{key}"
    return "missing", "observed:no MPS kernel"


def dump(dispatcher: Dispatcher, shipped: Any | None = None, macos: str | None = None,
         machine: str | None = None, created: str | None = None) -> dict[str, Any]:
    """A table in the shipped format (``format.py``) with ``basis: "observed"``.

    ``shipped`` (a :class:`~mpsready.ops.api.SupportDB` of the same release, when one exists) supplies the
    CUDA column, core/sparse flags and the global rules, each still marked with its source.
    """
    ops: dict[str, dict[str, Any]] = {}
    for name in dispatcher.op_names():
        ns, _, key = name.partition("::")
        if ns != "aten":
            continue
        status, how = classify(dispatcher, name)
        rec: dict[str, Any] = {"s": status, "h": how, "c": "unknown", "src": ["observed"]}
        if dispatcher.has_kernel(name, "SparseMPS"):
            rec["sp"] = 1
        base = shipped.raw(key) if shipped is not None else None
        if base is not None:
            rec["c"] = base["c"]
            if base.get("core"):
                rec["core"] = 1
        ops[key] = rec
    _, available = dispatcher.mps_available()
    where = {"system": "macOS", "macos": macos or platform.mac_ver()[0] or None,
             "machine": machine or platform.machine(), "mps_available": available}
    doc: dict[str, Any] = {
        "schema": {"name": SCHEMA_NAME, "version": SCHEMA_VERSION},
        "basis": "observed",
        "observed_on": where,
        "torch": dispatcher.torch_version.split("+")[0],
        "torch_full_version": dispatcher.torch_version,
        "wheel": {"name": "installed", "sha256": None},
        "sources": {"observed": f"live dispatcher of torch {dispatcher.torch_version} on macOS {where['macos']} "
                                f"({where['machine']}): torch._C._dispatch_has_kernel_for_dispatch_key / "
                                "_dispatch_dump_table"},
        "counts": {"status": _count(ops)},
        "ops": ops,
    }
    if created:
        doc["created"] = created
    if shipped is not None:
        src = shipped._doc
        for field in ("min_macos", "min_macos_source", "dtype_rules", "size_limits", "fallback", "routing",
                      "autocast_mps"):
            doc[field] = src[field]
        doc["predicted_fields_from"] = f"shipped table torch {shipped.torch_version} (basis: predicted)"
    else:
        doc.update(min_macos=None, min_macos_source="no shipped table for this release", dtype_rules=[],
                   size_limits=[], fallback={}, routing={}, autocast_mps=[])
    return doc


def _count(ops: dict[str, dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for rec in ops.values():
        out[rec["s"]] = out.get(rec["s"], 0) + 1
    return dict(sorted(out.items()))


def compare(observed: dict[str, Any], shipped: Any) -> list[dict[str, str]]:
    """Overloads whose observed status differs from the shipped prediction (ignores ops absent from either)."""
    out = []
    for key, rec in observed["ops"].items():
        base = shipped.raw(key)
        if base is not None and base["s"] != rec["s"]:
            out.append({"op": f"aten::{key}", "predicted": base["s"], "observed": rec["s"]})
    return out
