"""Query API over the shipped per-release MPS support tables (no torch import; data loaded lazily).

Contract: ``/work/wt/OPS_API.md``. Data: ``mpsready/ops/data/tables/torch-<V>.json.gz`` built by
``python -m mpsready.ops.build`` from each release's ``native_functions.yaml`` plus curated overlays
(``data/curated/*.yaml``), every fact with its source (research note ``mps_support_data.md``).

Example::

    db = load_db("2.5")                       # -> table of torch 2.5.1
    db.lookup("aten::upsample_bicubic2d").status   # "missing" (first kernel in 2.6, yaml)
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from mpsready import versions
from mpsready.ops.format import INDEX_NAME, SCHEMA_NAME, SCHEMA_VERSION, table_name

TABLES = "mpsready.ops.data.tables"
# statuses under which the op does not run on the MPS device (trace/report use this to flag an op)
BAD_STATUSES = ("missing", "cpu_fallback_always", "guard")


# versions: one parser for every stage (mpsready.versions); the old private names stay for this module
_vtuple = versions.release
_macos_lt = versions.macos_lt


def _read_gz(name: str) -> dict[str, Any]:
    data = resources.files(TABLES).joinpath(name).read_bytes()
    return json.loads(gzip.decompress(data))


@lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    doc = _read_gz(INDEX_NAME)
    if doc.get("schema", {}).get("version", 0) > SCHEMA_VERSION:
        raise ValueError(f"ops index schema {doc['schema']} is newer than this mpsready understands")
    return doc


def shipped_versions() -> list[str]:
    """Releases with a shipped table, oldest first, e.g. ``["2.3.1", ..., "2.14.1"]``."""
    return list(_index()["releases"])


def later_release(after: str, pred: Callable[["SupportDB"], bool]) -> str | None:
    """The first shipped release after ``after`` (``"2.5.1"``) whose table satisfies ``pred(db)``, or ``None``:
    where a fix first shipped, as far as the shipped tables show."""
    at = _vtuple(after)
    for rel in shipped_versions():
        if _vtuple(rel) > at and pred(load_db(rel)):
            return rel
    return None


def resolve_version(version: str) -> str:
    """Map a user version to a shipped release, never to another minor release.

    An exact shipped release -> itself (``"2.5.0"`` -> ``"2.5.0"``); otherwise the newest shipped patch release
    of the same major.minor (``"2.5"``, ``"2.5.2"``, ``"2.5.1+cpu"`` -> ``"2.5.1"``). Raises ``ValueError`` when no
    table of that major.minor is shipped (older than every table, newer than the newest, or a gap): the data
    says so rather than answer for another release.
    """
    want = _vtuple(version)
    if len(want) < 2:
        raise ValueError(f"version {version!r} needs at least major.minor, e.g. 2.5")
    releases = shipped_versions()
    for rel in releases:
        if _vtuple(rel) == want:
            return rel
    same_minor = [r for r in releases if _vtuple(r)[:2] == want[:2]]
    if same_minor:
        return same_minor[-1]
    raise ValueError(f"no MPS support table for torch {version}: shipped tables cover "
                     f"{releases[0]} to {releases[-1]} ({', '.join(releases)})")


# ---------------------------------------------------------------- names --------------------------------------
def normalize_op(name: str) -> tuple[str, str]:
    """Split an operator name into ``(namespace, overload key)``.

    Accepts ``aten::add.Tensor``, ``add.Tensor``, ``aten.add.Tensor``, ``aten::relu``, ``relu.default``,
    ``aten.relu.default``. The key drops ``.default`` (yaml spelling: ``relu``). Raises ``ValueError`` on empty input.
    """
    text = str(name).strip()
    if not text:
        raise ValueError("empty operator name")
    if "::" in text:
        ns, rest = text.split("::", 1)
    else:
        parts = text.split(".")
        if len(parts) >= 2 and parts[0] == "aten":
            ns, rest = "aten", ".".join(parts[1:])
        elif len(parts) == 3:  # "prims.foo.default" style from a TorchDispatchMode func
            ns, rest = parts[0], ".".join(parts[1:])
        else:
            ns, rest = "aten", text
    if rest.endswith(".default"):
        rest = rest[: -len(".default")]
    return ns, rest


def check_op_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is spelled like an operator (``aten::add.Tensor``, ``relu``,
    ``aten.relu.default``): a namespace, a name and an optional overload, each a Python identifier, as in
    the ``func:`` lines of ``native_functions.yaml``. For names typed by a user; a well-formed name that no
    table knows is still answered ("unknown")."""
    ns, key = normalize_op(name)
    parts = [ns, *key.split(".", 1)]
    if str(name).strip().startswith("torch."):
        # `torch.linalg.eig` is the Python name: read as namespace `torch` it was answered "unknown" with exit 0,
        # while no operator lives in a `torch` namespace (native_functions.yaml: every entry is aten)
        known, py = _index()["history"], str(name).strip()[len("torch."):]
        guess = [k for k in (py.replace(".", "_"), py.rsplit(".", 1)[-1]) if k in known]
        hint = f"; its aten operator is probably aten::{guess[0]}" if guess else ""
        raise ValueError(f"{name!r} is a Python name, not an operator name such as aten::add.Tensor, add.Tensor "
                         f"or relu{hint}")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"{name!r} is not an operator name such as aten::add.Tensor, add.Tensor or relu")


