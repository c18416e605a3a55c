"""API108 / API109: ``torch.cuda.amp`` and CUDA-typed autocast/GradScaler -> ``torch.amp`` with the device type.

* ``torch.cuda.amp.autocast(a, b, c)`` -> ``torch.amp.autocast(<type>, enabled=a, dtype=b, cache_enabled=c)``
  (the positional order differs: PyTorch 2.13.0 torch/cuda/amp/autocast_mode.py vs torch/amp/autocast_mode.py);
* ``torch.cuda.amp.GradScaler(...)`` -> ``torch.amp.GradScaler(<type>, ...)`` (torch/amp/grad_scaler.py takes
  ``device`` first, then the same parameters);
* ``from torch.cuda.amp import autocast, GradScaler`` -> ``from torch.amp import ...`` with the type added to
  every call of those names;
* ``autocast("cuda")`` / ``GradScaler("cuda")`` / ``GradScaler()`` (API109) -> ``<type>``.

``<type>`` is ``torch.device(device).type`` for the device in scope, else ``_mpsready_device().type``.
On a machine without CUDA the original autocast and scaler disabled themselves (with a warning), so a Mac
ran float32 with an inert scaler. Each rewritten call is gated so the CPU stays as it was (CPU autocast
would otherwise switch to bfloat16), and MPS is turned on only when the project's PyTorch floor has what
it needs there (:mod:`mpsready.migrate.mac_path`, from the shipped ops tables):

* floor at or above that release: ``enabled=... and <type> != "cpu"``, active on CUDA and MPS; the edit's
  ``review`` says the Mac path changes and from which release it works;
* floor below it or not declared: ``enabled=... and <type> == "cuda"``, active on CUDA only as before, and a
  manual entry says how to turn MPS on.

On CUDA ``enabled`` is what it was in both cases.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import append_arg, kwarg, device_type_of, expr, is_cuda_literal, string_value
from mpsready.migrate.device_source import resolve
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.amp import SPEC
from mpsready.migrate.mac_path import (GRADSCALER_OPS, TORCH_AMP_GRADSCALER, autocast_release, floor_allows,
                                       floor_text, gradscaler_release)

AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
SCALER_ENABLED_POSITION = 4  # torch.cuda.amp.GradScaler(init_scale, growth_factor, backoff_factor, growth_interval, enabled)
AMP_NAMES = {"autocast", "GradScaler"}


def _kind(names: set[str]) -> str | None:
    for q in names:
        last = q.rsplit(".", 1)[-1]
        if last == "autocast" or last == "GradScaler":
            return last
    return None


def gate(dtype: str, mps: bool) -> str:
    """The test that keeps the call off where the original was off: the CPU always, MPS unless ``mps``."""
    return f"{dtype} != 'cpu'" if mps else f"{dtype} == 'cuda'"


def mac_needs(kind: str) -> tuple[str | None, str]:
    """(first PyTorch release where ``kind`` works on MPS, what it needs there) from the shipped ops tables."""
    if kind == "GradScaler":
        return gradscaler_release(), "MPS kernels for " + " and ".join(GRADSCALER_OPS)
    return autocast_release(), "AutocastMPS registrations, listed from this release in the shipped ops tables"


def _gated(args: list[cst.Arg], dtype: str, mps: bool) -> list[cst.Arg]:
    """``args`` with ``enabled`` gated off on the CPU (and on MPS unless ``mps``)."""
    test = gate(dtype, mps)
    out, found = [], False
    for a in args:
        if a.keyword is not None and a.keyword.value == "enabled":
            value = cst.Module([]).code_for_node(a.value)
            if value == "True":
                a = a.with_changes(value=expr(test))
            else:
                simple = isinstance(a.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(a.value.lpar)
                a = a.with_changes(value=expr(f"{value if simple else '(' + value + ')'} and {test}"))
            found = True
        out.append(a)
    if not found:
        return append_arg(out, kwarg("enabled", expr(test)))
    return out


def _same_name(alias: cst.ImportAlias) -> bool:
    """No ``as`` name, or the name itself (``autocast as autocast``)."""
    return alias.asname is None or (isinstance(alias.asname.name, cst.Name)
                                    and alias.asname.name.value == cst.helpers.get_full_name_for_node(alias.name))


class Amp(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/amp.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        imports = self._cuda_amp_imports(ctx)
        for f in findings:
            if (f.evidence or {}).get("guarded"):
                continue
            result = self._one(ctx, f, imports)
            if isinstance(result, str):
                manuals.append(manual(f, result))
                continue
            kind = "GradScaler" if "GradScaler" in (result.what if result else self._kind_at(ctx, f)) else "autocast"
            release, needs = mac_needs(kind)
            if result is not None:
                edits.append(result)
            if not floor_allows(ctx.torch_floor, release):
                line = result.line if result is not None else f.location.line
                manuals.append(Manual(f.code, line, (
                    f"{kind} left off on MPS (on CUDA only, as before): on MPS it needs PyTorch "
                    f"{release or 'a release not in the shipped tables'} ({needs}) and the PyTorch floor is "
                    f"{floor_text(ctx.torch_floor)}; to use it on MPS, declare torch>={release or '...'} and run "
                    f"migrate again"), f if result is None else None))
        if any(e.what.startswith("from-import") for e in edits):
            for imp in imports:
                def rewrite(n: cst.CSTNode) -> cst.CSTNode:
                    assert isinstance(n, cst.ImportFrom)
                    return n.with_changes(module=cst.Attribute(cst.Name("torch"), cst.Name("amp")))
                edits.append(Edit(imp, rewrite, "API108", ctx.line_of(imp), "from torch.cuda.amp import -> from torch.amp import"))
        return edits, manuals

    def _cuda_amp_imports(self, ctx: FileContext) -> list[cst.ImportFrom]:
        """``from torch.cuda.amp import autocast, GradScaler`` (also ``autocast as autocast``, VM-UNet: the same
        name), whose module becomes ``torch.amp``."""
        out: list[cst.ImportFrom] = []
        for node in ctx.of_type(cst.ImportFrom):
            if node.module is not None and not node.relative \
                    and cst.helpers.get_full_name_for_node(node.module) == "torch.cuda.amp" \
                    and not isinstance(node.names, cst.ImportStar) \
                    and all(_same_name(a) and a.name.value in AMP_NAMES for a in node.names):  # type: ignore[union-attr]
                out.append(node)
        return out

    def _kind_at(self, ctx: FileContext, f: Finding) -> str:
        call = next((n for n in ctx.nodes_of(f) if isinstance(n, cst.Call)), None)
        return (_kind(ctx.names(call.func)) if call is not None else None) or "autocast"

    def _one(self, ctx: FileContext, f: Finding, imports: list[cst.ImportFrom]) -> Edit | str | None:
        """The edit, the reason there is none, or ``None``: below the floor a CUDA-typed call (API109) is already
        what the Mac path needs (off without CUDA, as before)."""
        nodes = ctx.nodes_of(f)
        call = next((n for n in nodes if isinstance(n, cst.Call)), None)
        if call is None:
            return "torch.cuda.amp used outside a call (a decorator or a reference): use torch.amp with device_type"
        names = ctx.names(call.func)
        kind = _kind(names)
        if kind is None:
            return "torch.cuda.amp name without a torch.amp counterpart here (custom_fwd/custom_bwd need device_type)"
        release, needs = mac_needs(kind)
        mps = floor_allows(ctx.torch_floor, release)
        legacy = any(q.startswith("torch.cuda.amp.") for q in names)
        if legacy and isinstance(call.func, cst.Name) and not imports:
            return "torch.cuda.amp imported under another name: import it from torch.amp"
        if not mps:
            # below the release where MPS has it, 'mps' must not reach torch.amp at all: torch.amp.autocast('mps')
            # raises "User specified an unsupported autocast device_type 'mps'" before 2.5 even with
            # enabled=False (torch/amp/autocast_mode.py 2.3.0, 2.4.0). 'cuda' keeps the original's behaviour
            # exactly: on CUDA as before, off (with PyTorch's warning) without it.
            if not legacy:
                return None
            if kind == "GradScaler" and ctx.torch_floor is not None and ctx.torch_floor < TORCH_AMP_GRADSCALER:
                return ("torch.amp.GradScaler exists from PyTorch 2.3 (torch/amp/grad_scaler.py) and the floor is "
                        f"{floor_text(ctx.torch_floor)}: torch.cuda.amp.GradScaler stays (off on a Mac, as before)")
            return self._legacy(ctx, f, call, kind, "'cuda'", False, via_import=isinstance(call.func, cst.Name),
                                mps=False, gate=False)
        found = resolve(ctx, call)
        if isinstance(found, str):
            return found
        dtype = device_type_of(cst.Module([]).code_for_node(found.expr))
        scoped = None if found.helper else found.shown
        review = (f"changes the Mac path: {kind} now active on MPS (the original was off without CUDA"
                  f"{', so the Mac ran float32' if kind == 'autocast' else ', an inert scaler'}); works on MPS from "
                  f"PyTorch {release} ({needs}), the floor {floor_text(ctx.torch_floor)} allows it") if mps else None
        if legacy:
            out = self._legacy(ctx, f, call, kind, dtype, scoped is None, via_import=isinstance(call.func, cst.Name),
                               mps=mps)
        else:
            out = self._typed(ctx, f, call, kind, dtype, scoped is None, mps=mps)
        if isinstance(out, Edit) and review is not None:
            out.review, out.needs_torch = review, release
        return out

    def _legacy(self, ctx: FileContext, f: Finding, call: cst.Call, kind: str, dtype: str, helper: bool,
                via_import: bool, mps: bool, gate: bool = True) -> Edit | str:
        pos = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return "starred arguments: rewrite to torch.amp by hand"
        if kind == "autocast" and len(pos) > len(AUTOCAST_POSITIONAL):
            return "too many positional arguments for autocast"
        if kind == "GradScaler" and len(pos) > SCALER_ENABLED_POSITION:
            return "GradScaler's enabled given by position: rewrite by hand"

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.Call)
            args = list(n.args)
            if kind == "autocast":
                eq = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
                args = [cst.Arg(a.value, keyword=cst.Name(AUTOCAST_POSITIONAL[i]), equal=eq) if a.keyword is None else a
                        for i, a in enumerate(args)]
            args = [cst.Arg(expr(dtype))] + (_gated(args, dtype, mps) if gate else args)
            func = n.func if via_import else expr(f"torch.amp.{kind}")
            return n.with_changes(func=func, args=args)

        what = ("from-import " if via_import else "") + f"torch.cuda.amp.{kind} -> torch.amp.{kind}({dtype}, ...)"
        return Edit(call, rewrite, f.code, ctx.line_of(call), what, helper=helper, finding=f)

    def _typed(self, ctx: FileContext, f: Finding, call: cst.Call, kind: str, dtype: str, helper: bool,
               mps: bool) -> Edit | str:
        key = "device_type" if kind == "autocast" else "device"
        pos = [a for a in call.args if a.keyword is None][:1]
        arg = pos[0] if pos else next((a for a in call.args if a.keyword and a.keyword.value == key), None)
        if arg is None and kind == "GradScaler":
            def add(n: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(n, cst.Call)
                return n.with_changes(args=[cst.Arg(expr(dtype))] + _gated(list(n.args), dtype, mps))
            return Edit(call, add, f.code, ctx.line_of(call), f"GradScaler() -> GradScaler({dtype}, ...)",
                        helper=helper, finding=f)
        if arg is None or not is_cuda_literal(string_value(arg.value)):
            return "the device type is named through a variable: pass the selected device's .type"
        target = arg

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.Call)
            args = [a.with_changes(value=expr(dtype)) if a is target or a.deep_equals(target) else a for a in n.args]
            return n.with_changes(args=_gated(args, dtype, mps))

        return Edit(call, rewrite, f.code, ctx.line_of(call), f"{kind}('cuda') -> {kind}({dtype})", helper=helper,
                    finding=f)
