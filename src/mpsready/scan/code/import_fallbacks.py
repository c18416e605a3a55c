"""Whether an ``except ImportError`` handler is a fallback at all on a Mac (issue 32, round 5)."""

from __future__ import annotations

import ast


def cuda_only_fallback(handler: ast.ExceptHandler) -> bool:
    """Whether an ``except ImportError:`` handler only imports packages with no macOS build (issue 32, round 5):
    ``try: from flash_attn_interface import f`` / ``except ImportError: from flash_attn import f`` trades one CUDA-only
    package for another, so on a Mac the handler fails as the body did: no fallback (``scan/data/packages.yaml``)."""
    from mpsready.scan import knowledge

    modules = []
    for st in handler.body:
        if isinstance(st, ast.Import):
            modules += [a.name for a in st.names]
        elif isinstance(st, ast.ImportFrom) and not st.level and st.module:
            modules.append(st.module)
        elif not (isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))):
            return False  # the handler does something else too: a fallback of its own
    return bool(modules) and all((entry := knowledge.lookup_import(m)) is not None and entry.status == "no_macos_build"
                                 for m in modules)
