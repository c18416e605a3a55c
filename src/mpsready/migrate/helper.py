"""The one small device helper the tool adds to a file that needs it, and the ``import torch`` it needs.

The helper picks CUDA, then MPS, then the CPU. With a project whose PyTorch floor is 2.6 or newer it
asks ``torch.accelerator`` after CUDA (``is_available`` and ``current_accelerator``: PyTorch 2.6
torch/accelerator/__init__.py); otherwise the chain is explicit. CUDA stays first and keeps the
index the code asked for, so a CUDA server runs exactly as before. The helper is added once per file
(a project's scripts do not import one another reliably, so one shared module could not be reached
from each of them), and never twice: a second run finds it and adds nothing.
"""

from __future__ import annotations

import libcst as cst

from mpsready.migrate.common import HELPER

_BODY_CHAIN = '''\
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
'''
_BODY_ACCELERATOR = '''\
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")
'''


def helper_source(accelerator: bool) -> str:
    """The helper's source text (a function ``_mpsready_device(index=None) -> torch.device``)."""
    return (
        f"def {HELPER}(index=None):\n"
        '    """CUDA (device `index` when given), else MPS, else the CPU. Added by `mpsready migrate`."""\n'
        "    if torch.cuda.is_available():\n"
        '        return torch.device("cuda", index) if isinstance(index, int) else torch.device(index or "cuda")'
        "  # mpsready: ignore[API103]\n"
        + (_BODY_ACCELERATOR if accelerator else _BODY_CHAIN)
    )


def defines_helper(module: cst.Module) -> bool:
    return any(isinstance(s, cst.FunctionDef) and s.name.value == HELPER for s in module.body)


def imports_torch(module: cst.Module) -> bool:
    """Whether a top-level ``import torch`` (or ``import torch.x``, which binds ``torch`` too) exists."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        name = cst.helpers.get_full_name_for_node(alias.name) or ""
                        if alias.asname is None and (name == "torch" or name.startswith("torch.")):
                            return True
    return False


def _import_end(module: cst.Module) -> int:
    """Index in ``module.body`` after the leading docstring, ``__future__`` and import statements."""
    end = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) or (i == 0 and isinstance(s, cst.Expr)
                                                                and isinstance(s.value, cst.SimpleString))
                for s in stmt.body):
            end = i + 1
            continue
        if isinstance(stmt, cst.If) or isinstance(stmt, cst.Try):
            # `try: import x except ImportError: ...` blocks belong to the import section too
            if _only_imports(stmt):
                end = i + 1
                continue
        break
    return end


class _ImportLines(cst.CSTVisitor):
    """``found``: per simple statement line, whether it holds only imports, ``pass`` and assignments; False for a
    function. (A class of the module: one made per call is garbage only the cyclic collector frees.)"""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[bool] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.found.append(all(isinstance(s, (cst.Import, cst.ImportFrom, cst.Pass, cst.Assign)) for s in node.body))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.found.append(False)
        return False


def _only_imports(stmt: cst.CSTNode) -> bool:
    v = _ImportLines()
    stmt.visit(v)
    return bool(v.found) and all(v.found)


def add_requirements(module: cst.Module, *, helper: bool, torch: bool, accelerator: bool) -> cst.Module:
    """``module`` with ``import torch`` (when ``torch`` and missing) and the helper (when ``helper`` and missing)."""
    body = list(module.body)
    end = _import_end(module)
    if (torch or helper) and not imports_torch(module):
        body.insert(end, cst.parse_statement("import torch\n"))
        end += 1
    if helper and not defines_helper(module):
        fn = cst.parse_statement(helper_source(accelerator))
        fn = fn.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        nxt = body[end] if end < len(body) else None
        if nxt is not None:
            body[end] = nxt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(),
                                                        *[ln for ln in nxt.leading_lines if ln.comment]])
        body.insert(end, fn)
    return module.with_changes(body=body)
