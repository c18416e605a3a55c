"""The representative step: how ``trace`` and ``record`` load and run a user's ENTRY.

See :mod:`mpsready.step.contract` for what an entry returns and
:mod:`mpsready.step.runner` for the stages it is run in.
"""

from mpsready.step.contract import Step, StageResult, StageStatus, STAGES
from mpsready.step.entry import Entry, EntryError, load_entry

__all__ = ["Step", "StageResult", "StageStatus", "STAGES", "Entry", "EntryError", "load_entry"]
