"""What the plugin reads off pytest's reports, shared by the one-process session and the xdist controller."""

from __future__ import annotations

from typing import Any

# the key of a worker's tests in pytest-xdist's `workeroutput` (a JSON text: execnet sends plain data only)
WORKER_KEY = "mpsready_pytest"


def plain(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` as plain JSON data, so a report that carries it can be sent to an xdist controller."""
    import json

    return json.loads(json.dumps(entry, default=str))


def mac_teststatus(report):
    """``MAC-FAILED``/``MAC-ERROR`` (letter ``M``) for a report that failed by a predicted Mac failure; ``None``
    for every other report (pytest's own status)."""
    if getattr(report, "mpsready_mac", None) is not None and report.failed:
        if report.when == "call":
            return "failed", "M", ("MAC-FAILED", {"red": True})
        return "error", "M", ("MAC-ERROR", {"red": True})
    return None


def collection_message(text: str) -> str:
    """The exception line of a collection error's report text (pytest marks it ``E   ``; the last one is the
    exception raised), or its last line; at most 500 characters."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    marked = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    return (marked[-1] if marked else lines[-1].strip() if lines else "collection failed")[:500]


def outcome_of(reports: list) -> str:
    """The test's own outcome from its phase reports: passed, failed, error, skipped, xfailed, xpassed."""
    out = "passed"
    for rep in reports:
        xfail = hasattr(rep, "wasxfail")
        if rep.when == "setup":
            if rep.failed:
                return "error"
            if rep.skipped:
                return "xfailed" if xfail else "skipped"
        elif rep.when == "call":
            if rep.failed:
                out = "failed"
            elif rep.skipped:
                out = "xfailed" if xfail else "skipped"
            elif xfail:
                out = "xpassed"
        elif rep.when == "teardown" and rep.failed and out == "passed":
            out = "error"
        elif rep.when not in ("setup", "call", "teardown") and rep.failed:
            out = "failed"  # pytest-xdist's report for a test whose worker crashed (when "???")
    return out
