"""The texts MPS prints, per PyTorch release: the error of an op without an MPS kernel, the CPU-fallback
warning, the dispatcher error on the SparseMPS key, and the dtype refusals at allocation.

Shared by ``trace`` (predicted findings) and the emulated device (``mpsready run``), so both quote PyTorch
with the same words. Sources are named on each function.
"""

from __future__ import annotations

from mpsready import versions

ISSUE_NEW = "https://github.com/pytorch/pytorch/issues/141287"  # message of 2.6+ (MPSFallback.mm)
ISSUE_OLD = "https://github.com/pytorch/pytorch/issues/77764"  # message up to 2.5


def not_implemented_message(op: str, torch_version: str) -> str:
    """The NotImplementedError text MPS raises for ``op`` without a kernel (MPSFallback.mm):
    issue #141287 from PyTorch 2.6 on, #77764 up to 2.5."""
    new = versions.release(torch_version)[:2] >= (2, 6)
    if new:
        return (f"NotImplementedError: The operator '{op}' is not currently implemented for the MPS device. If you "
                f"want this op to be considered for addition please comment on {ISSUE_NEW} and mention use-case, "
                "that resulted in missing op as well as commit hash <build hash>. As a temporary fix, you can set "
                "the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. "
                "WARNING: this will be slower than running natively on MPS.")
    return (f"NotImplementedError: The operator '{op}' is not currently implemented for the MPS device. If you want "
            "this op to be added in priority during the prototype phase of this feature, please comment on "
            f"{ISSUE_OLD}. As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` "
            "to use the CPU as a fallback for this op. WARNING: this will be slower than running natively on MPS.")


def fallback_warning(op: str) -> str:
    """The UserWarning of PyTorch's MPS CPU fallback (MPSFallback.mm, 2.0+)."""
    return (f"UserWarning: The operator '{op}' is not currently supported on the MPS backend and will fall back to "
            "run on the CPU. This may have performance implications.")


def sparse_message(op: str) -> str:
    """The dispatcher error for a sparse tensor on MPS without a SparseMPS kernel (pytorch#141711)."""
    return f"NotImplementedError: Could not run '{op}' with arguments from the 'SparseMPS' backend."
