"""A fake MPS backend reproducing what PyTorch on a Mac does, for tests on machines without one.

* ``is_built``/``is_available`` are given (the four documented combinations);
* ``has_kernel(op, key)`` answers from a table, like ``torch._C._dispatch_has_kernel_for_dispatch_key``
  on a macOS wheel: ops in ``missing`` have no MPS kernel and no composite kernel;
* ``device_type`` names the tensor device the fake stands in for ("cpu" so tests can run ops);
* ``warn_fallback(op)`` emits the CPU-fallback warning once per operator, as ``TORCH_WARN_ONCE`` does;
* ``to_float64(t)`` refuses with the MPS float64 text, as ``Tensor.to(torch.float64)`` does on MPS.
"""
import warnings

from mpsready.record.mps import FALLBACK_WARNING, FLOAT64_REFUSAL


class FakeMPS:
    name = "fake-mps"

    def __init__(self, built=True, available=True, missing=(), device_type="cpu"):
        self.built, self.available = built, available
        self.missing = set(missing)
        self.device_type = device_type
        self._warned = set()
        self.memory = 1000

    def is_built(self):
        return self.built

    def is_available(self):
        return self.available

    def has_kernel(self, op, key):
        if op in self.missing:
            return False
        return key == "MPS"

    def synchronize(self):
        pass

    def current_allocated_memory(self):
        self.memory += 24
        return self.memory

    def driver_allocated_memory(self):
        return 4096

    def warn_fallback(self, op):
        if op not in self._warned:  # TORCH_WARN_ONCE
            self._warned.add(op)
            warnings.warn(FALLBACK_WARNING.format(op=op), UserWarning)  # noqa: B028  # as TORCH_WARN_ONCE: no user frame

    def to_float64(self, t):
        raise TypeError(FLOAT64_REFUSAL)
