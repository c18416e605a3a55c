"""API104 ``device-selection-ignores-mps`` in its return form: ``if torch.cuda.is_available(): return
torch.device(f"cuda:{rank}")`` followed by ``return torch.device("cpu")`` (or the CPU in the else branch), in a
function that never considers MPS. The assignment and conditional-expression forms are
:mod:`device_selection`."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import names_cpu, names_cuda
from mpsready.scan.code.units import on
from mpsready.scan.code.units.device_selection import is_switch_test, report_selection


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    body = fn.body
    for i, st in enumerate(body):
        if not (isinstance(st, ast.If) and st.body and isinstance(st.body[-1], ast.Return)
                and st.body[-1].value is not None and names_cuda(st.body[-1].value)):
            continue
        rest = st.orelse or body[i + 1:i + 2]
        if rest and isinstance(rest[-1], ast.Return) and rest[-1].value is not None and names_cpu(rest[-1].value) \
                and is_switch_test(v, st.test):
            report_selection(v, "available", st)
            return
