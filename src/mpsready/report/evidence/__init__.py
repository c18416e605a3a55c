"""Evidence the report judges from: one adapter module per stage output.

Each adapter turns a stage's JSON (or a run record directory) into a small dataclass,
tolerant of missing fields: unknown stays ``None`` and never reads as a good result.
:class:`Evidence` bundles whatever subset of stage outputs exists, plus why a stage
did not run (``skipped``), so the checklist can say "not checked, because ...".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mpsready.report.evidence._util import EvidenceError

if TYPE_CHECKING:  # the module imports the kit's archive reader: loaded only by report --mac-results
    from mpsready.report.evidence.mac import MacEvidence
from mpsready.report.evidence.compare import CompareEvidence
from mpsready.report.evidence.env import EnvEvidence
from mpsready.report.evidence.record import RecordEvidence
from mpsready.report.evidence.run import RunEvidence
from mpsready.report.evidence.scan import ScanEvidence
from mpsready.report.evidence.tests import TestsEvidence
from mpsready.report.evidence.trace import TraceEvidence, TracedOp


@dataclass
class Evidence:
    scan: ScanEvidence | None = None
    env: EnvEvidence | None = None
    trace: TraceEvidence | None = None
    records: list[RecordEvidence] = field(default_factory=list)
    compare: CompareEvidence | None = None
    run: RunEvidence | None = None  # an emulated Mac run (mpsready run): predicted evidence for items 4 and 6
    tests: TestsEvidence | None = None  # the test suite on the emulated Mac (pytest --mps-emulate): item 4
    skipped: dict[str, str] = field(default_factory=dict)  # stage -> why it did not run
    # what a kit observed on a borrowed Mac (report --mac-results): its records, env and comparison are merged
    # into the fields above by the CLI; this keeps the rest (installs, tests, kit check, sign-off) for items 1 and 8
    # and the predicted-vs-observed table
    mac: MacEvidence | None = None

    def record_on(self, backend: str) -> RecordEvidence | None:
        """The first record made on ``backend`` ("mps", "cuda", "cpu"), else ``None``."""
        return next((r for r in self.records if r.backend == backend), None)

    def envs(self) -> list[EnvEvidence]:
        """The standalone env record first, then those embedded in run records."""
        out = [self.env] if self.env else []
        out += [r.env for r in self.records if r.env is not None]
        return out

    def mac_env(self) -> EnvEvidence | None:
        return next((e for e in self.envs() if e.is_mac), None)

    def stages_present(self) -> list[str]:
        names = [("scan", self.scan), ("env", self.env), ("trace", self.trace),
                 ("record", self.records or None), ("compare", self.compare), ("run", self.run),
                 ("tests", self.tests), ("mac-results", self.mac if self.mac is None or self.mac.ran else None),
                 ("kit", self.mac if self.mac is not None and not self.mac.ran else None)]
        return [n for n, v in names if v is not None]


__all__ = ["Evidence", "EvidenceError", "CompareEvidence", "EnvEvidence", "RecordEvidence", "RunEvidence", "ScanEvidence",
           "TestsEvidence", "TraceEvidence", "TracedOp"]
