"""The dispatch mode off the dispatch stack while nothing is resident on MPS (issue 39, the plugin's overhead).

A test suite's CPU tests under ``pytest --mps-emulate`` make no tensor on MPS: the dispatch mode
(:mod:`~mpsready.emulate.dispatch`) only forwards their aten calls, and the device mode used to run each torch
function written in C++ with the Python key off (``torch._C._DisableTorchDispatch``) so that the dispatch mode did
not see it. That guard is a pybind object made, entered and left per call: about as dear as the device mode's
own Python (measured with callgrind on pytorch_optimizer's training steps: 2.8 of the 5.1 million instructions per
test that the device mode's floor adds). Instead, the device mode takes the dispatch mode off this thread's stack
(:func:`sleep`) at the first such call and leaves it off while the calls that follow are of the same kind; any
other call (a torch function written in Python, an argument naming MPS, a generator, a tensor subclass, a
resident tensor, a factory or move onto MPS, a backward pass, whose hooks may create on MPS) puts it back first
(:func:`wake`), under any mode the program pushed meanwhile, where it was. What the dispatch mode sees is what it
saw behind the guard: every aten call of every torch function that is not such a plain C++ call.

The dispatch stack is thread-local (``TorchDispatchModeTLS``, torch/csrc/utils/torch_dispatch_mode.h, 2.0-2.13)
and so is the function-mode stack: the device mode runs on the thread that installed the emulator (and where the
autograd engine carries its state), so one flag on the emulator (``Emulator.dormant``) says where the mode is.
"""

from __future__ import annotations

import torch

_push = torch._C._push_on_torch_dispatch_stack
_pop = torch._C._pop_torch_dispatch_stack
_stack_len = torch._C._len_torch_dispatch_stack
# the emulator's own tensor attributes (emulate/torch_api.py: ``Tensor.device``, ``is_mps``, ``is_cpu``, ``data``),
# Python properties over C-level ones, which make no aten call: the device mode runs them as it runs ``p.grad``
PLAIN_ATTRIBUTES: set = set()


def sleep(emu) -> bool:
    """Take the emulator's dispatch mode off the stack when it is the only mode there; whether it is off now."""
    mode = emu.dispatch
    if mode is None or _stack_len() != 1:
        return False
    top = _pop(None)
    if top is not mode:  # a mode of the program's, alone (ours is under nothing): leave the stack as it was
        _push(top)
        return False
    emu.dormant = True
    return True


def wake(emu) -> None:
    """Put the emulator's dispatch mode back at the bottom of the stack, under the modes pushed since it slept (a
    trace recorder, a program's own mode), as it was installed."""
    if not emu.dormant:
        return
    emu.dormant = False
    above = [_pop(None) for _ in range(_stack_len())]
    _push(emu.dispatch)
    for m in reversed(above):
        _push(m)
