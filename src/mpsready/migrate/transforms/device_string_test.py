"""API115: ``"cuda" if "cuda" in device else "cpu"`` -> ``torch.device(device).type``.

The string test sends an ``"mps"`` device down the CPU path (autocast, pin_memory, dtype choices);
``torch.device(s).type`` is ``"cuda"``, ``"mps"`` or ``"cpu"`` for every valid device string (PyTorch
2.13.0 c10/core/Device.cpp parses ``type[:index]``). Tests of the forms ``"cuda" in s``,
``s == "cuda"`` and ``s.startswith("cuda")`` are rewritten; anything else is manual.

The rewrite changes what a Mac runs: the value becomes ``"mps"`` where it was ``"cpu"``, so code keyed on it
(``nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type, ...)``, a scaler) takes its
accelerator path on MPS. Every edit says so (``review``). In a file that calls autocast or GradScaler, the
test is left as it is (manual) unless the project's PyTorch floor has what they need on MPS
(:mod:`mpsready.migrate.mac_path`): otherwise the migrated Mac run would switch to float16 autocast and an
MPS scaler that the floor's PyTorch may not run (GradScaler's unscale op has no MPS kernel before the
release the ops tables name).

The transform also finds ``"cuda" if x.is_cuda else "cpu"`` itself (no scan rule reports it; pyGAT's sparse
attention layer builds ``torch.ones(..., device=dv)`` from it): ``Tensor.is_cuda`` is False for an MPS tensor
(PyTorch 2.13.0 torch/_C/__init__.pyi, ``is_cuda``: "Is True if the Tensor is stored on the GPU" of CUDA only),
so on a Mac the tensor it names was made on the CPU beside MPS operands, and the first MPS kernel refused the
CPU one. It becomes ``x.device.type``: ``"cuda"`` for a CUDA tensor and ``"cpu"`` for a CPU one as before,
``"mps"`` for an MPS tensor. Reported under API115, with the same rule for files that call autocast or
GradScaler.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.device_string_test import SPEC
from mpsready.migrate.mac_path import vtuple, floor_allows, floor_text
from mpsready.migrate.transforms.amp import mac_needs
from mpsready.scan.code.units.device_selection import AMP_CALLS  # the scan's API115 evidence reads the same table

def _needs_floor(blocked: list, floor, named: bool = True) -> str:
    """The end of a manual entry left for the AMP feature of ``blocked`` (``(feature, release, source)``) that
    needs the newest release: what it needs, the project's floor, and what to do."""
    k, r, n = max(blocked, key=lambda b: vtuple(b[1] or "0"))
    return (f"{k + ' ' if named else ''}needs PyTorch {r or 'a release not in the shipped tables'} ({n}) and the "
            f"PyTorch floor is {floor_text(floor)}: declare torch>={r or '...'} and run migrate again, or rewrite by hand")


def amp_calls(ctx: FileContext) -> list[str]:
    """Which of autocast / GradScaler the file calls (through imports too), in that order."""
    found: set[str] = set()
    for node in ctx.of_type(cst.Call):
        if isinstance(node.func, (cst.Name, cst.Attribute)):
            names = ctx.names(node.func)
            found |= {k for k, qs in AMP_CALLS.items() if names & set(qs)}
    return [k for k in AMP_CALLS if k in found]


def _subject(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The device string tested against ``"cuda"``, or ``None``."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(op, cst.In) and string_value(left) == "cuda":
            return right
        if isinstance(op, cst.Equal):
            if string_value(left) == "cuda":
                return right
            if string_value(right) == "cuda":
                return left
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" \
            and len(test.args) == 1 and string_value(test.args[0].value) == "cuda":
        return test.func.value
    return None


def _is_cuda_subject(node: cst.IfExp) -> cst.BaseExpression | None:
    """``x`` of ``"cuda" if x.is_cuda else "cpu"``, or ``None``."""
    test = node.test
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda" and not test.lpar \
            and string_value(node.body) == "cuda" and string_value(node.orelse) == "cpu":
        return test.value
    return None


class DeviceStringTest(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/device_string_test.py
    detects = True
    words = ("is_cuda",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        detected = [(n, x) for n in ctx.of_type(cst.IfExp) if (x := _is_cuda_subject(n)) is not None]
        kinds = amp_calls(ctx) if findings or detected else []
        needs = [(k,) + mac_needs(k) for k in kinds]
        blocked = [(k, r, n) for k, r, n in needs if not floor_allows(ctx.torch_floor, r)]
        review = "changes the Mac path: the value is 'mps' on a Mac where it was 'cpu', so code keyed on it takes its " \
                 "accelerator path on MPS"
        if needs and not blocked:
            review += "; " + ", ".join(f"{k} now active on MPS (from PyTorch {r}: {n})" for k, r, n in needs) + \
                f"; the floor {floor_text(ctx.torch_floor)} allows it"
        needs_torch = max((r for _, r, _ in needs if r), key=vtuple, default=None)
        for f in findings:
            node = next((n for n in ctx.nodes_of(f)
                         if isinstance(n, cst.IfExp)), None)
            subject = _subject(node.test) if node is not None else None
            if node is None or subject is None or string_value(node.body) != "cuda" or string_value(node.orelse) != "cpu":
                manuals.append(manual(f, "the test has an unusual shape; derive the type with torch.device(...).type"))
                continue
            if blocked:
                manuals.append(manual(f, (
                    f"left as it is, to keep the Mac path: torch.device(...).type would give 'mps' on a Mac, turning on "
                    f"{' and '.join(k for k, _, _ in needs)} there; on MPS {_needs_floor(blocked, ctx.torch_floor)}")))
                continue

            def rewrite(n: cst.CSTNode, subject=subject) -> cst.CSTNode:
                assert isinstance(n, cst.IfExp)
                call = cst.Call(cst.Attribute(cst.Name("torch"), cst.Name("device")), [cst.Arg(subject)])
                return cst.Attribute(call, cst.Name("type"), lpar=n.lpar, rpar=n.rpar)

            edits.append(Edit(node, rewrite, f.code, ctx.line_of(node), "'cuda'-string test -> torch.device(...).type",
                              finding=f, review=review, needs_torch=needs_torch))
        for node, x in detected:
            if blocked:
                manuals.append(Manual("API115", ctx.line_of(node), (
                    f"'cuda' if ....is_cuda else 'cpu' gives 'cpu' for an MPS tensor; left as it is, to keep the Mac "
                    f"path: .device.type would turn on {' and '.join(k for k, _, _ in needs)} on MPS, which "
                    f"{_needs_floor(blocked, ctx.torch_floor, named=False)}")))
                continue

            def follow(n: cst.CSTNode, x=x) -> cst.CSTNode:
                assert isinstance(n, cst.IfExp)
                return cst.Attribute(cst.Attribute(x, cst.Name("device")), cst.Name("type"), lpar=n.lpar, rpar=n.rpar)

            edits.append(Edit(node, follow, "API115", ctx.line_of(node),
                              "'cuda' if x.is_cuda else 'cpu' -> x.device.type ('cpu' for an MPS tensor before)",
                              review=review if needs else None, needs_torch=needs_torch))
        return edits, manuals
