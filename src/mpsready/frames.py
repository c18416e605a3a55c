"""Where in the user's program a call was made: :class:`Frame` (a file and line of the user's project) and
:class:`UserFrames`, which finds the innermost such frame on the Python stack, cheaply.

Shared by every stage that runs the user's program (the trace recorder, the emulated MPS device, the numerics
watches), so none of them imports another's package for it.

``traceback.extract_stack`` formats every frame and reads source lines: far too slow
to call for each aten op. Instead walk ``sys._getframe()`` and decide once per code
object whether it belongs to the user's project (a file under the entry's root that is
not inside ``site-packages``, PyTorch or mpsready itself). The walk then costs a dict
lookup per frame.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, Mapping, cast


@dataclass(frozen=True)
class Frame:
    """The innermost frame of the user's project that led to an op: ``path`` is relative
    to the project root when it lies under it, ``line`` is 1-based."""

    path: str
    line: int
    function: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "function": self.function}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Frame":
        return cls(d["path"], int(d["line"]), d["function"])



_EXCLUDED_PARTS = ("site-packages", "dist-packages")
_STOP = "\0stop"  # classification of the step runner's frames
_SKIP = "\0skip"  # not the user's, and never an anchor (UserFrames)
# Code objects whose frames are resumed by different callers over their life: never anchors.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
# Frames PyTorch creates for every dispatched op (the dispatch-mode plumbing and its dynamo shim): a fresh
# frame per call can never match the anchor, so the first frame outside them is taken instead.
_PER_CALL = (os.path.join("torch", "_compile.py"), os.path.join("torch", "_ops.py"),
             os.path.join("torch", "_dynamo", "eval_frame.py"), os.path.join("torch", "utils", "_python_dispatch.py"))


def _package_dir(name: str) -> str | None:
    mod = sys.modules.get(name)
    f = getattr(mod, "__file__", None)
    return os.path.dirname(os.path.abspath(f)) + os.sep if f else None


class UserFrames:
    """``locate()`` returns the innermost user :class:`Frame` on the current stack, or ``None``.

    ``root`` is the project directory (``Entry.root``), or several directories (the entry's own
    directory and the project it exercises, when the ENTRY file is kept outside the project);
    frames in files under any of them count as the user's, except files inside
    ``site-packages``/``dist-packages`` (a virtual environment kept in the project), PyTorch and
    mpsready. A frame's path is relative to the first root that holds it.

    The walk is cached. Ops dispatched from the same Python call (the many ops of one
    ``F.multi_head_attention_forward``, every op of a backward pass) share the frames from their
    innermost non-user caller outwards, and while that frame is on the stack the frames outside it are
    suspended in calls, so their lines cannot change. ``locate`` remembers the first such frame of its
    last walk (the *anchor*; a plain function frame, since a generator's frame can be resumed from
    elsewhere) with the result, and returns that result when a walk meets the same frame object again.
    The anchor is held until the next walk that misses it, or :meth:`forget`.
    """

    def __init__(self, root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]):
        roots = [root] if isinstance(root, (str, os.PathLike)) else list(root)
        self.roots = list(dict.fromkeys(os.path.abspath(os.fspath(r)) + os.sep for r in roots))
        self.root = self.roots[0]
        self._excluded = [d for d in (_package_dir("torch"), _package_dir("mpsready")) if d]
        # The step runner calls the user's step: the walk stops there (pytest or a CLI below it can be
        # dozens of frames deep, and none of them is the step).
        mps = _package_dir("mpsready")
        self._stop_dir = os.path.join(mps, "step") + os.sep if mps else None
        # code -> path relative to root; None (not the user's, may anchor), _SKIP or _STOP
        self._is_user: dict[CodeType, str | None] = {}
        self._frames: dict[tuple[CodeType, int], Frame] = {}
        self._anchor: FrameType | None = None
        self._anchored: Frame | None = None

    def forget(self) -> None:
        """Drop the cached anchor frame (it keeps that call's locals alive)."""
        self._anchor = self._anchored = None

    def _classify(self, code: CodeType) -> str | None:
        """The user path of ``code`` (relative to the root), or None / _SKIP / _STOP (class docstring)."""
        rel = self._user_path(code)
        if rel is None and (code.co_flags & _RESUMABLE or code.co_filename.endswith(_PER_CALL)):
            return _SKIP
        return rel

    def _user_path(self, code: CodeType) -> str | None:
        filename = code.co_filename
        if filename.startswith("<"):
            return None
        if self._stop_dir and os.path.abspath(filename).startswith(self._stop_dir):
            return _STOP
        path = os.path.abspath(filename)
        root = next((r for r in self.roots if path.startswith(r)), None)
        if root is None:
            return None
        if any(path.startswith(d) for d in self._excluded):
            return None
        parts = Path(path).parts
        if any(p in _EXCLUDED_PARTS for p in parts):
            return None
        return os.path.relpath(path, root)

    def owns(self, code: CodeType) -> bool:
        """Whether ``code`` is the user's (the classification :meth:`locate` uses, from the same cache)."""
        rel = self._is_user.get(code, False)
        if rel is False:
            rel = self._is_user[code] = self._classify(code)
        return rel is not None and rel is not _SKIP and rel is not _STOP

    def locate(self, skip: int = 1) -> Frame | None:
        f: FrameType | None = sys._getframe(skip)
        is_user = self._is_user
        anchor = self._anchor
        first = None  # the first frame of this walk that may anchor the next one
        result = None
        while f is not None:
            if f is anchor:
                return self._anchored
            code = f.f_code
            rel = is_user.get(code, False)
            if rel is False:
                rel = is_user[code] = self._classify(code)
            if rel is None:
                if first is None:
                    first = f
            elif rel is _STOP:
                break  # reached the step runner: frames further out called mpsready, not the step
            elif rel is not _SKIP:
                key = (code, f.f_lineno)
                result = self._frames.get(key)
                if result is None:
                    result = self._frames[key] = Frame(cast(str, rel), f.f_lineno, code.co_name)
                break
            f = f.f_back
        self._anchor, self._anchored = first, result
        return result
