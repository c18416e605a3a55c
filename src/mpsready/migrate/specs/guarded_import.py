"""DEP107, EXT102: a hard import of a CUDA-only package becomes guarded where the file falls back on None
(transforms/guarded_import.py); EXT102 only labels the edits it finds itself."""

from __future__ import annotations

from mpsready.migrate.specs import Spec
from mpsready.rules import AutoFix

FIXES = {
    # DEP107 only for the docs: dependency findings are not counted in the code effort (bucket "other")
    "DEP107": AutoFix("When the importing file already falls back on the name being None (`if X is not None:`), a "
                      "module-level import of the CUDA-only package becomes `try: import X` / `except ImportError: X = "
                      "None`; the same is done for in-repo CUDA extensions (`*_cuda`, `*_C` modules). Other imports "
                      "stay manual.",
                      "import flash_attn\n\ndef attend(q, k, v):\n    if flash_attn is None:\n"
                      "        return F.scaled_dot_product_attention(q, k, v)\n    return flash_attn.flash_attn_func(q, k, v)",
                      "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n\ndef attend(q, k, v):\n"
                      "    if flash_attn is None:\n        return F.scaled_dot_product_attention(q, k, v)\n"
                      "    return flash_attn.flash_attn_func(q, k, v)"),
}

SPEC = Spec(("DEP107", "EXT102"), FIXES)
