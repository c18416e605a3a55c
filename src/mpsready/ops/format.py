"""On-disk format of the shipped op tables (shared by the builder and the loader; no torch, no yaml).

One gzipped JSON per release, ``data/tables/torch-<V>.json.gz``, schema ``mpsready.ops-table`` v1::

    {"schema": {...}, "torch": "2.13.0", "wheel": {"name", "sha256"}, "yaml_sha256", "min_macos",
     "min_macos_source", "dtype_rules": [...], "size_limits": [...], "fallback": {...},
     "routing": {op: {"to", "source", "condition"?, "otherwise"?, "with"?: [{"op", "parent"?}]}},
     "autocast_mps": [...], "counts": {...},
     "sources": {id: text}, "ops": {overload: rec}}

``rec`` keys (omitted when default): ``s`` status, ``h`` how, ``c`` CUDA status, ``sp`` sparse MPS (1),
``core`` (1), ``src`` source ids (default ``["yaml"]``), ``dx`` dtype exceptions, ``mm`` op min macOS,
``cond`` input conditions, ``note``. ``index.json.gz`` holds each op's status per release as one character
per release (``HISTORY_CODES``).
"""

SCHEMA_NAME = "mpsready.ops-table"
SCHEMA_VERSION = 1
INDEX_NAME = "index.json.gz"
STATUSES = ("kernel", "composite", "missing", "cpu_fallback_always", "guard")
HISTORY_CODES = {"kernel": "k", "composite": "c", "missing": "m", "cpu_fallback_always": "f", "guard": "g"}
CODE_STATUS = {v: k for k, v in HISTORY_CODES.items()}


def table_name(release: str) -> str:
    return f"torch-{release}.json.gz"
