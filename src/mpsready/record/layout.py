"""The run record format, version 1 (documented in ``docs/run-record.md``).

A run record is a directory::

    RUN/
      record.json              manifest (schema "mpsready.record", version 1)
      tensors.jsonl            one JSON object per recorded tensor: statistics, never values
      tensors/step-0000.safetensors   raw tensors, only with --save-tensors

``record.json`` holds the envelope (``schema``, ``mpsready``, ``created``), ``basis``
(``observed``: it was measured on ``device``), ``device``, ``entry``, ``steps``
(requested), ``seed`` (``{"value", "how"}``), ``precision`` (settings in force),
``env`` (the ``mpsready env`` record), ``stages`` (one
:class:`~mpsready.step.contract.StageResult` dict each), ``step_metrics`` (per step:
``index``, ``loss``, ``seconds``, ``peak_memory_bytes``), ``memory``, ``fallback``
(``enabled`` and per-operator CPU-fallback call counts observed on MPS), ``inputs``
(shape, dtype and value range of each input tensor, for ``--synthetic-inputs``),
``raw_tensors`` (bool) and ``tensor_count``.

Fields added by ``mpsready record`` (still version 1: readers ignore what they do not know;
documented in ``docs/run-record.md``): ``device_kind`` (``cpu``/``cuda``/``mps``),
``observed_on`` (the device in words), ``mps_run`` (true only for a run on MPS), ``dtype``,
``synthetic_inputs`` (the record whose input shapes were replayed, or null), ``raw_dir``,
``warnings`` (distinct warning texts of the run), ``worker`` (``returncode``, ``crashed``, ``how``,
``output_tail``), ``findings`` (ENV2xx/OPS2xx/PRF1xx, NUM301), ``nan_check``, ``first_nonfinite`` and
``nan_check_detail`` (the first NaN/Inf op, :mod:`mpsready.record.numerics_hook`), ``layer_inputs``
(``--save-inputs``). ``inputs`` is
``{"structure": batch tree, "tensors": [{"name", "shape", "dtype", "min", "max"}]}``; each
``step_metrics`` item also has ``seconds_with_recording``, ``memory_source`` and, for a non-finite
loss, ``loss`` null with ``loss_nonfinite`` ("nan", "inf", "-inf"). The stage results may say
``crashed`` (the process died in that stage; the parent process saw it).

Each line of ``tensors.jsonl`` is a :class:`TensorEntry`. ``key`` is unique in the
record and is also the tensor's name in the safetensors file of its step. Keys read
``"{kind}:{name}"`` where kind is one of :data:`KINDS` and ``name`` is the module path
(activations, with ``#N`` for the N-th call of a module within the step) or the
parameter name; ``order`` is the position in execution order within its kind and step,
so forward order and backward order can be followed.

Nothing in a record is ever unpickled: JSON and safetensors only.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from mpsready import safeio
from mpsready.schema import check_envelope, envelope

SCHEMA_NAME = "mpsready.record"
SCHEMA_VERSION = 1
MANIFEST = "record.json"
TENSORS = "tensors.jsonl"
RAW_DIR = "tensors"

# input: a batch tensor; activation: a module output (forward hook); output: the model output;
# loss: the loss; grad: a parameter gradient after backward; param: a parameter after optimizer step.
KINDS = ("input", "activation", "output", "loss", "grad", "param")


@dataclass(frozen=True)
class TensorStats:
    """Summary statistics of a tensor, computed in float64 over finite elements.

    ``mean``/``std``/``min``/``max``/``l2`` are ``None`` for an empty tensor or one with
    no finite element; ``nan`` and ``inf`` count the non-finite elements.
    """

    numel: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    l2: float | None
    nan: int
    inf: int


@dataclass(frozen=True)
class TensorEntry:
    key: str
    kind: str
    name: str
    step: int
    order: int
    shape: tuple[int, ...]
    dtype: str  # torch dtype name without the "torch." prefix, e.g. "float32"
    stats: TensorStats
    checksum: str  # sha256 of the tensor's contiguous CPU bytes, hex
    module_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["shape"] = list(self.shape)
        if d["module_type"] is None:
            del d["module_type"]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TensorEntry":
        """Raises ``KeyError`` for a missing field and ``ValueError``/``TypeError`` for a value of the wrong type
        or out of range (a non-integer or negative count, a non-finite statistic)."""
        for key in ("key", "kind", "name", "dtype", "checksum"):
            if not isinstance(d[key], str):
                raise TypeError(f"{key!r} must be a string")
        if not isinstance(d["shape"], list) or not all(_count(x) for x in d["shape"]):
            raise ValueError("'shape' must be a list of non-negative integers")
        stats = d["stats"]
        if not isinstance(stats, dict):
            raise TypeError("'stats' must be an object")
        for key in ("numel", "nan", "inf"):
            if not _count(stats.get(key)):
                raise ValueError(f"stats.{key} must be a non-negative integer")
        for key in ("mean", "std", "min", "max", "l2"):
            if stats.get(key) is not None and not safeio.finite_number(stats[key]):
                raise ValueError(f"stats.{key} must be a finite number or null")
        for key in ("step", "order"):
            if not _count(d[key]):
                raise ValueError(f"{key!r} must be a non-negative integer")
        return cls(key=d["key"], kind=d["kind"], name=d["name"], step=d["step"], order=d["order"],
                   shape=tuple(d["shape"]), dtype=d["dtype"], stats=TensorStats(**stats),
                   checksum=d["checksum"], module_type=d.get("module_type"))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0][:300] if text else type(exc).__name__


# The manifest fields readers rely on, with the JSON type each must have when present (null allowed where
# a record may lack it); a hand-edited or damaged record.json is refused on open, not mid-comparison.
_STR_FIELDS = ("device", "device_kind", "basis", "observed_on", "dtype")
_OPTIONAL_STR_FIELDS = ("entry", "raw_dir", "synthetic_inputs")
_INT_FIELDS = ("steps", "tensor_count")
_OBJECT_FIELDS = ("seed", "precision", "env", "memory", "fallback", "inputs", "worker")
_LIST_OF_OBJECT_FIELDS = ("stages", "step_metrics", "findings")


def _check_manifest(doc: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first field of ``record.json`` with the wrong JSON type."""
    def bad(key: str, expected: str) -> ValueError:
        return ValueError(f"field {key!r} must be {expected}, not {_json_type(doc[key])}")

    for key in _STR_FIELDS:
        if key in doc and not isinstance(doc[key], str):
            raise bad(key, "a string")
    for key in _OPTIONAL_STR_FIELDS:
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise bad(key, "a string or null")
    for key in _INT_FIELDS:
        if key in doc and (not isinstance(doc[key], int) or isinstance(doc[key], bool)):
            raise bad(key, "an integer")
    for key in _OBJECT_FIELDS:
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise bad(key, "an object or null")
    for key in _LIST_OF_OBJECT_FIELDS:
        if key not in doc:
            continue
        if not isinstance(doc[key], list):
            raise bad(key, "a list")
        for i, item in enumerate(doc[key]):
            if not isinstance(item, dict):
                raise ValueError(f"{key}[{i}] must be an object, not {_json_type(item)}")
    for i, st in enumerate(doc.get("stages", [])):
        if not (isinstance(st.get("stage"), str) and isinstance(st.get("status"), str)):
            raise ValueError(f"stages[{i}] must have 'stage' and 'status' strings")
    for i, st in enumerate(doc.get("stages", [])):
        if "seconds" in st and not (safeio.finite_number(st["seconds"]) and st["seconds"] >= 0):
            raise ValueError(f"stages[{i}].seconds must be a non-negative number, not {_shown(st['seconds'])}")
    for i, m in enumerate(doc.get("step_metrics", [])):
        for key, value in m.items():
            if key in ("index", "loss", "seconds", "seconds_with_recording", "peak_memory_bytes") \
                    and value is not None and not safeio.finite_number(value):
                raise ValueError(f"step_metrics[{i}].{key} must be a number or null, not {_json_type(value)}")
            if key in ("seconds", "seconds_with_recording", "peak_memory_bytes", "index") and value is not None \
                    and value < 0:
                raise ValueError(f"step_metrics[{i}].{key} must not be negative, not {value}")


