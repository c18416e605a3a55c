"""The ``mpsready.pytest`` document (version 1): a test suite run on the emulated Mac, test by test.

Written by ``pytest --mps-emulate --mps-json FILE``; ``mpsready report --tests FILE`` reads it as **predicted**
evidence for checklist item 4 (nothing ran on a Mac). Fields:

* ``basis`` ``"emulated"``, ``basis_class`` ``"predicted"``;
* ``target``: ``torch`` (the table release answered for), ``torch_requested``, ``macos``, ``fallback``
  (``PYTORCH_ENABLE_MPS_FALLBACK=1`` as read when the project first imported torch), ``mps_available``;
* ``settings``: ``fail_on`` (``mac-failure`` | ``fallback`` | ``never``), ``args`` (pytest's arguments),
  ``rootdir``;
* ``tests``: per test ``nodeid``, ``markers`` (``mac``/``not_mac`` when set), ``outcome`` (the test's own:
  passed, failed, error, skipped, xfailed, xpassed), ``mac`` (the verdict, one of
  :data:`~mpsready.pytest_plugin.watch.VERDICTS`), ``failed_by_mac`` (it failed only because the emulated Mac
  raised), ``failures`` (run document failure entries: kind, op, dtype, exception, message, location),
  ``fallbacks``, ``wrong_results``, ``expected_failures``, ``mps_used``, ``ops_judged``, ``seconds`` (here);
* ``summary``: ``tests`` (count), one count per verdict, ``by_cause``: one row per (kind, op, dtype) of the Mac
  failures with ``tests`` (how many), ``first`` (nodeid) and ``location`` (the project's file:line first seen),
  ``fallback_ops`` (op -> tests);
* ``collection_errors``: per module (or conftest, package) that failed to collect, ``module`` (its node id) and
  ``message`` (the exception line); its tests never ran. ``summary.collection_errors`` counts them;
* ``gate``: ``fail_on``, ``allow_empty`` (``--mps-allow-empty``), ``failed`` (bool), ``reason`` (text or null):
  whatever ``fail_on`` says, a collection error or a session with no test (unless ``allow_empty``) fails it;
* ``limits``: what the emulation does not reproduce.
"""

from __future__ import annotations

from typing import Any

from mpsready.schema import check_envelope, envelope

SCHEMA = "mpsready.pytest"
VERSION = 1
FAIL_ON = ("mac-failure", "fallback", "never")
LIMITS = ("numerics are this CPU's, not MPS kernels'", "speed and memory are not a Mac's",
          "C++/CUDA extensions and torch.compile are not emulated",
          "one emulated process (per pytest-xdist worker): a Mac abort (crash) would end it there")


def summarize(tests: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``summary`` of ``tests`` (module docstring)."""
    from mpsready.pytest_plugin.watch import VERDICTS

    counts = {v: sum(1 for t in tests if t["mac"] == v) for v in VERDICTS}
    causes: dict[tuple, dict[str, Any]] = {}
    fallback_ops: dict[str, int] = {}
    for t in tests:
        seen = set()
        for f in t["failures"]:
            key = (f.get("kind"), f.get("op"), f.get("dtype"))
            row = causes.setdefault(key, {"kind": key[0], "op": key[1], "dtype": key[2], "tests": 0,
                                          "first": t["nodeid"], "location": f.get("location"),
                                          "message": str(f.get("message") or "")[:300],
                                          "fixed_in": f.get("fixed_in")})
            if key not in seen:
                row["tests"] += 1
                seen.add(key)
        for fb in t["fallbacks"]:
            fallback_ops[fb["op"]] = fallback_ops.get(fb["op"], 0) + 1
    by_cause = sorted(causes.values(), key=lambda r: (-r["tests"], str(r["kind"]), str(r["op"]), str(r["dtype"])))
    return {"tests": len(tests), **counts, "by_cause": by_cause, "fallback_ops": dict(sorted(fallback_ops.items()))}


def gate(summary: dict[str, Any], fail_on: str, collection_errors: list[dict[str, Any]] | None = None,
         allow_empty: bool = False) -> dict[str, Any]:
    """``--mps-fail-on``: ``mac-failure`` fails on a predicted Mac failure or wrong result in any test (caught by
    the test or not), ``fallback`` on those or a CPU fallback, ``never`` never; the project's own failed tests
    fail pytest as always. At every level a suite that did not run fails: a module that failed to collect, or
    no test at all unless ``allow_empty``."""
    reasons = []
    if collection_errors:
        mods = [str(e.get("module")) for e in collection_errors]
        reasons.append(f"{len(mods)} test module(s) not run (collection error): " + ", ".join(mods[:5])
                       + (f" and {len(mods) - 5} more" if len(mods) > 5 else ""))
    if not summary.get("tests") and not allow_empty:
        reasons.append("no test ran on the emulated Mac (nothing collected; --mps-allow-empty accepts an empty "
                       "suite)")
    if fail_on in ("mac-failure", "fallback"):
        if summary["mac_failure"]:
            reasons.append(f"{summary['mac_failure']} test(s) with a predicted Mac failure")
        if summary["wrong_result"]:
            reasons.append(f"{summary['wrong_result']} test(s) with a predicted wrong result")
    if fail_on == "fallback" and summary["fallback"]:
        reasons.append(f"{summary['fallback']} test(s) with CPU fallbacks")
    return {"fail_on": fail_on, "allow_empty": allow_empty, "failed": bool(reasons),
            "reason": "; ".join(reasons) or None}


def target_of(emu, torch_requested: str) -> dict[str, Any]:
    """The document's ``target`` for the installed emulator ``emu`` (plain data: an xdist worker sends it to the
    controller, which installs no emulator of its own)."""
    return {"torch": emu.judge.torch, "torch_requested": torch_requested, "macos": emu.target.macos,
            "fallback": emu.judge.fallback, "mps_available": emu.judge.available}


def build_document(target: dict[str, Any], tests: list[dict[str, Any]], fail_on: str, args: list[str],
                   rootdir: str, collection_errors: list[dict[str, Any]] | None = None,
                   allow_empty: bool = False) -> dict[str, Any]:
    """The document (module docstring) from ``target`` (:func:`target_of`) and the per-test entries."""
    errors = list(collection_errors or [])
    summary = {**summarize(tests), "collection_errors": len(errors)}
    return envelope(
        SCHEMA, VERSION, basis="emulated", basis_class="predicted",
        target=dict(target),
        settings={"fail_on": fail_on, "args": list(args), "rootdir": rootdir},
        tests=tests, collection_errors=errors, summary=summary,
        gate=gate(summary, fail_on, errors, allow_empty), limits=list(LIMITS))


def load_document(doc: Any) -> dict[str, Any]:
    """Check a loaded ``mpsready.pytest`` document; raises ``ValueError`` with a clear message."""
    check_envelope(doc, SCHEMA, VERSION)
    for key in ("target", "tests", "summary"):
        if key not in doc:
            raise ValueError(f"pytest document lacks {key!r}")
    if not isinstance(doc["tests"], list):
        raise ValueError("pytest document 'tests' is not a list")  # noqa: TRY004 - the readers catch ValueError
    return doc
