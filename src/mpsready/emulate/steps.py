"""Steps for ``--max-steps``: optimizer steps, or backward passes in a program that makes no optimizer.

Optimizer steps are counted by a global post-step hook (``register_optimizer_step_post_hook``,
torch/optim/optimizer.py 2.0+). A training loop that updates its parameters by hand
(``p.data.add_(p.grad, alpha=-lr)`` after ``loss.backward()``, as pytorch/examples' word_language_model and
regression do) never calls ``Optimizer.step``: the hook never fires, and ``--max-steps`` used to stop nothing, so
such a program ran to its end or to the time limit. In a program that has built no ``torch.optim.Optimizer``, each
backward pass ends one step: ``--max-steps N`` stops it as the N+1-th backward pass starts (N whole steps done).

A program that builds an optimizer keeps the optimizer count alone, so gradient accumulation (several backward
passes per optimizer step) is never cut before its first update. ``Tensor.backward`` calls the module attribute
``torch.autograd.backward`` (torch/_tensor.py ``Tensor.backward``, 2.0-2.13), and every optimizer's constructor
calls ``Optimizer.__init__`` through ``super().__init__(params, defaults)`` (torch/optim/sgd.py, adam.py, ...,
2.0-2.13): both are patched for the emulated process only, when ``--max-steps`` is given, and undone.
"""

from __future__ import annotations

import functools
from typing import Callable

import torch

from mpsready.emulate.session import Emulator


def install(emu: Emulator) -> Callable[[], None]:
    """Count optimizer steps, optimizers built and backward passes into ``emu``; returns the undo."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    handle = register_optimizer_step_post_hook(lambda opt, args, kwargs: emu.step_done())
    if emu.max_steps is None:  # nothing to stop: the program's own torch stays as it is
        return handle.remove
    optimizer = torch.optim.Optimizer
    real_init = optimizer.__dict__["__init__"]
    real_backward = torch.autograd.backward

    @functools.wraps(real_init)
    def init(self, *args, **kwargs):
        emu.optimizer_made = True
        return real_init(self, *args, **kwargs)

    @functools.wraps(real_backward)
    def backward(*args, **kwargs):
        emu.backward_starting()
        return real_backward(*args, **kwargs)

    optimizer.__init__ = init  # type: ignore[method-assign]
    torch.autograd.backward = backward

    def undo() -> None:
        handle.remove()
        if optimizer.__dict__.get("__init__") is init:
            optimizer.__init__ = real_init  # type: ignore[method-assign]
        if torch.autograd.backward is backward:
            torch.autograd.backward = real_backward
    return undo
