"""Dynamo's disable shim around the dispatch mode, only once the program uses Dynamo (issue 39).

``TorchDispatchMode.__init_subclass__`` wraps every subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo``
(torch/utils/_python_dispatch.py, 2.5-2.13), so that Dynamo never traces a mode's Python. The wrapper imports
``torch._dynamo`` on its first call (seconds at the child's start) and costs every aten call about 0.5 us.
:class:`mpsready.emulate.dispatch.MPSDispatch` opts out (``_should_skip_dynamo``, the documented switch) and
:func:`watch` puts the wrapper back the moment ``torch._dynamo`` is imported: by the program
(``torch._dynamo.optimize``, ``torch.export``) or by the emulated ``torch.compile``'s first call
(release_api.py). Without it a program's own ``torch._dynamo.optimize`` on the emulated device fails with
"Cannot access accelerator device when none is available" (tests/run/test_thin_start.py)."""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch


class _Watch:
    """A ``sys.meta_path`` finder that finds nothing: it only notices the first import of ``torch._dynamo``."""

    def __init__(self, on: Callable[[], None]):
        self.on = on

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch._dynamo":
            self.on()
        return None


def watch(cls: type, raw: Callable) -> Callable[[], None]:
    """``cls.__torch_dispatch__`` is ``raw`` until ``torch._dynamo`` is imported (now, if it is already), then
    ``raw`` wrapped as ``TorchDispatchMode`` would have wrapped it (the dispatcher reads the attribute on every
    call). Returns the undo (the finder removed; the wrapper, once on, stays)."""
    shimmed = torch._disable_dynamo(raw, recursive=True)

    def on() -> None:
        setattr(cls, "__torch_dispatch__", shimmed)

    if "torch._dynamo" in sys.modules:
        on()
        return lambda: None
    setattr(cls, "__torch_dispatch__", raw)
    finder = _Watch(on)
    sys.meta_path.insert(0, finder)  # type: ignore[arg-type]

    def undo() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)  # type: ignore[arg-type]
    return undo
