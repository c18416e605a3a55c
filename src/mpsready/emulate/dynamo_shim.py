"""Dynamo's disable shim around the dispatch mode, only once the program uses Dynamo (issue 39).

``TorchDispatchMode.__init_subclass__`` wraps every subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo``
(torch/utils/_python_dispatch.py, 2.5-2.13), so that Dynamo never traces a mode's Python. The wrapper imports
``torch._dynamo`` on its first call (seconds at the child's start) and costs every aten call about 0.5 us.
:class:`mpsready.emulate.dispatch.MPSDispatch` opts out (``_should_skip_dynamo``, the documented switch) and
:func:`watch` puts the wrapper back the moment ``torch._dynamo`` is imported: by the program
(``torch._dynamo.optimize``, ``torch.export``) or by the emulated ``torch.compile``'s first call
(release_api.py). Without it a program's own ``torch._dynamo.optimize`` on the emulated device fails with
"Cannot access accelerator device when none is available" (tests/run/test_thin_start.py).

Once on, the wrapper is taken only while a Dynamo callback is set on the calling thread (a compiled region runs or
is traced): the disable wrapper sets the callback to none around the mode's Python and back after
(torch/_dynamo/eval_frame.py ``DisableContext``, 2.5-2.13), which changes nothing while none is set, and costs
every aten call of a program that merely imported ``torch._dynamo`` about 1.5 us (issue 39: a test suite whose
packages import it). The guard's own frame is marked skipped for Dynamo (``set_code_exec_strategy`` or
``skip_code``, the calls ``torch._dynamo.skip`` makes), so that a callback never traces it; where neither exists
the wrapper is taken on every call, as before."""

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


def _skipped(code: Any) -> bool:
    """Mark ``code`` so that Dynamo's frame callback never sees its frames (their callees it still does); False
    where this torch has neither way (``_FrameExecStrategy`` 2.6+, ``skip_code`` before)."""
    ef = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    if ef is None:
        return False
    strategy = getattr(ef, "_FrameExecStrategy", None)
    action = getattr(ef, "_FrameAction", None)
    if strategy is not None and action is not None and hasattr(ef, "set_code_exec_strategy"):
        ef.set_code_exec_strategy(code, strategy(action.SKIP, action.DEFAULT))
        return True
    if hasattr(ef, "skip_code"):
        ef.skip_code(code)
        return True
    return False


def _guarded(raw: Callable, shimmed: Callable) -> Callable:
    """``raw`` itself while no Dynamo callback is set on this thread, ``shimmed`` (the disable wrapper) while one
    is; ``shimmed`` alone where this torch cannot read the callback or skip the guard's frame."""
    callback = getattr(getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None), "get_eval_frame_callback",
                       None)

    def guarded(self, func, types, args=(), kwargs=None):
        if callback() is None:  # no compiled region runs or is traced here: the wrapper would change nothing
            return raw(self, func, types, args, kwargs)
        return shimmed(self, func, types, args, kwargs)

    if callback is None or not _skipped(guarded.__code__):
        return shimmed
    return guarded


def watch(cls: type, raw: Callable) -> Callable[[], None]:
    """``cls.__torch_dispatch__`` is ``raw`` until ``torch._dynamo`` is imported (now, if it is already), then
    ``raw`` wrapped as ``TorchDispatchMode`` would have wrapped it (the dispatcher reads the attribute on every
    call). Returns the undo (the finder removed; the wrapper, once on, stays)."""
    shimmed = torch._disable_dynamo(raw, recursive=True)
    guarded = _guarded(raw, shimmed)

    def on() -> None:
        setattr(cls, "__torch_dispatch__", guarded)

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
