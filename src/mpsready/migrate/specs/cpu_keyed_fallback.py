"""EXT108: a fallback keyed on the CPU becomes keyed on not CUDA (transforms/cpu_keyed_fallback.py)."""

from __future__ import annotations

from mpsready.migrate.specs import Spec
from mpsready.rules import AutoFix

FIXES = {
    "EXT108": AutoFix("The CPU test of the fallback becomes `x.device.type != 'cuda'` (also for `str(x.device) == "
                      "'cpu'` and `x.device == torch.device('cpu')`), so MPS tensors take the pure-PyTorch path and "
                      "CUDA and the CPU choose as before. migrate also finds `.type == 'cpu'` tests whose other branch "
                      "calls a CUDA-only name (`_C.*`, `*_cuda`) that the scan does not report. The extension's "
                      "import stays as it is (DEP107/EXT102).",
                      "if input.device.type == 'cpu':\n    out = upfirdn2d_native(input, kernel)\nelse:\n"
                      "    out = UpFirDn2d.apply(input, kernel)",
                      "if input.device.type != 'cuda':\n    out = upfirdn2d_native(input, kernel)\nelse:\n"
                      "    out = UpFirDn2d.apply(input, kernel)"),
}

SPEC = Spec(("EXT108",), FIXES)