def check_op_known(name: str, db: "SupportDB | None" = None) -> None:
    """Raise ``ValueError`` when ``name`` is an ``aten`` operator that no shipped release's
    ``native_functions.yaml`` has (nor ``db``, a ``--table`` dump): a typo, not an op to answer "unknown" for
    (h40c: ``ops aten::nosuch_op`` exited 0 and listed the global dtype rules as if they applied to it). The
    message names the overloads of a bare name (``add``: ``add.Tensor``, ...) or the closest known names. Other
    namespaces and ops removed in a later release stay answerable ("unknown", never guessed)."""
    import difflib

    ns, key = normalize_op(name)
    known = _index()["history"]
    if ns != "aten" or key in known or (db is not None and key in db._ops):
        return
    overloads = sorted(k for k in known if k.split(".", 1)[0] == key)
    if overloads:
        hint = "give an overload: " + ", ".join(f"aten::{k}" for k in overloads[:8]) + (
            f" (and {len(overloads) - 8} more)" if len(overloads) > 8 else "")
    else:
        close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
        hint = "closest: " + ", ".join(f"aten::{k}" for k in close) if close else "no similar name"
    releases = shipped_versions()
    if overloads:  # `aten::add` is an operator; the tables answer per overload ("is not an operator" misled)
        raise ValueError(f"{_display(ns, key)} names {len(overloads)} overloads and the tables answer for one of "
                         f"them; {hint}")
    raise ValueError(f"{_display(ns, key)} is not an operator of PyTorch {releases[0]} to {releases[-1]} (not in "
                     f"native_functions.yaml of any shipped release); {hint}")


def _display(ns: str, key: str) -> str:
    return f"{ns}::{key}"


# ---------------------------------------------------------------- results ------------------------------------
@dataclass(frozen=True)
class DtypeRule:
    """A global dtype rule for MPS in one release (research note §6).

    ``effect``: ``"error"`` (never supported), ``"unsupported_before"`` (needs ``min_macos``), ``"limited"``
    (works partly before ``min_macos``).
    """

    dtype: str
    effect: str
    min_macos: str | None
    message: str
    source: str


@dataclass(frozen=True)
class OpSupport:
    """MPS support of one aten overload in one release (see OPS_API.md for every field).

    ``status``: ``kernel`` | ``composite`` (fine iff its callees are) | ``missing`` (NotImplementedError, or CPU
    with a warning under PYTORCH_ENABLE_MPS_FALLBACK=1) | ``cpu_fallback_always`` (always CPU with a warning) |
    ``guard`` (always raises on MPS) | ``unknown`` (not in the table; never guessed).
    """

    op: str
    torch: str
    status: str
    how: str
    cuda: str
    sparse_mps: bool
    core: bool
    dtype_exceptions: dict = field(default_factory=dict)
    conditions: tuple[str, ...] = ()
    min_macos: str | None = None
    since_torch: str | None = None
    fixed_in: str | None = None
    removed_in: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    kernel_since: str | None = None  # first shipped release where this op has an MPS kernel (status "kernel")
    # for a missing functional/in-place variant: the structured out= overload it delegates to, the name MPS's
    # error quotes (``aten::index_copy.out`` for ``index_copy_``); None otherwise
    delegate: str | None = None

    @property
    def runs_on_mps(self) -> bool:
        """True iff an MPS kernel runs this overload (``status == "kernel"``)."""
        return self.status == "kernel"

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op, "torch": self.torch, "status": self.status, "how": self.how, "cuda": self.cuda,
            "sparse_mps": self.sparse_mps, "core": self.core, "dtype_exceptions": self.dtype_exceptions,
            "conditions": list(self.conditions), "min_macos": self.min_macos, "since_torch": self.since_torch,
            "fixed_in": self.fixed_in, "removed_in": list(self.removed_in), "sources": list(self.sources),
            "kernel_since": self.kernel_since,
        }


