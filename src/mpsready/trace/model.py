"""What a trace records, as plain frozen data (no torch import).

The recorder (:mod:`mpsready.trace.recorder`) fills an :class:`OpTrace`; the
predictor (:mod:`mpsready.trace.predict`) reads it. Keeping the recorded facts
apart from the judgement lets a trace be classified for many PyTorch and macOS
versions, and lets tests feed the predictor a hand-written op list (for example
the op names a CUDA machine would dispatch, since there is no GPU here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from mpsready.frames import Frame

__all__ = ["DtypeEvent", "Frame", "OpCall", "OpTrace"]  # Frame: re-exported for older callers


@dataclass(frozen=True)
class OpCall:
    """One aggregated group of calls of one aten overload.

    Calls are grouped by (stage, op, parent, dtypes in, dtypes out, device, layouts, frame):
    ``count`` calls took ``seconds`` of wall time in total (including the ops they called).

    * ``op``: the overload as dispatched, ``"aten::add.Tensor"``; ``"aten::relu"`` for a
      default overload (the naming of ``mpsready.ops``).
    * ``parent``: the composite op whose kernel made this call (nested recording), or ``None``
      for an op the Python program dispatched itself.
    * ``in_dtypes`` / ``out_dtypes``: dtype names of the tensor arguments and results, in
      order, e.g. ``("float32", "int64")``.
    * ``device``: the device of the first tensor argument or result (``"cpu"``, ``"cuda:0"``;
      ``"meta"`` for the device moves that a CPU trace simulates, see the recorder).
    * ``layouts``: non-strided layouts seen among arguments and results
      (``("sparse_coo",)``); empty for ordinary dense tensors.
    """

    stage: str
    op: str
    count: int = 1
    seconds: float = 0.0
    parent: str | None = None
    in_dtypes: tuple[str, ...] = ()
    out_dtypes: tuple[str, ...] = ()
    device: str = "cpu"
    layouts: tuple[str, ...] = ()
    frame: Frame | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"stage": self.stage, "op": self.op, "count": self.count,
                             "seconds": round(self.seconds, 7), "in_dtypes": list(self.in_dtypes),
                             "out_dtypes": list(self.out_dtypes), "device": self.device}
        if self.parent:
            d["parent"] = self.parent
        if self.layouts:
            d["layouts"] = list(self.layouts)
        if self.frame:
            d["frame"] = self.frame.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OpCall":
        return cls(stage=d["stage"], op=d["op"], count=int(d.get("count", 1)), seconds=float(d.get("seconds", 0.0)),
                   parent=d.get("parent"), in_dtypes=tuple(d.get("in_dtypes", ())),
                   out_dtypes=tuple(d.get("out_dtypes", ())), device=d.get("device", "cpu"),
                   layouts=tuple(d.get("layouts", ())),
                   frame=Frame.from_dict(d["frame"]) if d.get("frame") else None)


@dataclass(frozen=True)
class DtypeEvent:
    """A tensor of a dtype MPS lacks or limits (float64, complex128, bfloat16, complex64) that
    reached the device during a step stage.

    ``op`` is the op that created it on the device, or, when it entered without a traced op
    (``torch.from_numpy`` shares memory and dispatches nothing, a no-op ``.to("cpu")`` on a CPU
    trace), the first op that used it; ``how`` says which (``"created"`` or ``"used"``).
    ``origin`` is the op that first produced the tensor anywhere (e.g. ``aten::lift_fresh`` for a
    NumPy array, ``aten::arange``), when it differs from ``op``.
    """

    dtype: str
    stage: str
    op: str
    how: str
    count: int = 1
    frame: Frame | None = None
    origin: str | None = None
    origin_frame: Frame | None = None
    internal: str | None = None  # the PyTorch function that created it, e.g. "torch/amp/grad_scaler.py:unscale_"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"dtype": self.dtype, "stage": self.stage, "op": self.op, "how": self.how,
                             "count": self.count}
        if self.internal:
            d["internal"] = self.internal
        if self.frame:
            d["frame"] = self.frame.to_dict()
        if self.origin:
            d["origin"] = self.origin
        if self.origin_frame:
            d["origin_frame"] = self.origin_frame.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DtypeEvent":
        return cls(dtype=d["dtype"], stage=d["stage"], op=d["op"], how=d["how"], count=int(d.get("count", 1)),
                   frame=Frame.from_dict(d["frame"]) if d.get("frame") else None, origin=d.get("origin"),
                   origin_frame=Frame.from_dict(d["origin_frame"]) if d.get("origin_frame") else None,
                   internal=d.get("internal"))


@dataclass
class OpTrace:
    """Everything one traced run recorded.

    ``stages`` holds :meth:`mpsready.step.StageResult.to_dict` dicts in run order;
    ``stage_seconds`` the traced wall time per stage (seconds, summed over steps);
    ``torch_version`` and ``device`` describe the machine that ran the trace.
    """

    entry: str
    device: str
    torch_version: str
    calls: list[OpCall] = field(default_factory=list)
    dtype_events: list[DtypeEvent] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    expansion_failures: dict[str, str] = field(default_factory=dict)  # op -> error text
    expanded_ops: list[str] = field(default_factory=list)  # composites whose callees were recorded
    view_ops: list[str] = field(default_factory=list)  # composite views recorded without their callees
    settings: dict[str, Any] = field(default_factory=dict)  # Python-level paths forced to match MPS

    @property
    def step_seconds(self) -> float:
        return sum(self.stage_seconds.values())

    @property
    def emulated(self) -> bool:
        """True when the step ran on the emulated MPS device of :mod:`mpsready.emulate` (no Mac)."""
        return bool(self.settings.get("emulated"))

    @property
    def device_label(self) -> str:
        """Where the step ran, as outputs name it: ``emulated mps`` (the emulated device, computed on this
        CPU), ``cpu (CPU trace)`` (every op judged as the CPU dispatches it), or the device (``cuda``,
        ``mps`` on a Mac)."""
        if self.emulated:
            return "emulated mps"
        if self.device.split(":")[0] == "cpu":
            return "cpu (CPU trace)"
        return self.device

    def ops(self) -> list[str]:
        """Distinct recorded overloads, sorted."""
        return sorted({c.op for c in self.calls})

    def to_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "device": self.device, "torch_version": self.torch_version,
                "calls": [c.to_dict() for c in self.calls],
                "dtype_events": [e.to_dict() for e in self.dtype_events],
                "stages": self.stages, "stage_seconds": {k: round(v, 6) for k, v in self.stage_seconds.items()},
                "expansion_failures": dict(self.expansion_failures), "expanded_ops": list(self.expanded_ops),
                "view_ops": list(self.view_ops), "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OpTrace":
        """Rebuild a trace saved by :meth:`to_dict`. Raises ``ValueError`` (or ``KeyError``/``TypeError``)
        for a document of the wrong shape, so a hand-edited or damaged file is refused when read rather
        than failing half-way through a render."""
        _expect(isinstance(d, Mapping), f"'trace' must be an object, not a JSON {type(d).__name__}")
        for key in ("entry", "device", "torch_version"):
            _expect(isinstance(d[key], str), f"trace {key} must be a string")
        stages = list(d.get("stages", []))
        for i, st in enumerate(stages):
            _expect(isinstance(st, dict) and isinstance(st.get("stage"), str) and isinstance(st.get("status"), str),
                    f"trace stage {i + 1} must be an object with 'stage' and 'status' strings")
        stage_seconds = {str(k): float(v) for k, v in dict(d.get("stage_seconds", {})).items()}
        calls = [OpCall.from_dict(c) for c in d.get("calls", [])]
        for c in calls:
            _expect(isinstance(c.op, str) and isinstance(c.stage, str), "trace call 'op' and 'stage' must be strings")
        return cls(entry=d["entry"], device=d["device"], torch_version=d["torch_version"],
                   calls=calls,
                   dtype_events=[DtypeEvent.from_dict(e) for e in d.get("dtype_events", [])],
                   stages=stages, stage_seconds=stage_seconds,
                   expansion_failures=dict(d.get("expansion_failures", {})),
                   expanded_ops=list(d.get("expanded_ops", [])), view_ops=list(d.get("view_ops", [])),
                   settings=dict(d.get("settings", {})))


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)
