"""What the emulated Mac saw during one test, and the test's Mac verdict.

One :class:`~mpsready.emulate.Emulator` serves the whole pytest session (as one serves a whole program under
``mpsready run``); :class:`TestWatch` takes a snapshot of its counters when a test starts and reads the
difference when it ends. Per test it keeps:

* ``failures``: the predicted Mac failures raised during the test (each a run document failure entry: ``kind``,
  ``op``, ``dtype``, ``exception``, ``message``, ``location`` {path, line, function} in the project's files,
  ``mac`` true, ``basis`` ``predicted``), also those the test caught itself, and the exceptions the emulated
  Mac marked without judging an op (``kind`` ``cuda_api``: "Torch not compiled with CUDA enabled"; ``mps_api``);
* ``fallbacks``: per op run on the CPU (by ``PYTORCH_ENABLE_MPS_FALLBACK=1``, or always, as MPS runs
  ``linalg_svd``): ``op``, ``kind``, ``calls``, ``dtypes``, ``location``;
* ``wrong_results``: calls matching a known silent wrong-result advisory (``id``, ``op``, ``dtype``, ``location``,
  ``calls``, ``report``);
* ``mps_used``: a tensor was put on MPS or an MPS op judged during the test.

The verdict (:func:`verdict`) is one of :data:`VERDICTS`, worst first:

* ``mac_failure``: the emulated Mac raised (or marked) a failure the test did not declare with
  ``emulated_mac.expect_failure``;
* ``wrong_result``: it ran, but a call matches a known wrong-result advisory;
* ``inconclusive``: the test failed (or errored) here on an exception the emulated Mac did not raise: nothing is
  known about the Mac beyond that point;
* ``unverified``: it passed, but a call during it was judged on no data (an op unknown to the target's table, a
  callee of another release's composite) or a compiled region could not be vouched for: never ``clean``;
* ``fallback``: it passed with CPU fallbacks;
* ``clean``: it reached MPS and nothing above applies;
* ``no_mps``: it never put a tensor on MPS (on a Mac it would run on the CPU: it says nothing about MPS);
* ``not_run``: skipped (``not_mac`` included) or deselected by xfail without a Mac failure.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

VERDICTS = ("mac_failure", "wrong_result", "inconclusive", "unverified", "fallback", "clean", "no_mps", "not_run")


def user_location(exc: BaseException, root: str) -> dict[str, Any] | None:
    """The innermost frame of ``exc``'s traceback in the project's files (under ``root``; not site-packages, not
    mpsready): ``{"path": relative, "line", "function"}``, or ``None``."""
    from mpsready.frames import user_location as located

    return located(exc, root)


def mac_entry(emu, exc: BaseException | None, root: str) -> dict[str, Any] | None:
    """The predicted Mac failure ``exc`` stands for, as a failure entry, or ``None`` (the test's own exception).

    A failure the emulator raised (:meth:`Emulator.failure_of`) is its entry with op, dtype and line; an exception
    it only marked (:func:`mpsready.emulate.mac_error_kind`), or one a fact of the Mac caused
    (:func:`mpsready.emulate.session.mac_fact_origin`: raised inside ``torch.cuda`` itself, a pickling error of the spawn
    start method), is ``kind`` that mark, ``op`` and ``dtype`` ``None``."""
    if exc is None:
        return None
    from mpsready.emulate import mac_error_kind
    from mpsready.emulate.session import mac_fact_origin

    hit = emu.failure_of(exc)
    if hit is not None:
        return {**hit.to_dict(), "mac": True}
    kind = mac_error_kind(exc) or mac_fact_origin(exc)
    if kind is None:
        return None
    return {"kind": kind, "op": None, "called_as": None, "dtype": None, "exception": type(exc).__name__,
            "message": str(exc)[:2000], "effect": "error", "fixed_in": None, "source": None,
            "basis": "predicted", "location": user_location(exc, root), "stack": [], "mac": True}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("kind"), a.get("op"), a.get("dtype"), a.get("location")) == \
        (b.get("kind"), b.get("op"), b.get("dtype"), b.get("location"))


class TestWatch:
    """The emulator's counters at the start of one test (``start``), read at its end (``result``)."""

    __test__ = False  # not a test class for pytest

    def __init__(self, emu, root: str):
        self.emu = emu
        self.root = root
        self.marked: list[dict[str, Any]] = []  # failures known only from the test's exception (cuda_api)
        self.expected: list[dict[str, Any]] = []  # declared with emulated_mac.expect_failure
        self.failed_by_mac = False
        self.start()

    def start(self) -> None:
        emu = self.emu
        # one entry per test for a failure at a shared line (a helper in conftest.py): the emulator dedupes by line
        emu._failed.clear()
        emu.raised.clear()
        emu.frames.forget()
        self.t0 = time.perf_counter()
        self.n_failures = len(emu.failures)
        self.calls = {k: r.calls for k, r in emu.records.items()}
        self.n_regions = len(getattr(emu, "unverified_regions", ()))
        self.placed = emu.placed
        self.wrong_calls = [w["calls"] for w in emu.wrong_results]

    # ------------------------------------------------------------------ what happened since start
    def failures(self) -> list[dict[str, Any]]:
        """The test's predicted Mac failures so far, less those declared expected."""
        out = [{**f.to_dict(), "mac": True} for f in self.emu.failures[self.n_failures:]]
        out += [m for m in self.marked if not any(_same(m, o) for o in out)]
        left = []
        expected = list(self.expected)
        for f in out:
            hit = next((e for e in expected if _same(e, f)), None)
            if hit is not None:
                expected.remove(hit)
            else:
                left.append(f)
        return left

    def fallbacks(self) -> list[dict[str, Any]]:
        out = []
        for key, rec in self.emu.records.items():
            n = rec.calls - self.calls.get(key, 0)
            if rec.outcome == "fallback" and n > 0:
                out.append({"op": rec.named or rec.op, "kind": rec.kind, "calls": n, "dtypes": list(rec.dtypes),
                            "fixed_in": rec.fixed_in, "location": rec.frame.to_dict() if rec.frame else None})
        return sorted(out, key=lambda f: f["op"])

    def wrong_results(self) -> list[dict[str, Any]]:
        out = []
        for i, w in enumerate(self.emu.wrong_results):
            before = self.wrong_calls[i] if i < len(self.wrong_calls) else 0
            if w["calls"] > before:
                out.append({k: w.get(k) for k in ("id", "op", "dtype", "summary", "fixed_in", "report", "source",
                                                   "location")} | {"calls": w["calls"] - before, "basis": "predicted"})
        return out

    def unverified(self) -> list[dict[str, Any]]:
        """The calls judged on no data and the compiled regions not vouched for during the test."""
        out = [{"kind": r.kind or "unknown", "op": r.named or r.op, "calls": r.calls - self.calls.get(k, 0),
                "location": r.frame.to_dict() if r.frame else None}
               for k, r in self.emu.records.items() if r.outcome == "unknown" and r.calls > self.calls.get(k, 0)]
        return out + [dict(e) for e in getattr(self.emu, "unverified_regions", [])[self.n_regions:]]

    def ops_judged(self) -> int:
        return sum(1 for k, r in self.emu.records.items() if r.calls > self.calls.get(k, 0))

    def mps_used(self) -> bool:
        return self.emu.placed > self.placed or self.ops_judged() > 0

    def note_exception(self, exc: BaseException | None) -> dict[str, Any] | None:
        """Classify the exception a phase of the test ended on; returns its Mac failure entry or ``None``."""
        entry = mac_entry(self.emu, exc, self.root)
        if entry is not None:
            self.failed_by_mac = True
            if self.emu.failure_of(exc) is None and not any(_same(entry, m) for m in self.marked):
                self.marked.append(entry)
        return entry

    def result(self, outcome: str) -> dict[str, Any]:
        """The test's entry of the ``mpsready.pytest`` document, less ``nodeid`` and ``markers``."""
        failures = self.failures()
        fallbacks = self.fallbacks()
        wrong = self.wrong_results()
        unverified = self.unverified()
        return {"outcome": outcome, "mac": verdict(outcome, failures, wrong, fallbacks, self.mps_used(),
                                                 self.failed_by_mac, unverified),
                "unverified": unverified,
                "failed_by_mac": self.failed_by_mac and outcome in ("failed", "error"),
                "failures": failures, "fallbacks": fallbacks, "wrong_results": wrong,
                "expected_failures": list(self.expected), "mps_used": self.mps_used(),
                "ops_judged": self.ops_judged(), "seconds": round(time.perf_counter() - self.t0, 4)}


def verdict(outcome: str, failures: list, wrong: list, fallbacks: list, mps_used: bool, failed_by_mac: bool,
            unverified: Sequence[Any] = ()) -> str:
    """One of :data:`VERDICTS` (module docstring); ``outcome`` is the test's own (passed, failed, error, skipped,
    xfailed, xpassed)."""
    if failures:
        return "mac_failure"
    if outcome == "skipped":
        return "not_run"
    if wrong:
        return "wrong_result"
    if outcome in ("failed", "error", "xfailed") and not failed_by_mac:
        return "inconclusive"
    if unverified:
        return "unverified"
    if fallbacks:
        return "fallback"
    return "clean" if mps_used else "no_mps"
