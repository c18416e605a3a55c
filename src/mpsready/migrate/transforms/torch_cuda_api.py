"""API102: ``torch.cuda.*`` calls -> guarded, with the MPS equivalent where one exists.

* A statement such as ``torch.cuda.synchronize()`` becomes
  ``if torch.cuda.is_available(): <it> elif torch.backends.mps.is_available(): torch.mps.synchronize()``
  (``synchronize``, ``empty_cache``, ``manual_seed``/``manual_seed_all``, ``seed``/``seed_all``), or
  just the CUDA guard for setters with no MPS counterpart (``set_device``, ``reset_peak_memory_stats``, ...).
* A memory query inside an expression (``memory_allocated``, ``memory_reserved``) becomes
  ``(<it> if torch.cuda.is_available() else torch.mps.<equivalent>() if torch.backends.mps.is_available() else 0)``.

The equivalents come from src/mpsready/scan/data/cuda_api.yaml (PyTorch 2.13.0 torch/mps/__init__.py).
Everything else (device properties, streams, legacy tensor types) is listed as manual. Calls the scan rates
info (harmless on a Mac: ``manual_seed``, ``empty_cache``, ``seed``...) are reported as kept (nothing needs to
change) and still get the MPS equivalent beside them where the shape allows, as an edit no finding requires:
the re-scan reports them as info again, which is what they are.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from mpsready.findings import Finding, Severity
from mpsready.migrate.common import CUDA_AVAILABLE, MPS_AVAILABLE, expr, under_cuda_guard
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, kept, manual
from mpsready.migrate.specs.torch_cuda_api import HARMLESS_WHEN_INFO, QUERIES, SPEC, STATEMENTS

LEGACY_TYPES = {"FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor"}


def _node_for(ctx: FileContext, f: Finding) -> cst.CSTNode | None:
    api = (f.evidence or {}).get("api")
    for n in ctx.nodes_of(f):
        if isinstance(n, (cst.Attribute, cst.Name)) and api in ctx.names(n):
            return n
    return None


def _call_of(ctx: FileContext, node: cst.CSTNode) -> cst.Call | None:
    parent = ctx.parents.get(node)
    return parent if isinstance(parent, cst.Call) and parent.func is node else None


def _statement_of(ctx: FileContext, call: cst.Call) -> cst.SimpleStatementLine | None:
    expr_stmt = ctx.parents.get(call)
    line = ctx.parents.get(expr_stmt) if isinstance(expr_stmt, cst.Expr) else None
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return line
    return None


def in_default_tensor_type(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``torch.set_default_tensor_type(torch.cuda.FloatTensor)``: the default_tensor_type transform's case."""
    arg = ctx.parents.get(node)
    call = ctx.parents.get(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and "torch.set_default_tensor_type" in ctx.names(call.func)


# the seeding calls get no torch.mps twin when they are harmless (info): torch.manual_seed already seeds MPS
# (PyTorch 2.13.0 torch/random.py: manual_seed calls torch.mps.manual_seed) and torch.cuda.manual_seed(_all) is
# "silently ignored" without CUDA (torch/cuda/random.py docstrings); the twin made each seeding line an if/elif block,
# twice for the common manual_seed + manual_seed_all pair, for nothing
SEEDS = frozenset({"manual_seed", "manual_seed_all", "seed", "seed_all"})


class TorchCudaApi(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/torch_cuda_api.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            api = str((f.evidence or {}).get("api", ""))
            attr = api.split(".")[2] if api.count(".") >= 2 else ""
            if (f.evidence or {}).get("guarded"):
                continue  # already behind a CUDA check: skipped on a Mac, nothing to change
            if f.severity is Severity.INFO:
                # harmless: reported as kept; the torch.mps equivalent is still added where the shape allows, as
                # an edit no finding requires (like torch.load's map_location)
                manuals.append(kept(f, HARMLESS_WHEN_INFO["API102"]))
                if attr in SEEDS:
                    continue  # no edit either: see SEEDS
                one, _m = self.plan(ctx, [dataclasses.replace(f, severity=Severity.DEGRADES)])
                edits += [dataclasses.replace(e, finding=None) for e in one]
                continue
            node = _node_for(ctx, f)
            if node is None:
                manuals.append(manual(f, f"{api} was not found at this position"))
                continue
            if attr in LEGACY_TYPES and in_default_tensor_type(ctx, node):
                continue  # rewritten whole by default_tensor_type
            if under_cuda_guard(ctx, node):
                manuals.append(kept(f, "already behind a CUDA check: skipped on a Mac"))
                continue
            call = _call_of(ctx, node)
            stmt = _statement_of(ctx, call) if call is not None else None
            if attr in STATEMENTS and stmt is not None and call is not None:  # (a statement only around a call)
                edits.append(self._guard(ctx, f, stmt, call, STATEMENTS[attr]))
            elif attr in QUERIES and call is not None and len(call.args) <= 1:
                edits.append(self._query(ctx, f, call, QUERIES[attr]))
            elif attr in STATEMENTS:
                manuals.append(manual(f, f"{api}() is used inside an expression or a compound line; guard it with "
                                         "torch.cuda.is_available()"))
            else:
                alt = (f.evidence or {}).get("mps") or (f.evidence or {}).get("accelerator")
                manuals.append(manual(f, f"{api} has no drop-in MPS equivalent" + (f" (closest: {alt})" if alt else "")
                                      + "; decide what the Mac should do here"))
        return edits, manuals

    def _guard(self, ctx: FileContext, f: Finding, stmt: cst.SimpleStatementLine, call: cst.Call,
               mps_template: str | None) -> Edit:
        args = cst.Module([]).code_for_node(call).split("(", 1)[1].rsplit(")", 1)[0] if call.args else ""
        mps = mps_template.format(args=args) if mps_template else None

        def rewrite(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.SimpleStatementLine)
            inner = node.with_changes(leading_lines=[])
            orelse = None
            if mps:
                orelse = cst.If(test=expr(MPS_AVAILABLE),
                                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(expr(mps))])]))
            return cst.If(test=expr(CUDA_AVAILABLE), body=cst.IndentedBlock([inner]), orelse=orelse,
                          leading_lines=node.leading_lines)

        what = f"{(f.evidence or {}).get('api')}() guarded by torch.cuda.is_available()" + (f", MPS: {mps}" if mps else "")
        return Edit(stmt, rewrite, f.code, ctx.line_of(stmt), what, finding=f)

    def _query(self, ctx: FileContext, f: Finding, call: cst.Call, mps: str) -> Edit:
        def rewrite(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.Call)
            return cst.IfExp(test=expr(CUDA_AVAILABLE), body=node,
                             orelse=cst.IfExp(test=expr(MPS_AVAILABLE), body=expr(mps), orelse=cst.Integer("0")),
                             lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

        return Edit(call, rewrite, f.code, ctx.line_of(call),
                    f"{(f.evidence or {}).get('api')}() -> MPS {mps} when on MPS, 0 on the CPU", finding=f)