@lru_cache(maxsize=4096)
def _history_facts(history: str, releases: tuple[str, ...], at: int) -> tuple[str | None, str | None,
                                                                            tuple[str, ...], str | None]:
    """(since_torch, fixed_in, removed_in, kernel_since) from a per-release status string
    (``format.HISTORY_CODES``)."""
    since = next((releases[i] for i, c in enumerate(history) if c in "kc"), None)
    kernel_since = next((releases[i] for i, c in enumerate(history) if c == "k"), None)
    fixed = None
    if at >= 0 and history[at] in "mfg":
        # a later kernel, or a later composite (linalg_svd: CPU fallback up to 2.13, decomposes onto the
        # _linalg_svd kernel in 2.14.1) counts as the fix
        fixed = next((releases[i] for i in range(at + 1, len(history)) if history[i] in "kc"), None)
    removed = tuple(releases[i] for i in range(1, len(history)) if history[i - 1] == "k" and history[i] != "k")
    return since, fixed, removed, kernel_since


# ---------------------------------------------------------------- the DB -------------------------------------
class SupportDB:
    """One release's table. Build with :func:`load_db`; the per-op data is a plain dict loaded once."""

    def __init__(self, doc: dict[str, Any]):
        schema = doc.get("schema", {})
        if schema.get("name") != SCHEMA_NAME or schema.get("version", 0) > SCHEMA_VERSION:
            raise ValueError(f"unsupported ops table schema {schema!r}")
        self._doc = doc
        self._ops: dict[str, dict[str, Any]] = doc["ops"]
        self.torch_version: str = doc["torch"]
        self.wheel: dict[str, str] = doc["wheel"]
        self.min_macos: str = doc["min_macos"]
        self.min_macos_source: str = doc["min_macos_source"]
        # AutocastMPS registrations ("aten::mm"); empty where no list is shipped (see autocast_mps_note)
        self.autocast_mps: frozenset[str] = frozenset(f"aten::{n}" for n in doc.get("autocast_mps", ()))
        self.autocast_mps_policy: dict[str, str] = {f"aten::{k}": v
                                                    for k, v in doc.get("autocast_mps_policy", {}).items()}
        self.autocast_mps_note: str = doc.get("autocast_mps_note", "")
        self.fallback: dict[str, Any] = doc["fallback"]
        # overloads whose only device kernel is MPS (yaml), e.g. "aten::_mps_convolution", "aten::linear"
        self.mps_only_ops: frozenset[str] = frozenset(f"aten::{n}" for n in doc.get("mps_only_ops", ()))
        self.size_limits: list[dict[str, Any]] = doc["size_limits"]
        self.counts: dict[str, Any] = doc["counts"]
        self.basis: str = doc.get("basis", "predicted")
        self._source_memo: dict[tuple[str, ...], tuple[str, ...]] = {}

    def __contains__(self, name: str) -> bool:
        ns, key = normalize_op(name)
        return ns == "aten" and key in self._ops

    def op_names(self) -> list[str]:
        """Every overload key in the table (``add.Tensor``, ``relu``), in table order."""
        return list(self._ops)

    def raw(self, key: str) -> dict[str, Any] | None:
        """The stored record of overload ``key`` (format.py), or None."""
        return self._ops.get(key)

    def _sources(self, rec: dict[str, Any]) -> tuple[str, ...]:
        src = rec.get("src")
        ids = ("yaml",) if src is None else tuple(src)
        hit = self._source_memo.get(ids)
        if hit is None:
            hit = self._source_memo[ids] = self._expand_sources(ids)
        return hit

    def _expand_sources(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        table_sources = self._doc["sources"]
        out = []
        for sid in ids:
            text = table_sources.get(sid, sid)
            if sid == "yaml":
                text += f", wheel {self.wheel['name']} sha256 {self.wheel['sha256']}"
            out.append(text)
        return tuple(out)

    def _position(self, index: dict[str, Any]) -> tuple[tuple[str, ...], int]:
        """(shipped releases, this table's place among them or -1), computed once."""
        pos = getattr(self, "_pos", None)
        if pos is None:
            releases = tuple(index["releases"])
            pos = self._pos = (releases, releases.index(self.torch_version) if self.torch_version in releases else -1)
        return pos

    def lookup(self, name: str, macos: str | None = None) -> OpSupport:
        """Support of one overload; ``macos`` (e.g. ``"14.4"``) drops dtype exceptions lifted at that macOS.

        Unknown names (other namespaces, ops absent from this release) give ``status="unknown"``.
        Raises ``ValueError`` on an empty name or a malformed macOS version.
        """
        ns, key = normalize_op(name)
        display = _display(ns, key)
        rec = self._ops.get(key) if ns == "aten" else None
        index = _index()
        releases, at = self._position(index)
        # an observed table (--dump-installed) has no place in the shipped history: no since/fixed facts
        history = index["history"].get(key) if ns == "aten" and self.basis == "predicted" else None
        since, fixed, removed, kernel_since = (_history_facts(history, releases, at) if history
                                               else (None, None, (), None))
        if rec is None:
            return OpSupport(op=display, torch=self.torch_version, status="unknown", how="absent",
                             cuda="unknown", sparse_mps=False, core=False, since_torch=since, fixed_in=None,
                             removed_in=removed, kernel_since=kernel_since,
                             sources=(f"not in native_functions.yaml of torch {self.torch_version}",))
        dx = rec.get("dx", {})
        if macos is not None and dx:
            dx = {d: v for d, v in dx.items() if not (v.get("min_macos") and not _macos_lt(macos, v["min_macos"]))}
        return OpSupport(
            op=display, torch=self.torch_version, status=rec["s"], how=rec["h"], cuda=rec["c"],
            sparse_mps=bool(rec.get("sp")), core=bool(rec.get("core")), dtype_exceptions=dict(dx),
            conditions=tuple(rec.get("cond", ())), min_macos=rec.get("mm"), since_torch=since, fixed_in=fixed,
            removed_in=removed, sources=self._sources(rec), kernel_since=kernel_since,
            delegate=f"{ns}::{rec['dl']}" if rec.get("dl") else None,
        )

    def route(self, name: str) -> str | None:
        """What the same Python call dispatches on MPS for a CPU/CUDA-specific op, e.g.
        ``"aten::_slow_conv2d_forward"`` -> ``"aten::_mps_convolution"``; None if not routed
        (curated ``routing.yaml``, sources there)."""
        info = self.route_info(name)
        return None if info is None else "aten::" + info["to"]

    def route_info(self, name: str) -> dict[str, Any] | None:
        """The routing record ``{"to", "source", "condition"?, "otherwise"?}`` for ``name``, or None.

        ``otherwise`` names the MPS op used when ``condition`` does not hold (SDPA in training: the CIA
        ``_scaled_dot_product_attention_math`` instead of ``_scaled_dot_product_attention_math_for_mps``).
        ``with`` lists the other ops the same call dispatches on MPS, ``[{"op", "parent"?}]`` without
        namespace, ``parent`` naming the composite whose callee the op is (``native_dropout`` -> ``to``
        ``bernoulli_.float`` with ``empty_like``, ``empty_strided``, ``div_.Scalar``, ``div_.Tensor``,
        ``mul.Tensor``: Dropout.cpp ``_dropout_impl``).
        """
        ns, key = normalize_op(name)
        if ns != "aten":
            return None
        return self._doc["routing"].get(key)

    def dtype_rules(self, macos: str | None = None) -> list[DtypeRule]:
        """Global dtype rules of this release that apply at ``macos`` (all of them when None).

        A rule with ``min_macos`` no longer applies from that macOS on (bfloat16 at 14.0, research note §6).
        """
        out = []
        for r in self._doc["dtype_rules"]:
            if macos is not None and r.get("min_macos") and not _macos_lt(macos, r["min_macos"]):
                continue
            out.append(DtypeRule(dtype=r["dtype"], effect=r["effect"], min_macos=r.get("min_macos"),
                                 message=r["message"], source=r["source"]))
        return out

    def macos_supported(self, macos: str) -> bool:
        """Whether MPS is usable at all on ``macos`` with this release (``min_macos``)."""
        return not _macos_lt(macos, self.min_macos)


@lru_cache(maxsize=None)
def _load_release(release: str) -> SupportDB:
    return SupportDB(_read_gz(table_name(release)))


def load_db(version: str) -> SupportDB:
    """The table for ``version`` (see :func:`resolve_version`); cached. Raises ``ValueError``."""
    return _load_release(resolve_version(version))


MAX_TABLE_BYTES = 256 * 1024 * 1024  # a dumped table of one release is a few MB


def load_table_file(path: str) -> SupportDB:
    """Load a table written by ``mpsready ops --dump-installed`` (JSON or gzipped JSON): a regular file of at most
    :data:`MAX_TABLE_BYTES`, unpacked to at most that many (issue 34: a named pipe hung ``ops --table`` for ever,
    a small gzip of zeros filled memory); ``ValueError`` otherwise."""
    import zlib

    from mpsready.safeio import read_bounded

    data = read_bounded(path, MAX_TABLE_BYTES, follow_links=True)
    if data[:2] == b"\x1f\x8b":
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = unpack.decompress(data, MAX_TABLE_BYTES + 1)
        except zlib.error as exc:
            raise ValueError(f"not a gzip file: {exc}") from None
        if len(data) > MAX_TABLE_BYTES:
            raise ValueError(f"unpacks to more than {MAX_TABLE_BYTES} bytes")
    try:
        doc = json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise ValueError(f"not an ops table (a JSON {type(doc).__name__}, not an object)")
    return SupportDB(doc)
