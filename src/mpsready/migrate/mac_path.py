"""What an edit that turns mixed precision on for MPS needs, from the shipped ops tables.

The original ``torch.cuda.amp`` calls (and ``autocast("cuda")``, ``GradScaler()``) disable themselves on a
machine without CUDA, so on a Mac they ran in float32 with an inert scaler (PyTorch 2.13.0
torch/amp/autocast_mode.py and torch/amp/grad_scaler.py warn and set ``enabled=False``). A rewrite keyed on
the device type turns them on for MPS; these helpers say from which PyTorch release that works, by asking
:mod:`mpsready.ops` rather than holding version numbers here.
"""

from __future__ import annotations

from functools import lru_cache

from mpsready.ops.api import load_db, shipped_versions

# torch.amp.GradScaler (device first) exists from PyTorch 2.3 (torch/amp/grad_scaler.py added in 2.3.0); before it
# only torch.cuda.amp.GradScaler
TORCH_AMP_GRADSCALER = (2, 3)

# GradScaler.unscale_/update dispatch these two (PyTorch 2.13.0 torch/amp/grad_scaler.py _unscale_grads_, update)
GRADSCALER_OPS = ("aten::_amp_foreach_non_finite_check_and_unscale_", "aten::_amp_update_scale_")


def vtuple(text: str) -> tuple[int, ...]:
    """``(2, 8, 0)`` for ``"2.8.0"`` (a local tag such as ``+cpu`` is dropped)."""
    return tuple(int(p) for p in text.split("+")[0].split(".") if p.isdigit())


@lru_cache(maxsize=None)
def gradscaler_release() -> str | None:
    """First shipped release where every op of ``GRADSCALER_OPS`` has an MPS kernel (``kernel_since`` in the
    newest shipped table); ``None`` when one never has."""
    db = load_db(shipped_versions()[-1])
    since = [db.lookup(op).kernel_since for op in GRADSCALER_OPS]
    if any(s is None for s in since):
        return None
    return max(since, key=vtuple)  # type: ignore[arg-type]


@lru_cache(maxsize=None)
def autocast_release() -> str | None:
    """First shipped release whose table lists AutocastMPS registrations (``SupportDB.autocast_mps``);
    ``None`` when no shipped table lists them. Earlier tables may lack the list because it was not recovered
    from the binary (their ``autocast_mps_note`` says so), so this is the first release known to have it."""
    for release in shipped_versions():
        if load_db(release).autocast_mps:
            return release
    return None


def floor_allows(floor: tuple[int, int] | None, release: str | None) -> bool:
    """Whether every PyTorch the project's floor admits (``floor`` = (major, minor), i.e. from ``major.minor.0``)
    is at least ``release``; False for an undeclared floor or an unknown release."""
    if floor is None or release is None:
        return False
    return floor + (0,) >= vtuple(release)


def floor_text(floor: tuple[int, int] | None) -> str:
    return "not declared" if floor is None else f"{floor[0]}.{floor[1]}"
