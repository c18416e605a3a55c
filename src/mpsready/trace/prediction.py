"""The prediction of a trace as plain records: per op (:class:`OpPrediction`, with its :class:`Problem` list) and
for the whole trace (:class:`Prediction`), as :func:`mpsready.trace.predict.predict` builds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpsready.findings import Basis, Finding
from mpsready.frames import Frame


@dataclass(frozen=True)
class Problem:
    """Why an op does not simply run on MPS: ``kind`` is ``missing``, ``always_fallback``, ``guard``,
    ``sparse``, ``macos``, ``dtype`` or ``unknown``; ``dtype`` is set for ``dtype``."""

    kind: str
    detail: str
    message: str | None = None
    fixed_in: str | None = None
    dtype: str | None = None
    outcome: str | None = field(default=None, compare=False)  # the judge's outcome (not in the JSON)


@dataclass
class OpPrediction:
    """The prediction for one op as MPS would dispatch it, over all its recorded calls.

    ``recorded_as``: the device-specific names the trace saw when they differ from ``op``
    (``aten::mkldnn_convolution`` for ``aten::_mps_convolution``). ``count``/``seconds``: calls
    and traced wall time (seconds, including callees). ``call_share``/``time_share``: fraction of
    the predicted device calls and of the traced step time (0..1); meaningful for problems.
    """

    op: str
    verdict: str
    status: str
    how: str = ""
    recorded_as: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    count: int = 0
    seconds: float = 0.0
    stages: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    frame_stages: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    call_share: float = 0.0
    time_share: float = 0.0
    fixed_in: str | None = None
    sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "op": self.op, "basis": Basis.PREDICTED.value, "verdict": self.verdict, "status": self.status,
            "how": self.how, "count": self.count, "seconds": round(self.seconds, 7), "stages": self.stages,
            "dtypes": self.dtypes, "locations": [dict(f.to_dict(), stage=s) for f, s in
                                                 zip(self.frames, self.frame_stages)],
        }
        if self.recorded_as:
            d["recorded_as"] = self.recorded_as
        if self.parents:
            d["called_by"] = self.parents
        if self.problems:
            d["problems"] = [{k: v for k, v in p.__dict__.items() if v is not None and k != "outcome"}
                             for p in self.problems]
            d["call_share"] = round(self.call_share, 4)
            d["time_share"] = round(self.time_share, 4)
            d["fixed_in"] = self.fixed_in
        if self.sources:
            d["sources"] = self.sources
        return d


@dataclass
class Prediction:
    """All op predictions and findings for one target (``torch`` is the resolved table release)."""

    torch: str
    macos: str
    fallback: bool
    ops: list[OpPrediction]
    findings: list[Finding]
    summary: dict[str, Any]

    def op(self, name: str) -> OpPrediction | None:
        return next((o for o in self.ops if o.op == name), None)
