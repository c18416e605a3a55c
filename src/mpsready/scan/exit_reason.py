"""The line that explains the scan's exit code (issue 23): the exit code follows ``--fail-on`` (any finding at or
above it, wherever it is), the outlook follows the main path, so a project can be ``runs_on_mac`` and still exit 1.
The terminal output ends with this line whenever the exit code is not 0 (or would not be, under ``--exit-zero``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mpsready.escape import visible
from mpsready.scan.model.remedy import limits

if TYPE_CHECKING:
    from mpsready.scan.engine import ScanResult


def exit_reason(result: ScanResult) -> str | None:
    """``None`` when the scan exits 0 on its findings; else one line, e.g. ``exit 1: 4 blocker findings, all off
    the main path (tests, examples, secondary parts, guarded or optional code), so the outlook stays runs_on_mac;
    the exit code follows --fail-on blocker (pass --exit-zero to exit 0)``."""
    if not result.failed():
        return None
    unread = getattr(result, "unread", None)
    if unread and not any(f.severity.rank >= result.config.fail_on.rank for f in result.findings):
        code = "exit 0 (--exit-zero)" if getattr(result, "exit_zero", False) else "exit 1"
        return (f"{code}: the outlook rests on a partial read (not read: {', '.join(unread[:5])}"
                + (f" and {len(unread) - 5} more" if len(unread) > 5 else "") + "); fail closed: fix or include "
                "them and scan again")
    fail_on = result.config.fail_on
    hits = [f for f in result.findings if f.severity.rank >= fail_on.rank]
    code = "exit 0 (--exit-zero)" if getattr(result, "exit_zero", False) else "exit 1"
    hidden = getattr(result, "hidden_gate", 0)
    if hidden and not hits and not result.incomplete:
        tail = "" if getattr(result, "exit_zero", False) else " (pass --exit-zero to exit 0)"
        return (f"{code}: {hidden} main-path {'finding' if hidden == 1 else 'findings'} at or above {fail_on.value} "
                f"that the project's [tool.mpsready] select, ignore, exclude or per-file-ignores left out of the report set the "
                f"outlook {result.outlook.value}: the project's configuration narrows the report, never the gate"
                f"{tail}")
    if not hits:  # failed() on an incomplete outlook alone
        n = len(result.incomplete)
        tail = "" if getattr(result, "exit_zero", False) else " (pass --exit-zero to exit 0)"
        return (f"{code}: the outlook is incomplete: {n} main-path {'file' if n == 1 else 'files'} could not be read "
                f"or parsed ({visible(', '.join(result.incomplete[:3]))}{', ...' if n > 3 else ''}), and a gate "
                f"never passes on a partial read{tail}")
    main_hits = [f for f in hits if limits(f) and not (f.evidence or {}).get("optional")]
    main = len(main_hits)
    what = f"{len(hits)} {'finding' if len(hits) == 1 else 'findings'} at or above {fail_on.value}"
    below = [f for f in getattr(result, "limiting", ()) if f.severity.rank < fail_on.rank]
    if main == 0 and below:  # the outlook comes from main-path findings the gate does not count ("stays" misled)
        where = (f"all off the main path (tests, examples, secondary parts, guarded or optional code); the outlook "
                 f"{result.outlook.value} comes from {len(below)} main-path "
                 f"{'finding' if len(below) == 1 else 'findings'} below {fail_on.value}")
    elif main == 0:
        where = (f"all off the main path (tests, examples, secondary parts, guarded or optional code), so the "
                 f"outlook stays {result.outlook.value}")
    elif main == len(hits):
        where = f"all on the main path ({_what_they_set(main_hits, result)})"
    else:
        where = f"{main} on the main path ({_what_they_set(main_hits, result)}), {len(hits) - main} off it"
    if result.incomplete:
        where += f"; the outlook is also incomplete ({len(result.incomplete)} main-path file(s) not read)"
    tail = "" if getattr(result, "exit_zero", False) else " (pass --exit-zero to exit 0)"
    return f"{code}: {what}, {where}; the exit code follows --fail-on {fail_on.value}{tail}"


def _what_they_set(main_hits: list, result: ScanResult) -> str:
    """What the main-path findings at the gate do to the outlook. Blockers that each give way to a command-line
    value (a CUDA default that ``--device=mps`` overrides) leave ``runs_on_mac`` with flags: "they set the outlook
    runs_on_mac" read as if the blockers had earned it (nanoGPT: three ``device = 'cuda'`` blockers)."""
    flags = getattr(result, "flags", None) or []
    if (result.outlook.value == "runs_on_mac" and flags
            and all((f.evidence or {}).get("flag") for f in main_hits)):
        return f"each cleared by a command-line value: the outlook is runs_on_mac with {' '.join(flags)}"
    return f"they set the outlook {result.outlook.value}"
