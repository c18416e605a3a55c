"""API102: ``torch.cuda`` calls get their ``torch.mps`` equivalent (transforms/torch_cuda_api.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Floor, Spec
from mpsready.rules import AutoFix

# API102 names rewritten as a statement (the MPS statement, None: only the CUDA guard) or inside an expression
STATEMENTS = {
    "synchronize": "torch.mps.synchronize()",
    "empty_cache": "torch.mps.empty_cache()",
    "manual_seed": "torch.mps.manual_seed({args})",
    "manual_seed_all": "torch.mps.manual_seed({args})",
    "seed": "torch.mps.seed()",
    "seed_all": "torch.mps.seed()",
    "set_device": None,
    "reset_peak_memory_stats": None,
    "reset_max_memory_allocated": None,
    "set_per_process_memory_fraction": None,
    "ipc_collect": None,
}
QUERIES = {
    "memory_allocated": "torch.mps.current_allocated_memory()",
    "memory_reserved": "torch.mps.driver_allocated_memory()",
}
# info-level findings of these rules need no change on a Mac: they count as kept. migrate still adds the torch.mps
# equivalent beside them where it can, as an edit no finding requires; the re-scan reports them as info again
# (inside the CUDA check it adds), so counting them as fixed would promise a change the re-scan never shows.
HARMLESS_WHEN_INFO = {
    "API102": "harmless on a Mac (does nothing there); migrate adds the torch.mps equivalent where one exists",
}

FIXES = {
    "API102": AutoFix("`synchronize`, `empty_cache`, `manual_seed(_all)`, `seed(_all)` statements are put behind "
                      "`torch.cuda.is_available()` with the `torch.mps` equivalent in an `elif`; setters without one "
                      "(`set_device`, `reset_peak_memory_stats`) get the guard alone; `memory_allocated`/`memory_reserved` "
                      "in expressions fall back to `torch.mps.current_allocated_memory()`/`driver_allocated_memory()` "
                      "(info-level calls are harmless on a Mac and count as needing no change; they get the same "
                      "edit). "
                      "`torch.cuda.FloatTensor` as the argument of `set_default_tensor_type` is fixed with API119. "
                      "Other names (device properties, streams, legacy tensor types) stay manual.",
                      "torch.cuda.synchronize()",
                      "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
                      "elif torch.backends.mps.is_available():\n    torch.mps.synchronize()"),
}


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Kept when info-level; auto for the names in :data:`STATEMENTS` and :data:`QUERIES`; manual otherwise."""
    if f.severity.value == "info":
        return "kept", HARMLESS_WHEN_INFO["API102"]
    ev = f.evidence or {}
    attr = str(ev.get("api", "")).split(".")[2:3]
    if attr and (attr[0] in STATEMENTS or attr[0] in QUERIES):
        return "auto", FIXES["API102"].summary
    alt = ev.get("mps") or ev.get("accelerator")
    return "manual", f"{ev.get('api', 'this torch.cuda name')} has no drop-in MPS equivalent" + (
        f" (closest: {alt})" if alt else "")


SPEC = Spec(("API102",), FIXES, decide)
