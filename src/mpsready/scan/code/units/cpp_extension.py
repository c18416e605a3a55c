"""EXT102 ``cuda-extension-build`` and EXT107 ``cpp-extension`` for ``torch.utils.cpp_extension`` builds:
``CUDAExtension``, and ``load``/``load_inline``/``CppExtension`` with ``.cu`` sources, ``cuda_sources``,
``extra_cuda_cflags`` or ``with_cuda=True`` are EXT102 (degrades when ``load``/``load_inline`` runs under a
try/except with a fallback); the other ``CppExtension``/``load`` builds are EXT107. The extension's module
name is recorded (``extensions``) so imports of it elsewhere are judged as CUDA code."""

from __future__ import annotations

import ast

from mpsready.findings import Severity
from mpsready.scan.code.astutil import kwarg
from mpsready.scan.code.units import on
from mpsready.scan.rules import extensions as E

PREFIX = "torch.utils.cpp_extension."


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if not name.startswith(PREFIX):
        return
    last = name.rsplit(".", 1)[-1]
    strings = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    has_cu = any(s.endswith((".cu", ".cuh")) for s in strings) or any("-lcuda" in s for s in strings)
    kwnames = {k.arg for k in node.keywords}
    ext_name = node.args[0] if node.args else kwarg(node, "name")
    ext = v.literal(ext_name) if ext_name is not None else None
    guard = v.fallback_guard()
    if guard is not None and last in ("load", "load_inline"):
        # built at run time under try/except with a fallback: a failed build on a Mac is caught
        if has_cu or "cuda_sources" in kwnames or "extra_cuda_cflags" in kwnames:
            if ext:
                v.result.extensions.append(ext)
            v.add(E.CUDA_EXTENSION_BUILD, node, f"{last}({ext!r}) builds a CUDA extension under try/except with "
                  f"a fallback (line {guard})", severity=Severity.DEGRADES,
                  evidence={"extension": ext, "fallback": f"line {guard}"})
            return
    if last == "CUDAExtension" or (last in ("load", "load_inline", "CppExtension") and (
            has_cu or "cuda_sources" in kwnames or "extra_cuda_cflags" in kwnames
            or any(k.arg == "with_cuda" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords))):
        if ext:
            v.result.extensions.append(ext)
        v.add(E.CUDA_EXTENSION_BUILD, node, f"{last}({ext!r}) builds a CUDA extension" if ext else
              f"{last}() builds a CUDA extension", evidence={"extension": ext, "no_alternative": True})
    elif last in ("CppExtension", "load", "load_inline"):
        literal = any(x.endswith((".cpp", ".cc", ".cxx", ".c")) for x in strings) or "cpp_sources" in kwnames
        what = "a C++ (CPU) extension" if literal else \
            "an extension from sources named elsewhere (CUDA is judged from the .cu files, EXT101)"
        v.add(E.CPU_EXTENSION, node, f"{last}({ext!r}) builds {what}" if ext else f"{last}() builds {what}",
              evidence={"extension": ext})
