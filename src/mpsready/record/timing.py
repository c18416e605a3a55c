"""Which recorded steps count toward the typical step time: one rule for ``record`` (PRF101) and ``report``.

Step 0 carries one-time costs (kernel compilation and caching, allocator growth, lazy module set-up; on MPS
the Metal shader cache), so it is left out as warm-up whenever a later step exists (PRF102 reports it when
it is far slower). Pure Python: the report reads records without torch.

A time estimate needs :data:`MIN_MEASURED` measured steps (``record``'s default of 6 steps gives 5):
the report shows the median with the spread (fastest and slowest measured step) and projects the real
job's time only from that many; two steps once gave one demo run 2.9 h and the next 46.5 min.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

MIN_MEASURED = 5  # measured steps (after warm-up) a projection needs


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
    def spread_seconds(self) -> tuple[float, float] | None:
        """(fastest, slowest) measured step in seconds, or ``None`` without measured steps."""
        return (min(self.measured), max(self.measured)) if self.measured else None

    @property
    def enough(self) -> bool:
        """At least :data:`MIN_MEASURED` measured steps: enough for a median, a spread and a projection."""
        return len(self.measured) >= MIN_MEASURED

    @property
    def note(self) -> str:
        """``"step 0 left out as warm-up"`` when it was, else ``""``."""
        return "step 0 left out as warm-up" if self.warmup_steps else ""


def step_timing(seconds: Sequence[float]) -> StepTiming:
    """Split recorded step times (seconds, in step order) into warm-up and measured steps."""
    if len(seconds) >= 2:
        return StepTiming(tuple(seconds[1:]), 1)
    return StepTiming(tuple(seconds), 0)
