"""API119: a CUDA default tensor type or device -> ``torch.set_default_device(<the selected device>)``.

* ``torch.set_default_tensor_type("torch.cuda.FloatTensor")`` and the class form
  ``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` -> ``torch.set_default_device(device)`` (the device
  in scope) or ``torch.set_default_device(_mpsready_device())``. ``set_default_tensor_type`` is deprecated since
  PyTorch 2.1 in favour of ``torch.set_default_dtype`` and ``torch.set_default_device`` (PyTorch 2.13.0
  torch/__init__.py); float32 is already the default dtype, so only the device remains.
* ``torch.set_default_device("cuda")`` / ``("cuda:1")`` -> ``torch.set_default_device(device)`` /
  ``torch.set_default_device(_mpsready_device(1))``.

The class form also carries an API102 finding (``torch.cuda.FloatTensor`` is a torch.cuda name) at the
argument: the one edit answers both. Other legacy CUDA tensor types (``torch.cuda.HalfTensor``...) change the
default dtype too and are listed as manual. Calls the scan did not report (it reports every form above, so
this only happens when its findings were filtered or the file was not scanned) are found here too and
reported under API119, unless they sit behind a CUDA check.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import (cuda_index, expr, is_cuda_literal, string_value,
                                     under_cuda_guard)
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.default_tensor_type import SPEC
from mpsready.migrate.device_source import resolve

_SETTERS = ("torch.set_default_tensor_type", "torch.set_default_device")
_FLOAT = "torch.cuda.FloatTensor"


def shown_arg(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _names_cuda(ctx: FileContext, arg: cst.BaseExpression) -> bool:
    """The scan's API119 test: a CUDA device string, a ``torch.cuda.*Tensor`` type name, or a ``torch.cuda.`` class."""
    value = string_value(arg)
    if value is not None:
        return is_cuda_literal(value) or "cuda" in value.split(".")
    return any(n.startswith("torch.cuda.") for n in ctx.names(arg))


class DefaultTensorType(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/default_tensor_type.py
    detects = True
    words = ("set_default_tensor_type", "set_default_device")

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        mine = {(f.location.line, f.location.column): f for f in findings if f.code == "API119"}
        args = {(f.location.line, f.location.column): f for f in findings if f.code == "API102"}
        seen: set[int] = set()
        for node in ctx.of_type(cst.Call):
            if not (len(node.args) == 1  # the cheap syntactic test first
                    and (cst.helpers.get_full_name_for_node(node.func) or "").endswith(
                        ("set_default_tensor_type", "set_default_device"))):
                continue
            setter = next((s for s in _SETTERS if s in ctx.names(node.func)), None)
            if setter is None:
                continue
            pos = ctx.positions[node].start
            finding = mine.get((pos.line, pos.column + 1))
            if finding is not None:
                seen.add(id(finding))
            elif not _names_cuda(ctx, node.args[0].value):
                continue
            if (finding is not None and (finding.evidence or {}).get("guarded")) or \
                    (finding is None and under_cuda_guard(ctx, node)):
                continue  # behind a CUDA check: skipped on a Mac (the engine reports the finding as kept)
            arg = node.args[0].value
            value = string_value(arg)
            index: str | None = None
            if setter == "torch.set_default_tensor_type":
                legacy = value if value is not None else next(
                    (n for n in ctx.names(arg) if n.startswith("torch.cuda.")), None)
                if legacy != _FLOAT:
                    if finding is not None:
                        manuals.append(manual(finding, f"{legacy or shown_arg(arg)} changes the default dtype too: use "
                                                       "torch.set_default_dtype(...) and torch.set_default_device(...)"))
                    continue
            elif is_cuda_literal(value):
                index = cuda_index(value or "")
            else:
                if finding is not None:
                    manuals.append(manual(finding, f"the device {shown_arg(arg)} is not a plain CUDA literal: pass the "
                                                   "selected device"))
                continue
            found = resolve(ctx, node, index)
            if isinstance(found, str):
                if finding is not None:
                    manuals.append(manual(finding, found))
                continue
            target = found.expr
            new = cst.Call(expr("torch.set_default_device"), [cst.Arg(target)])
            apos = ctx.positions[arg].start
            covers = tuple(f for f in (args.get((apos.line, apos.column + 1)),) if f is not None)
            shown = shown_arg(arg)
            edits.append(Edit(node, lambda n, new=new: new, "API119", ctx.line_of(node),
                              f"{setter.rsplit('.', 1)[1]}({shown}) -> set_default_device("
                              f"{found.shown if not found.helper else cst.Module([]).code_for_node(target)})",
                              helper=found.helper, finding=finding, covers=covers))
        for f in findings:
            if f.code == "API119" and id(f) not in seen and not (f.evidence or {}).get("guarded"):
                manuals.append(manual(f, "the default tensor type or device call was not found at this position"))
        return edits, manuals
