"""The user-frame finder, kept here for older callers: it lives in :mod:`mpsready.frames`."""

from __future__ import annotations

from mpsready.frames import Frame, UserFrames

__all__ = ["Frame", "UserFrames"]
