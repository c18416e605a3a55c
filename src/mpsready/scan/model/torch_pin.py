"""Findings whose judgement depends on the PyTorch release the project declares.

API118 (a sparse tensor registered as a module buffer): moving such a module to MPS needs SparseMPS kernels,
which PyTorch has from 2.9.0. The shipped operator tables say so per release
(``src/mpsready/ops/data/tables/torch-*.json.gz``, built from each release's native_functions.yaml):
``_sparse_coo_tensor_with_dims_and_tensors``, ``_to_sparse``, ``_coalesce``, ``_indices`` and ``_values`` carry a
SparseMPS kernel (``sp``) from torch-2.9.0 on, and no operator has one in torch-2.3.0 to torch-2.8.0
(``counts.yaml.sparse_mps`` is 0 there, 108 in 2.9.0). So the finding stays a blocker, with the remedy "raise the
torch pin", only when a declared torch pin stays below 2.9; an unpinned or undeclared torch (the user installs a
current release) or a pin that admits 2.9 needs only a recent release on the Mac: degrades, which does not limit
the outlook.
"""

from __future__ import annotations

from collections.abc import Iterable

from dataclasses import replace

from mpsready.findings import Finding, Severity
from mpsready.scan import knowledge
from mpsready.scan.sources import Dependency

SPARSE_MPS_SINCE = "2.9"


def torch_pins(deps: Iterable[Dependency]) -> list[Dependency]:
    """The declared torch/pytorch requirements a Mac install follows: the required ones, or the optional ones
    (extras, dev groups) when torch is declared nowhere else."""
    from mpsready.scan.dependencies import installs_on_mac  # here: packaging is loaded only for declared pins

    found = [d for d in deps if knowledge.canonical_name(d.name) in ("torch", "pytorch") and installs_on_mac(d)]
    required = [d for d in found if not d.optional]
    return required or found


def first_pin_below(deps: Iterable[Dependency], floor: str) -> Dependency | None:
    """The first declared torch pin (by path and line) that admits no release at or above ``floor``, or ``None``
    when every one reaches it (also when torch is unpinned or undeclared)."""
    from mpsready.scan.dependencies import pin_admits_at_least

    below = [d for d in torch_pins(deps) if not pin_admits_at_least(d, floor)]
    return min(below, key=lambda d: (d.path, d.line or 0)) if below else None


def judge_by_torch_pin(findings: list[Finding], deps: list[Dependency]) -> list[Finding]:
    """API118 findings judged against the declared torch pin (see the module doc); others unchanged."""
    if not any(f.code == "API118" for f in findings):
        return findings
    pin = first_pin_below(deps, SPARSE_MPS_SINCE)
    out = []
    for f in findings:
        if f.code != "API118":
            out.append(f)
            continue
        if pin is not None:
            where = f"{pin.path}:{pin.line}" if pin.line else pin.path
            ev = {**f.evidence, "torch_pin": pin.specifier, "pin_at": where, "raise_torch_to": SPARSE_MPS_SINCE}
            fix = (f"Raise the torch pin to torch>={SPARSE_MPS_SINCE} ({where} declares {pin.raw or pin.specifier}), "
                   "the first release with SparseMPS kernels; or keep the buffer dense and convert where needed.")
            out.append(replace(f, message=f"{f.message}; {where} pins {pin.raw or pin.specifier}", fix=fix)
                       .with_evidence(ev))
        else:
            pins = [d.specifier for d in torch_pins(deps) if d.specifier.strip()]
            why = "the torch pin admits it" if pins else "torch is not pinned"
            ev = {**f.evidence, "mps_since": SPARSE_MPS_SINCE, "torch_pin": pins[0] if pins else None}
            severity = Severity.DEGRADES if f.severity is Severity.BLOCKER else f.severity
            out.append(replace(f, severity=severity,
                               message=f"{f.message}; {why}: needs PyTorch >= {SPARSE_MPS_SINCE} on a Mac",
                               fix=f"Install PyTorch >= {SPARSE_MPS_SINCE} on the Mac (declare "
                               f"torch>={SPARSE_MPS_SINCE} to make sure).").with_evidence(ev))
    return out