def _shown(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else _json_type(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def raw_file(step: int) -> str:
    return f"{RAW_DIR}/step-{step:04d}.safetensors"


class RecordError(ValueError):
    """A path is not a readable run record of a version this mpsready understands."""


@dataclass
class RunRecord:
    """A loaded run record. ``manifest`` is ``record.json``; tensors are read on demand."""

    path: Path
    manifest: dict[str, Any]
    _entries: list[TensorEntry] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "RunRecord":
        """Open a record directory; raises :class:`RecordError` with a clear message."""
        p = Path(path)
        if not p.exists():
            raise RecordError(f"run record not found: {p}")
        mf = p / MANIFEST if p.is_dir() else p
        try:
            doc = safeio.loads(safeio.read_text(mf))  # a regular file; finite, in-range numbers only
        except FileNotFoundError:
            raise RecordError(f"{p} is not a run record (no {MANIFEST})") from None
        except safeio.BadArtifact as exc:
            raise RecordError(f"{mf}: {exc}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise RecordError(f"cannot read {mf}: {_one_line(exc)}") from None
        try:
            check_envelope(doc, SCHEMA_NAME, SCHEMA_VERSION)
            _check_manifest(doc)
        except ValueError as exc:
            raise RecordError(f"{mf}: {exc}") from None
        return cls(path=mf.parent, manifest=doc)

    @property
    def device(self) -> str:
        return self.manifest.get("device", "?")

    @property
    def stages(self) -> list[dict[str, Any]]:
        return list(self.manifest.get("stages", []))

    @property
    def step_metrics(self) -> list[dict[str, Any]]:
        return list(self.manifest.get("step_metrics", []))

    def entries(self) -> list[TensorEntry]:
        if self._entries is None:
            self._entries = list(self.iter_entries())
        return self._entries

    def iter_entries(self) -> Iterator[TensorEntry]:
        f = self.path / TENSORS
        if not f.exists():
            return
        try:
            raw = safeio.open_regular(f)
        except (safeio.BadArtifact, OSError) as exc:
            raise RecordError(f"{f}: {exc}" if isinstance(exc, safeio.BadArtifact) else f"cannot read {f}: {exc}") from None
        with raw as fh:
            for n, data in enumerate(fh, 1):
                try:
                    line = data.decode("utf-8")  # inside the try: a damaged byte is this line's error
                    if not line.strip():
                        continue
                    d = safeio.loads(line)
                    if not isinstance(d, dict):
                        raise TypeError(f"a JSON {type(d).__name__}, not an object")
                    yield TensorEntry.from_dict(d)
                except KeyError as exc:
                    raise RecordError(f"{f}:{n}: malformed tensor entry: no {exc.args[0]!r} field") from None
                except (ValueError, TypeError, AttributeError) as exc:  # ValueError includes JSONDecodeError
                    raise RecordError(f"{f}:{n}: malformed tensor entry: {_one_line(exc)}") from None
                except RecursionError:
                    raise RecordError(f"{f}:{n}: malformed tensor entry: JSON nested too deeply") from None

    def has_raw(self, step: int = 0) -> bool:
        return (self.path / raw_file(step)).exists()

    def raw_path(self, step: int) -> Path:
        return self.path / raw_file(step)


def write_manifest(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    """Write ``record.json`` atomically (temp file, then rename): a reader never sees half a manifest.

    Added for ``mpsready record``, whose child process streams ``tensors.jsonl`` while the
    parent writes the manifest last; :meth:`RecordWriter.close` uses it too.
    """
    p = Path(path)
    tmp = p / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, allow_nan=False, default=str), encoding="utf-8")
    tmp.replace(p / MANIFEST)


class RecordWriter:
    """Writes a run record directory. Use as a context manager; ``close()`` writes the manifest."""

    def __init__(self, path: str | os.PathLike[str], **manifest: Any):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.manifest: dict[str, Any] = envelope(SCHEMA_NAME, SCHEMA_VERSION, basis="observed", **manifest)
        self._fh = (self.path / TENSORS).open("w", encoding="utf-8")
        self.count = 0

    def add(self, entry: TensorEntry) -> None:
        self._fh.write(json.dumps(entry.to_dict(), separators=(",", ":"), allow_nan=False) + "\n")
        self.count += 1

    def close(self) -> None:
        if self._fh.closed:
            return
        self._fh.close()
        self.manifest["tensor_count"] = self.count
        write_manifest(self.path, self.manifest)

    def __enter__(self) -> "RecordWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
