"""What the Mac is for (``--situation``): decides which checklist items are critical.

A leaf module (no dataclasses, no stage) so that the argument definitions of ``report`` and ``check`` list
its values without importing the report's judgement (:mod:`mpsready.report.verdict`, which re-exports it).
"""

from __future__ import annotations

import enum


class Situation(str, enum.Enum):
    PROTOTYPE = "prototype"
    EXTENSIONS = "extensions"
    LONG_TRAINING = "long_training"
    DEPLOYMENT = "deployment"

    @property
    def title(self) -> str:  # type: ignore[override]  # the label shown; str.title is never used on it
        return {"prototype": "coursework or prototype", "extensions": "project with CUDA extensions",
                "long_training": "long training or many runs",
                "deployment": "checking a macOS deployment"}[self.value]
