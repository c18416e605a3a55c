"""Which recorded steps count toward the typical step time: one rule for ``record`` (PRF101) and ``report``.

Step 0 carries one-time costs (kernel compilation and caching, allocator growth, lazy module set-up; on MPS
the Metal shader cache), so it is left out as warm-up whenever a later step exists (PRF102 reports it when
it is far slower). Pure Python: the report reads records without torch.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class StepTiming:
    """``measured``: the step times in seconds that count (all but step 0 when there are 2+ steps);
    ``warmup_steps``: how many leading steps were left out (0 or 1)."""

    measured: tuple[float, ...]
    warmup_steps: int

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.measured) if self.measured else None

    @property
    def note(self) -> str:
        """``"step 0 left out as warm-up"`` when it was, else ``""``."""
        return "step 0 left out as warm-up" if self.warmup_steps else ""


def step_timing(seconds: Sequence[float]) -> StepTiming:
    """Split recorded step times (seconds, in step order) into warm-up and measured steps."""
    if len(seconds) >= 2:
        return StepTiming(tuple(seconds[1:]), 1)
    return StepTiming(tuple(seconds), 0)
