"""DEP107 ``cuda-package-import``: an import of a package the knowledge base (``scan/data/packages.yaml``)
knows as CUDA-only or CUDA-first, once per package per file (again when an unguarded import follows a guarded
one); under a try/except with a fallback it degrades at most (under an ``if`` whose test names the package
itself, an availability check, too: :func:`mpsready.scan.code.analyzer.optional_imports`, issue 32).
``numba`` itself runs on macOS (its CUDA kernels are EXT105)."""

from __future__ import annotations

import ast
from typing import Any

from mpsready.findings import Severity
from mpsready.scan import knowledge
from mpsready.scan.code.astutil import end_of
from mpsready.scan.code.result import raw_finding
from mpsready.scan.code.units import ImportedModule, on
from mpsready.scan.rules import deps as D


@on(ImportedModule)
def check(v, node: ast.Import | ast.ImportFrom, module: str, guard: str | None) -> None:
    entry = knowledge.lookup_import(module)
    if entry is None or (entry.name in v.reported_packages and guard is None):
        return
    if module.startswith("numba") and entry.name == "numba":
        return
    v.reported_packages.add(entry.name)
    top = module.split(".")[0]
    evidence: dict[str, Any] = {"package": entry.name, "status": entry.status, "module": top}
    if entry.alternative:
        evidence["alternative"] = entry.alternative
    rule = D.CUDA_PACKAGE_IMPORT
    severity = entry.severity
    msg = f"imports {module}: {entry.name} {entry.status_text}"
    if guard is not None:
        evidence["fallback"] = f"line {guard}"
        severity = Severity.DEGRADES if severity.rank >= Severity.DEGRADES.rank else severity
        msg += f"; guarded by try/except with a fallback at line {guard}"
    elif not entry.alternative and severity is Severity.BLOCKER:
        evidence["no_alternative"] = True
    fix = f"Use: {entry.alternative}." if entry.alternative else rule.fix
    # reported as found: an import is judged by the knowledge base, not by the CUDA guards around it
    v.result.findings.append(raw_finding(rule, node.lineno, node.col_offset, msg, severity=severity, fix=fix,
                                  evidence=evidence, end=end_of(node)) | {"source": entry.source})

