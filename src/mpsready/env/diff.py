"""``mpsready env --diff A.json B.json``: what differs between two environment records.

Records are flattened to dotted paths (``torch.mps.available``, ``env_vars.NVIDIA_TF32_OVERRIDE``,
``packages.numpy``); the envelope (``schema``, ``mpsready``, ``created``), ``findings`` and
paths that only name where things live (``python.executable``, ``project.path``) are ignored.
Differences that change numerics come first, then the rest, each group sorted by path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from mpsready.errors import UsageError
from mpsready.schema import check_envelope

IGNORED = ("schema", "mpsready", "created", "findings", "basis", "python.executable", "project.path",
           "torch.mps.source", "torch.mps.meaning", "machine.rosetta.source")

# Path prefixes whose difference can change computed numbers, with the reason shown to the user.
NUMERICS: tuple[tuple[str, str], ...] = (
    ("precision.", "precision/determinism setting"),
    ("env_vars.PYTORCH_MPS_FAST_MATH", "MPS fast-math kernels"),
    ("env_vars.PYTORCH_MPS_PREFER_METAL", "MPS kernel choice (Metal vs MPSGraph)"),
    ("env_vars.PYTORCH_ENABLE_MPS_FALLBACK", "operators run on the CPU instead of MPS"),
    ("env_vars.NVIDIA_TF32_OVERRIDE", "TF32 on CUDA"),
    ("env_vars.CUBLAS_WORKSPACE_CONFIG", "cuBLAS determinism"),
    ("env_vars.PYTHONHASHSEED", "hash-seeded ordering"),
    ("torch.version", "PyTorch version (kernels change between releases)"),
    ("torch.git_version", "PyTorch build"),
    ("torch.cuda_version", "CUDA toolkit"),
    ("torch.cudnn_version", "cuDNN kernels"),
    ("torch.hip_version", "ROCm"),
    ("torch.mps.", "MPS availability"),
    ("torch.cuda.", "CUDA devices"),
    ("torch.installed", "PyTorch presence"),
    ("os.macos_version", "macOS version (MPS kernels ship with the OS)"),
    ("machine.chip", "chip"),
    ("machine.arch", "architecture"),
    ("machine.rosetta.", "Rosetta translation"),
    ("python.arch", "interpreter architecture"),
    ("packages.torch", "PyTorch package"),
    ("packages.numpy", "NumPy"),
    ("packages.scipy", "SciPy"),
    ("packages.nvidia-", "NVIDIA libraries"),
)


@dataclass(frozen=True)
class Difference:
    path: str
    a: Any
    b: Any
    numerics: bool
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "a": self.a, "b": self.b, "numerics": self.numerics, "why": self.why}


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts to ``{"a.b.c": leaf}``; lists are leaves except lists of dicts (indexed ``a.0.b``)."""
    out: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(obj, list) and obj and all(isinstance(x, Mapping) for x in obj):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = obj
    return out


def _ignored(path: str) -> bool:
    return any(path == p or path.startswith(p + ".") for p in IGNORED)


def _numerics(path: str) -> str | None:
    for prefix, why in NUMERICS:
        if path == prefix or path.startswith(prefix if prefix.endswith((".", "-")) else prefix + "."):
            return why
        if prefix.endswith((".", "-")) and path.startswith(prefix):
            return why
    return None


def diff_env(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    """Differences between two env records, numerics-changing first (see module docstring)."""
    fa, fb = flatten(a), flatten(b)
    diffs = []
    for path in sorted(set(fa) | set(fb)):
        if _ignored(path):
            continue
        va, vb = fa.get(path), fb.get(path)
        if va != vb:
            why = _numerics(path)
            diffs.append(Difference(path, va, vb, why is not None, why))
    return sorted(diffs, key=lambda d: (not d.numerics, d.path))


MAX_ENV_BYTES = 64 * 1024 * 1024  # an env record (or a run record's record.json holding one) is far smaller


def load_env_record(path: str) -> dict[str, Any]:
    """Read an ``mpsready.env`` JSON file, or the ``env`` inside a run record's ``record.json``.

    Raises :class:`~mpsready.errors.UsageError` for a missing or unreadable file or another schema.
    """
    from mpsready.safeio import loads, read_bounded

    p = Path(path)
    if p.is_dir():
        p = p / "record.json"
    try:  # a regular file only (a named pipe hung --diff for ever), numbers in range (a 5,000-digit one: exit 3)
        doc = loads(read_bounded(p, MAX_ENV_BYTES, follow_links=True).decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"env record not found: {path}") from None
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise UsageError(f"cannot read env record {path}: {exc}") from None
    if isinstance(doc, dict) and (doc.get("schema") or {}).get("name") == "mpsready.record":
        doc = doc.get("env") or {}
    try:
        check_envelope(doc, "mpsready.env", 1)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return doc
