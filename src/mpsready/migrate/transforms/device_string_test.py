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


class DeviceStringTest(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/device_string_test.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        kinds = amp_calls(ctx) if findings else []
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
                k, r, n = max(blocked, key=lambda b: vtuple(b[1] or "0"))
                manuals.append(manual(f, (
                    f"left as it is, to keep the Mac path: torch.device(...).type would give 'mps' on a Mac, turning on "
                    f"{' and '.join(k for k, _, _ in needs)} there; on MPS {k} needs PyTorch "
                    f"{r or 'a release not in the shipped tables'} ({n}) and the PyTorch floor is "
                    f"{floor_text(ctx.torch_floor)}: declare torch>={r or '...'} and run migrate again, or rewrite by hand")))
                continue

            def rewrite(n: cst.CSTNode, subject=subject) -> cst.CSTNode:
                assert isinstance(n, cst.IfExp)
                call = cst.Call(cst.Attribute(cst.Name("torch"), cst.Name("device")), [cst.Arg(subject)])
                return cst.Attribute(call, cst.Name("type"), lpar=n.lpar, rpar=n.rpar)

            edits.append(Edit(node, rewrite, f.code, ctx.line_of(node), "'cuda'-string test -> torch.device(...).type",
                              finding=f, review=review, needs_torch=needs_torch))
        return edits, manuals
