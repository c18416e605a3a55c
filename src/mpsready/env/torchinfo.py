"""PyTorch facts for the environment record: version, build, MPS, CUDA, precision settings.

Every function works when PyTorch is absent (``torch_facts()`` then says so) and never
initialises CUDA more than asking for device properties.

Sources (PyTorch 2.13 documentation, https://docs.pytorch.org/docs/2.13/):

* ``torch.backends.mps.is_built()``: "Return whether PyTorch is built with MPS support. Note
  that this doesn't necessarily mean MPS is available; just that if this PyTorch binary were
  run a machine with working MPS drivers and devices, we would be able to use it."
  ``torch.backends.mps.is_available()``: "Return a bool indicating if MPS is currently
  available." (backends.html#torch-backends-mps; same text in torch/backends/mps/__init__.py, 2.13.0)
* The MPS backend notes (notes/mps.html) tell the two "not available" cases apart: not built
  means "the current PyTorch install was not built with MPS enabled"; built but not available
  means "the current MacOS version is not 12.3+ and/or you do not have an MPS-enabled device
  on this machine".
* Precision: ``torch.get_float32_matmul_precision()`` ("highest" = full float32; "high"/"medium"
  allow TF32/bfloat16 internally), ``torch.backends.cuda.matmul.allow_tf32``,
  ``torch.backends.cudnn.allow_tf32`` (default True), ``torch.are_deterministic_algorithms_enabled()``
  (notes/numerical_accuracy.html, notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices,
  notes/randomness.html).
"""

from __future__ import annotations

from typing import Any

MPS_DOC_SOURCE = ("PyTorch 2.13 docs: backends.html#torch-backends-mps (is_built, is_available) and "
                  "notes/mps.html (MPS backend notes); torch/backends/mps/__init__.py 2.13.0")

# The documented meaning of each (is_built, is_available) combination.
MPS_MEANING: dict[tuple[bool, bool], str] = {
    (False, False): "this PyTorch build has no MPS support (not built with MPS): MPS cannot be used with this install",
    (True, False): "PyTorch has MPS support but MPS is not available here: macOS older than 12.3, no "
                   "MPS-capable (Apple silicon/AMD) GPU, or an x86_64 Python under Rosetta",
    (True, True): "MPS is built and available: tensors can be placed on device 'mps'",
    (False, True): "inconsistent (available without being built); should not happen",
}


def mps_meaning(built: bool | None, available: bool | None) -> str:
    if built is None or available is None:
        return "unknown: PyTorch is not installed or could not be queried"
    return MPS_MEANING[(bool(built), bool(available))]


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:  # a broken or partial torch build must not break the env record
        return default


def torch_facts() -> dict[str, Any]:
    """``{"installed": False, "error": ...}`` without torch; else version, build, MPS and CUDA facts."""
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising OSError
        return {"installed": False, "error": f"{type(exc).__name__}: {exc}",
                "mps": {"built": None, "available": None, "meaning": mps_meaning(None, None),
                        "source": MPS_DOC_SOURCE}}
    built = _safe(lambda: bool(torch.backends.mps.is_built()))
    available = _safe(lambda: bool(torch.backends.mps.is_available()))
    mps: dict[str, Any] = {"built": built, "available": available, "meaning": mps_meaning(built, available),
                           "source": MPS_DOC_SOURCE}
    if available:
        mps["device_name"] = _safe(lambda: torch.backends.mps.get_name())
        mps["gpu_cores"] = _safe(lambda: torch.backends.mps.get_core_count())
        mps["recommended_max_memory_bytes"] = _safe(lambda: int(torch.mps.recommended_max_memory()))
    cuda_available = bool(_safe(lambda: torch.cuda.is_available(), False))
    devices = []
    if cuda_available:
        for i in range(_safe(lambda: torch.cuda.device_count(), 0)):
            p = _safe(lambda i=i: torch.cuda.get_device_properties(i))
            if p is not None:
                devices.append({"index": i, "name": p.name, "capability": f"{p.major}.{p.minor}",
                                "total_memory_bytes": int(p.total_memory)})
    return {
        "installed": True,
        "version": torch.__version__,
        "git_version": _safe(lambda: torch.version.git_version),
        "debug": _safe(lambda: bool(torch.version.debug)),
        "cuda_version": _safe(lambda: torch.version.cuda),
        "hip_version": _safe(lambda: torch.version.hip),
        "cudnn_version": _safe(lambda: torch.backends.cudnn.version()) if cuda_available else None,
        "mps": mps,
        "cuda": {"available": cuda_available, "device_count": len(devices), "devices": devices},
    }


def precision_settings() -> dict[str, Any]:
    """The settings in force that change float results; empty without torch (sources: module docstring)."""
    try:
        import torch
    except Exception:
        return {}
    return {
        "float32_matmul_precision": _safe(torch.get_float32_matmul_precision),
        "cuda_matmul_allow_tf32": _safe(lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
        "cuda_matmul_allow_fp16_reduced_precision_reduction":
            _safe(lambda: bool(torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)),
        "cuda_matmul_allow_bf16_reduced_precision_reduction":
            _safe(lambda: bool(torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)),
        "cudnn_allow_tf32": _safe(lambda: bool(torch.backends.cudnn.allow_tf32)),
        "cudnn_benchmark": _safe(lambda: bool(torch.backends.cudnn.benchmark)),
        "cudnn_deterministic": _safe(lambda: bool(torch.backends.cudnn.deterministic)),
        "deterministic_algorithms": _safe(lambda: bool(torch.are_deterministic_algorithms_enabled())),
        "deterministic_warn_only": _safe(lambda: bool(torch.is_deterministic_algorithms_warn_only_enabled())),
        "default_dtype": _safe(lambda: str(torch.get_default_dtype()).replace("torch.", "")),
        "num_threads": _safe(torch.get_num_threads),
    }
