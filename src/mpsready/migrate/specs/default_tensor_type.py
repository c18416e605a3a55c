"""API119 (and the API102 finding on its ``torch.cuda.FloatTensor`` argument): the default tensor type becomes
``set_default_device`` (transforms/default_tensor_type.py)."""

from __future__ import annotations

from mpsready.findings import Finding
from mpsready.migrate.specs import Bucketed, Floor, Spec
from mpsready.rules import AutoFix

# legacy torch.cuda tensor types API119 rewrites (the others change the default dtype too: manual)
DEFAULT_TYPES = ("torch.cuda.FloatTensor",)

FIXES = {
    "API119": AutoFix("`set_default_tensor_type(\"torch.cuda.FloatTensor\")` (string or class) and "
                      "`set_default_device(\"cuda\")` become `torch.set_default_device(...)` with the variable "
                      "`device` in scope, else `_mpsready_device()` (`\"cuda:N\"` keeps its index). Other legacy "
                      "CUDA tensor types change the default dtype too and stay manual.",
                      "torch.set_default_tensor_type('torch.cuda.FloatTensor')\ntorch.set_default_device('cuda:1')",
                      "torch.set_default_device(_mpsready_device())\ntorch.set_default_device(_mpsready_device(1))"),
}


def decide(f: Finding, floor: Floor) -> tuple[str, str] | None:
    """Manual for the legacy CUDA tensor types other than :data:`DEFAULT_TYPES` (API119 only)."""
    if f.code == "API119" and not (f.message.startswith("set_default_device(")
                                   or any(f"{t!r}" in f.message for t in DEFAULT_TYPES)):
        return "manual", "this legacy CUDA tensor type changes the default dtype too: use torch.set_default_dtype(...) " \
                         "and torch.set_default_device(...)"
    return None


def refine(rows: list[Bucketed]) -> None:
    """The API102 finding on the ``torch.cuda.FloatTensor`` argument of a ``set_default_tensor_type`` call that
    API119 rewrites is fixed by that edit."""
    api119 = {(f.location.path, f.location.line) for f, kind, _ in rows if f.code == "API119" and kind == "auto"}
    for i, (f, kind, _why) in enumerate(rows):
        if f.code == "API102" and kind == "manual" and (f.evidence or {}).get("api") in DEFAULT_TYPES \
                and (f.location.path, f.location.line) in api119:
            rows[i] = (f, "auto", "fixed by the API119 edit of the same set_default_tensor_type call")


SPEC = Spec(("API119", "API102"), FIXES, decide, refine)
