"""API103: a hard-coded CUDA device -> the selected device (CUDA, then MPS, then the CPU).

* ``device = "cuda"`` -> ``device = str(_mpsready_device())`` (stays a string: code may compare or format it);
* ``.to("cuda")`` -> ``.to(device)`` (the device in scope) or ``.to(_mpsready_device())``;
* ``device="cuda"`` / ``map_location="cuda"`` keywords -> the device in scope or ``_mpsready_device()``;
* ``torch.device("cuda")`` / ``torch.device("cuda:1")`` / ``torch.device("cuda", i)`` -> ``_mpsready_device(i)``;
* an argparse ``--device`` default ``"cuda"`` -> ``str(_mpsready_device())``, and a literal ``choices=`` list
  without ``"mps"`` gains it;
* a device string built at run time, ``f"cuda:{rank}"`` or ``"cuda:{}".format(rank)``, in each place above ->
  the helper with the index, ``_mpsready_device(int(rank))`` (``int()``: the helper takes an integer index; the
  original string only parses as a CUDA device when the value renders as an integer).

``"cuda:N"`` keeps its index on CUDA. A literal that reaches the call through a variable assigned
elsewhere, and ``device_map=``/``devices=`` keywords of other libraries, are listed as manual.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import cuda_index, helper_call, is_cuda_literal, quote_like, string_value
from mpsready.migrate.device_source import resolve
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.device_literal import SPEC


def _str_of_helper(index: cst.BaseExpression | str | None) -> cst.Call:
    return cst.Call(cst.Name("str"), [cst.Arg(helper_call(index))])


def runtime_index(node: cst.CSTNode) -> cst.BaseExpression | None:
    """``int(rank)`` for ``f"cuda:{rank}"`` or ``"cuda:{}".format(rank)`` (one plain placeholder), else ``None``."""
    inner: cst.BaseExpression | None = None
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        head, part = node.parts
        if isinstance(head, cst.FormattedStringText) and head.value == "cuda:" \
                and isinstance(part, cst.FormattedStringExpression) and part.conversion is None \
                and part.format_spec is None:
            inner = part.expression
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format" \
            and string_value(node.func.value) in ("cuda:{}", "cuda:{0}") and len(node.args) == 1 and node.args[0].keyword is None \
            and not node.args[0].star:
        inner = node.args[0].value
    if inner is None:
        return None
    if isinstance(inner, cst.Integer) or (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name)
                                          and inner.func.value == "int"):
        return inner
    return cst.Call(cst.Name("int"), [cst.Arg(inner.with_changes(lpar=[], rpar=[]))])


def _shown(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _choices_gain_mps(ctx: FileContext, edit: Edit) -> list[Edit]:
    """For a rewritten argparse ``default=``: ``choices=['cuda', 'cpu']`` (a literal list or tuple of strings
    without ``'mps'``) gains ``'mps'``, so ``--device mps`` is accepted too (argparse checks only the values given
    on the command line against ``choices``, Python 3 Lib/argparse.py ``_check_value``). No edit otherwise."""
    arg = ctx.parents.get(edit.node)
    call = ctx.parents.get(arg) if isinstance(arg, cst.Arg) and arg.keyword is not None \
        and arg.keyword.value == "default" else None
    if not isinstance(call, cst.Call):
        return []
    choices = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "choices"), None)
    if not isinstance(choices, (cst.List, cst.Tuple)) or not choices.elements:
        return []
    values = [string_value(e.value) for e in choices.elements]
    if None in values or "mps" in values:
        return []
    last = choices.elements[-1].value
    assert isinstance(last, cst.SimpleString)

    def rewrite(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, (cst.List, cst.Tuple))
        elements = list(node.elements)
        tail = elements[-1]
        elements[-1] = tail.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return node.with_changes(elements=[*elements, cst.Element(quote_like(last, "mps"), comma=tail.comma)])

    return [Edit(choices, rewrite, edit.code, ctx.line_of(choices), "argparse choices gain 'mps'")]


class DeviceLiteral(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/device_literal.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            if (f.evidence or {}).get("guarded"):
                continue
            edit = self._one(ctx, f)
            if isinstance(edit, Edit):
                edits.append(edit)
                edits += _choices_gain_mps(ctx, edit)
            else:
                manuals.append(manual(f, edit))
        return edits, manuals

    def _one(self, ctx: FileContext, f: Finding) -> Edit | str:
        nodes = ctx.nodes_of(f)
        for n in nodes:
            if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None and runtime_index(n.value) is not None:
                index = runtime_index(n.value)
                assert index is not None  # tested just above
                return Edit(n.value, lambda _n, i=index: _str_of_helper(i), f.code, ctx.line_of(n),
                            f"{_shown(n.value)} -> str(_mpsready_device({_shown(index)}))", helper=True, finding=f)
            if isinstance(n, (cst.FormattedString, cst.Call)) and runtime_index(n) is not None:
                return self._runtime(ctx, f, n)
            if isinstance(n, (cst.Assign, cst.AnnAssign)) and isinstance(n.value, cst.SimpleString):
                value = string_value(n.value)
                if is_cuda_literal(value):
                    return Edit(n.value, lambda _n, i=cuda_index(value): _str_of_helper(i), f.code, ctx.line_of(n),
                                f"{value!r} -> str(_mpsready_device())", helper=True, finding=f)
            if isinstance(n, cst.SimpleString) and is_cuda_literal(string_value(n)):
                return self._literal(ctx, f, n)
            if isinstance(n, cst.Call):
                if isinstance(n.func, cst.Attribute) and n.func.attr.value == "to":
                    return self._to_call(ctx, f, n)
                if "torch.device" in ctx.names(n.func):
                    return self._torch_device(ctx, f, n)
        return ("migrate has no rewrite for this form of CUDA device: pass the selected device (the `device` "
                "variable, or _mpsready_device()) here by hand")

    def _literal(self, ctx: FileContext, f: Finding, lit: cst.SimpleString) -> Edit | str:
        value = string_value(lit) or ""
        arg = ctx.parents.get(lit)
        kw = arg.keyword.value if isinstance(arg, cst.Arg) and arg.keyword is not None else None
        if kw == "default":
            return Edit(lit, lambda _n, i=cuda_index(value): _str_of_helper(i), f.code, ctx.line_of(lit),
                        f"--device default {value!r} -> str(_mpsready_device())", helper=True, finding=f)
        if kw in ("device", "map_location"):
            found = resolve(ctx, lit, cuda_index(value))
            if isinstance(found, str):
                return found
            return Edit(lit, lambda _n, t=found.expr: t, f.code, ctx.line_of(lit),
                        f"{kw}={value!r} -> {kw}={found.shown}", helper=found.helper, finding=f)
        if isinstance(arg, cst.Param):
            return self._parameter_default(ctx, f, lit, arg, value)
        return f"{kw}={value!r}: a keyword of another library; check which devices it accepts"

    def _parameter_default(self, ctx: FileContext, f: Finding, lit: cst.SimpleString, param: cst.Param,
                           value: str) -> Edit | str:
        """``def f(x, device='cuda')`` -> ``device=str(_mpsready_device())``: the device a caller that passes none
        gets. Only in a program without a device selection of its own (there every choice is the helper's);
        where the project selects its device, the callers must pass it (a default cannot see that choice)."""
        name = param.name.value
        if ctx.selections:
            where = ", ".join(ctx.selections[:3]) + (" ..." if len(ctx.selections) > 3 else "")
            return (f"parameter {name} defaults to {value!r}: the project selects its device itself ({where}) and a "
                    "default cannot see that choice; pass the selected device from every caller and drop the default")
        return Edit(lit, lambda _n, i=cuda_index(value): _str_of_helper(i), f.code, ctx.line_of(lit),
                    f"parameter default {name}={value!r} -> str(_mpsready_device())", helper=True, finding=f)

    def _runtime(self, ctx: FileContext, f: Finding, node: cst.BaseExpression) -> Edit | str:
        index = runtime_index(node)
        assert index is not None  # the caller found one
        arg = ctx.parents.get(node)
        kw = arg.keyword.value if isinstance(arg, cst.Arg) and arg.keyword is not None else None
        if kw not in (None, "default", "device", "map_location"):
            return f"{kw}={_shown(node)}: a keyword of another library; check which devices it accepts"
        wrap = _str_of_helper if kw == "default" else helper_call
        return Edit(node, lambda _n, i=index: wrap(i), f.code, ctx.line_of(node),
                    f"{_shown(node)} -> _mpsready_device({_shown(index)})", helper=True, finding=f)

    def _to_call(self, ctx: FileContext, f: Finding, call: cst.Call) -> Edit | str:
        first = next((a for a in call.args if a.keyword is None), None)
        if first is not None and runtime_index(first.value) is not None:
            index = runtime_index(first.value)
            assert index is not None  # tested just above
            return Edit(first.value, lambda _n, i=index: helper_call(i), f.code, ctx.line_of(call),
                        f".to({_shown(first.value)}) -> .to(_mpsready_device({_shown(index)}))", helper=True, finding=f)
        value = string_value(first.value) if first is not None else None
        if first is None or not is_cuda_literal(value):
            return "the CUDA device reaches .to() through a variable assigned elsewhere: change that assignment"
        found = resolve(ctx, call, cuda_index(value))
        if isinstance(found, str):
            return found
        return Edit(first.value, lambda _n, t=found.expr: t, f.code, ctx.line_of(call),
                    f".to({value!r}) -> .to({found.shown})", helper=found.helper, finding=f)

    def _torch_device(self, ctx: FileContext, f: Finding, call: cst.Call) -> Edit | str:
        pos = [a for a in call.args if a.keyword is None]
        if len(call.args) == 1 and pos and runtime_index(pos[0].value) is not None:
            found_index = runtime_index(pos[0].value)
            assert found_index is not None  # tested just above
            return Edit(call, lambda _n, i=found_index: helper_call(i), f.code, ctx.line_of(call),
                        f"torch.device({_shown(pos[0].value)}) -> _mpsready_device({_shown(found_index)})", helper=True,
                        finding=f)
        value = string_value(pos[0].value) if pos else None
        if not pos or not is_cuda_literal(value) or len(call.args) > 2:
            return "torch.device() of a CUDA device named through a variable: change where it is assigned"
        if len(pos) == 2:
            if cuda_index(value) is not None:
                return "torch.device() with an index twice"
            index: cst.BaseExpression | str | None = pos[1].value
        else:
            index = cuda_index(value)
        return Edit(call, lambda _n, i=index: helper_call(i), f.code, ctx.line_of(call),
                    f"torch.device({value!r}) -> _mpsready_device()", helper=True, finding=f)
