"""An emulated MPS device on this CPU: one device model for ``mpsready run`` (and the dynamic stages).

Tensors put on ``mps`` are real CPU tensors marked resident on the emulated device (:mod:`.residence`); a
``TorchFunctionMode`` turns ``mps`` into the CPU at the Python level (:mod:`.device`), a ``TorchDispatchMode``
hands every aten call on resident tensors to the judge (:mod:`.dispatch`, :mod:`mpsready.ops.judge`),
composite-implicit ops that MPS runs as a whole are caught above their decomposition (:mod:`.cia`), and the
torch API answers as on a Mac (:mod:`.torch_api`). :class:`~.session.Emulator` holds what was seen. Why this
design (and not a tensor subclass claiming ``device="mps"``): docs/emulation.md.
"""

from mpsready.emulate.session import Emulator, Failure, MacCrash, StopRun, Target, mac_error_kind, mark_mac_error

__all__ = ["Emulator", "Failure", "MacCrash", "StopRun", "Target", "mac_error_kind", "mark_mac_error"]
