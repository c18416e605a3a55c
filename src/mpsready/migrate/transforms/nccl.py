"""API107: ``init_process_group("nccl")`` -> ``"nccl"`` on CUDA, ``"gloo"`` otherwise.

macOS wheels have no NCCL; Gloo is built on every platform (PyTorch 2.13.0
torch/distributed/distributed_c10d.py, ``Backend``). Only a literal backend is rewritten; NCCL
imports and a backend held in a variable are listed as manual.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import expr, quote_like, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.nccl import SPEC


class Nccl(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/nccl.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            call = next((n for n in ctx.nodes_of(f)
                         if isinstance(n, cst.Call)
                         and (cst.helpers.get_full_name_for_node(n.func) or "").endswith("init_process_group")), None)
            if call is None:
                manuals.append(manual(f, "NCCL is used outside init_process_group; keep it to the CUDA path"))
                continue
            pos = [a for a in call.args if a.keyword is None][:1]
            arg = pos[0] if pos else next((a for a in call.args if a.keyword and a.keyword.value == "backend"), None)
            if arg is None or string_value(arg.value) != "nccl":
                manuals.append(manual(f, "the backend is named through a variable: choose 'gloo' when CUDA is absent"))
                continue
            lit = arg.value
            assert isinstance(lit, cst.SimpleString)
            new = cst.IfExp(test=expr("torch.cuda.is_available()"), body=lit, orelse=quote_like(lit, "gloo"))
            edits.append(Edit(lit, lambda _n, new=new: new, f.code, ctx.line_of(call),
                              "backend 'nccl' -> 'nccl' if CUDA is available else 'gloo'", finding=f))
        return edits, manuals
