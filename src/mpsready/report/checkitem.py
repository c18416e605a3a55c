"""The acceptance checklist's data model: an item (1 to 8), its status, basis and evidence lines.

The status rules (what ``passed``, ``failed`` and ``not_checked`` need) are in :mod:`mpsready.report.checklist`;
no rendering here: renderers read :class:`CheckItem` and its :attr:`CheckItem.label`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Basis, Finding

TITLES = {
    1: "Dependencies install on the target macOS environment (or each one that cannot is named)",
    2: "Every CUDA-only component is identified, with an acceptable alternative for those the project needs",
    3: "MPS availability was checked in the environment actually used (built and available apart)",
    4: "A representative step runs on the target backend (data, operators, loss, backward, optimizer "
       "step, checkpoint save/reload, inference)",
    5: "Important outputs were compared with the CUDA reference under the study's tolerances",
    6: "CPU fallback: whether it was enabled, and which operators actually used it",
    7: "Versions, settings and observations were recorded",
    8: "The data-handling rules allow the chosen environment (a person's sign-off of what leaves the lab)",
}
SHORT = {1: "dependencies install", 2: "CUDA-only components have alternatives", 3: "MPS availability",
         4: "representative step on MPS", 5: "outputs match the CUDA reference", 6: "CPU fallback",
         7: "versions and settings recorded", 8: "data handling"}


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_CHECKED = "not_checked"


@dataclass(frozen=True)
class EvidenceLine:
    """One piece of evidence behind an item.

    ``kind``: ``finding`` (a rule code), ``trace`` (a traced operator), ``comparison`` (a compared
    tensor or summary), ``timing``, ``stage`` (a recorded stage), ``env``, ``record``, ``note``.
    """

    kind: str
    text: str
    basis: Basis | None
    code: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "text": self.text, "basis": self.basis.value if self.basis else None}
        if self.code:
            d["code"] = self.code
        if self.source:
            d["source"] = self.source
        return d


@dataclass
class CheckItem:
    number: int
    status: Status
    basis: Basis | None
    summary: str
    evidence: list[EvidenceLine] = field(default_factory=list)
    prediction: str | None = None  # "pass" or "fail": what the predictions say, when any
    workaround: str | None = None  # for a failure: the known way around it (alternative, fallback, upgrade)
    next_step: str | None = None  # what would check it (or check it by observation)
    attested: bool = False  # item 8 only: passed on a person's recorded sign-off (basis "attested", never observed)

    @property
    def title(self) -> str:
        return TITLES[self.number]

    @property
    def short(self) -> str:
        return SHORT[self.number]

    @property
    def label(self) -> str:
        """Human status, keeping predictions and observations apart."""
        if self.status is Status.PASSED:
            if self.attested:
                return "passed (attested)"
            return "passed" if self.basis is Basis.OBSERVED else "passed (static review)"
        if self.status is Status.FAILED:
            return "failed" if self.basis is Basis.OBSERVED else "failed (predicted)"
        return "not checked (predicted to pass)" if self.prediction == "pass" else "not checked"

    @property
    def observed_pass(self) -> bool:
        """Passed on the strongest evidence the item allows: an observation, or for item 8 a sign-off."""
        return self.status is Status.PASSED and (self.basis is Basis.OBSERVED or self.attested)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number, "title": self.title, "status": self.status.value,
            "basis": "attested" if self.attested else (self.basis.value if self.basis else None), "label": self.label,
            "prediction": self.prediction, "summary": self.summary,
            "evidence": [e.to_dict() for e in self.evidence],
            "workaround": self.workaround, "next_step": self.next_step,
        }


def finding_line(f: Finding) -> EvidenceLine:
    text = f"{f.code} {f.message}"
    if str(f.location) != "-":
        text += f" ({f.location})"
    return EvidenceLine("finding", text, f.basis, code=f.code, source=f.source)


def name_list(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# ---------------------------------------------------------------------------------------------
# Item 1: dependencies install on macOS
# ---------------------------------------------------------------------------------------------
