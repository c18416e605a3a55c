"""The facts mined from PyTorch's own release material, as shipped (``data/mined/mps_facts.json.gz``).

Written by ``python -m mpsready.ops.build.harvest --out DIR 2.3.0 ...`` then ``python -m mpsready.ops.build.facts
--sources DIR --merged src/mpsready/ops/data/mined/mps_facts.json.gz`` (docs/emulation.md, "The mined knowledge
base"). Each fact names the releases whose own file it was read in (``releases``; ``range`` ``read``) and its
``source`` (the macOS wheel's ``libtorch_cpu.dylib``, its ``common_mps.py`` or a header); ``wheels`` gives each
release's wheel, sha256 and source commit. Nothing is carried from one release to another.

Read by the tests that hold the curated tables (``mps_dtype_checks.yaml``, ``mps_availability.yaml``) to the
releases whose binaries print their messages, and by the coverage figures; the judge reads the curated tables.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib import resources
from typing import Any

NAME = "mps_facts.json.gz"


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The shipped document (schema ``mpsready.ops-mined`` v1)."""
    raw = resources.files("mpsready.ops.data.mined").joinpath(NAME).read_bytes()
    return json.loads(gzip.decompress(raw).decode("utf-8"))


def releases_printing(message: str) -> list[str]:
    """The mined releases whose binary holds ``message``, or a whole first sentence of it (a PyTorch message is
    often two strings joined at run time: "The MPS backend is supported on MacOS 14.0+." and "Current OS
    version..."), oldest first; ``[]`` when none does. A string that only begins it ("MPS does not support",
    completed at run time by an op name) does not count."""
    doc = load()
    text = message.strip()
    found: set[str] = set()
    for m in doc["messages"]:
        head = m["message"].strip()
        if text == head or (head.endswith(".") and text.startswith(head)):
            found.update(m["releases"])
    return [r for r in doc["releases"] if r in found]
