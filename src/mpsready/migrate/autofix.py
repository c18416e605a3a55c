"""The former name of :mod:`mpsready.migrate.fixability` (the transforms' declarations put together), kept for
callers that import it from here; it states nothing of its own."""

from __future__ import annotations

from mpsready.migrate.fixability import (CODE_PREFIXES, FIXES, bucket, buckets, declared_floor, effort,
                                         effort_line)

__all__ = ["CODE_PREFIXES", "FIXES", "bucket", "buckets", "declared_floor", "effort", "effort_line"]
