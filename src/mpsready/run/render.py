"""Terminal summary of a run document (:mod:`mpsready.run.document`)."""

from __future__ import annotations

from typing import Any


def _where(loc: dict[str, Any] | None) -> str:
    if loc and ".ipynb:cell " in str(loc["path"]):  # a notebook's cell (mpsready.run.notebook): nb.ipynb:cell 3:line 2
        return f"{loc['path']}:line {loc['line']}"
    return f"{loc['path']}:{loc['line']}" if loc else "(no line in your files)"


def _clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters in its middle: a reason ends with what it is judged on (``not verified
    on torch 2.5.1 (regime envelope-mean-empty)``), which an end cut lost on long lists of records."""
    if len(text) <= limit:
        return text
    tail = limit // 3
    return f"{text[:limit - tail - 5]} ... {text[-tail:]}"


def render_terminal(doc: dict[str, Any]) -> str:
    t = doc["target"]
    mac = "Intel Mac, x86_64 with an AMD GPU" if t.get("machine") == "x86_64" else "Mac"
    head = (f"mpsready run (emulated {mac}: torch {t['torch']}, macOS {t['macos']}, "
            f"PYTORCH_ENABLE_MPS_FALLBACK={'1' if t['fallback'] else 'unset'}) - predicted, not observed on a Mac")
    lines = [head]
    outcome = doc["outcome"]
    extra = f" ({doc['stop_reason']})" if doc.get("stop_reason") else ""
    lines.append(f"outcome: {outcome}{extra}; {doc['steps']} optimizer step(s), {doc['seconds']:.1f} s here")
    if doc.get("program_exit"):
        lines.append(f"  {doc['program_exit']['note']}")
    seen = t.get("torch_version_seen") or {}
    if seen.get("read"):
        lines.append(f"  your files read torch.__version__ == {seen['value']!r}: the target's (predicted), not this "
                     f"build's {seen['installed']!r}")
    if not t.get("mps_available", True):
        lines.append(f"  torch.backends.mps.is_available() is False on macOS {t['macos']} with torch {t['torch']}")
    ff = doc["failures"][0] if doc.get("failures") else None
    pe = doc.get("program_error")
    if pe and not ff:
        lines += _program_error_lines(pe, doc)
    if ff:
        lines.append(f"first failure on the Mac: {_where(ff.get('location'))}")
        lines.append(f"  {ff.get('exception') or ff.get('effect') or ''}: {ff.get('message')}".rstrip())
        details = [f"kind {ff.get('kind')}"] + ([f"op {ff['op']}"] if ff.get("op") else [])
        if ff.get("dtype"):
            details.append(f"dtype {ff['dtype']}")
        if ff.get("fixed_in"):
            details.append(f"predicted fixed in torch {ff['fixed_in']}")
        elif ff.get("fixed_in_apple_silicon"):
            details.append(f"predicted fixed in torch {ff['fixed_in_apple_silicon']} on Apple silicon only (no macOS "
                           "x86_64 wheel after 2.2.2)")
        lines.append("  " + ", ".join(details))
    more = doc.get("failures", [])[1:]
    if more:
        lines.append(f"further predicted failures (--keep-going): {len(more)}")
        for f in more[:20]:
            lines.append(f"  {_where(f.get('location'))}: {f.get('op') or f.get('kind')} "
                         f"{f.get('dtype') or ''} - {str(f.get('message'))[:120]}")
    if doc["fallbacks"]:
        lines.append("CPU fallbacks (calls, share of run time):")
        for fb in doc["fallbacks"]:
            lines.append(f"  {fb['op']}: {fb['calls']} call(s), {100 * fb['share']:.1f}% "
                         f"({fb['kind']}; first at {_where(fb.get('location'))})")
    for f in [f for f in doc.get("findings") or [] if f.get("code") in ("NUM301", "PRF301")][:10]:
        lines.append(f"{f['code']} ({f['severity']}): {f['message']}")  # first NaN/Inf, shapes (docs/numerics.md)
    wrong = doc.get("wrong_results") or []
    if wrong:
        lines.append(f"predicted wrong result(s): {len(wrong)} - the program completes, but MPS computes these "
                     "silently wrong on this release (public PyTorch reports; a prediction, not observed)")
        for w in wrong[:20]:
            fixed = f"fixed in torch {w['fixed_in']}" if w.get("fixed_in") else "no fixed release known"
            lines.append(f"  {_where(w.get('location'))}: {w['op']}" + (f" {w['dtype']}" if w.get("dtype") else "")
                         + f" ({w['calls']} call(s)) - {w['summary']}")
            lines.append(f"    advisory {w['id']}; {fixed}; {w['report']}")
    unv = doc.get("unverified") or []
    if unv:
        lines.append(f"not verified: {len(unv)} op(s) or compiled region(s) on the program's path were judged on no "
                     "data or could not be vouched for; the run is not a pass"
                     + (" (outcome unverified)" if outcome == "unverified" else ""))
        for u in unv[:20]:
            lines.append(f"  {_where(u.get('location'))}: {u.get('op')} ({u.get('kind')}; {u.get('calls')} call(s)) "
                         f"- {_clip(str(u.get('reason')), 320)}")
    if pe and ff:
        lines.append(f"then the program stopped on an error of its own, not a Mac prediction: {_where(pe.get('location'))} "
                     f"{pe.get('exception')}: {str(pe.get('message'))[:160]}")
    judged = sum(p["calls"] for p in doc["predictions"])
    if not doc.get("mps_used", bool(doc["predictions"])) and doc["outcome"] in ("completed", "stopped"):
        tgt = doc.get("target") or {}
        why = (f"MPS is not available on macOS {tgt.get('macos')} with torch {tgt.get('torch')}"
               if tgt.get("mps_available") is False
               else "a device selection that checks only CUDA, or no --device mps given")
        lines.append(f"no tensor reached the emulated MPS device: on a Mac this program runs on the CPU ({why})")
    lines.append(f"{len(doc['predictions'])} MPS ops judged over {judged} calls; limits: " + "; ".join(doc["limits"]))
    by = doc.get("judged")
    if by is not None:
        lines.append(f"calls judged on mined facts: {by['facts']}; on table defaults (an MPS kernel, no dtype fact): "
                     f"{by['defaults']}; on no data: {by['none']}" + _regime_tail(by))
    return _visible_lines(lines)


def _regime_tail(by: dict[str, Any]) -> str:
    """The count of calls in a size or parameter regime the data cannot vouch for (``judged["regime"]``, issue 33's
    honest default), for the terminal's last line; empty when there are none."""
    n = by.get("regime")
    return f"; in a size or parameter regime the data cannot vouch for: {n}" if n else ""


def _visible_lines(lines: list[str]) -> str:
    """The lines joined, each control character other than the line breaks written ``\\xNN``: messages and
    paths come from the program (an exception text may carry ESC or BEL)."""
    from mpsready.escape import visible

    return "".join("\n".join(visible(part) for part in line.split("\n")) + "\n" for line in lines)


def _program_error_lines(pe: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """An exception the emulated Mac did not raise: what is missing, and that nothing is known past that point."""
    where = _where(pe.get("location"))
    lines = [f"not a Mac failure: the program stopped at {where} on an error of its own or of this environment",
             f"  {pe.get('exception')}: {pe.get('message')}".rstrip()]
    missing = pe.get("missing")
    if pe.get("kind") == "environment" and missing:
        fix = ("install the package that provides it in the environment that runs mpsready (the project's own "
               "requirements)" if missing.startswith("module ") else "give the program the file it reads")
        lines.append(f"  missing here: {missing}; {fix}, then run again")
    elif pe.get("kind") == "exit":
        lines.append("  the program ended itself (its own argument or input check)")
    else:
        lines.append("  the program's own error (the emulated MPS device did not raise it): fix it or its input, "
                     "then run again")
    stop = where if pe.get("location") else "the point reached"
    lines.append(f"  this run proves nothing about the Mac beyond {stop}: "
                 f"{len(doc['predictions'])} MPS op(s) judged up to there, none predicted to fail")
    return lines


_OUTCOME_STYLE = {"completed": "green", "stopped": "green", "failed": "red", "inconclusive": "yellow",
                  "unverified": "yellow",
                  "no_result": "red"}


def _matrix_failure(entry: dict[str, Any]) -> tuple[str, str]:
    """(what, where) of a release's first failure, for the matrix table."""
    ff = entry.get("first_failure")
    if ff is None:
        if entry["outcome"] == "no_result":
            return f"no result (child status {entry['child_status']})", "-"
        unv = (entry.get("run") or {}).get("unverified") or []
        if entry["outcome"] == "unverified" and unv:  # nothing failed, but not everything was judged on data
            first = unv[0]
            what = f"not verified: {first.get('kind')} {first.get('op')}" + (
                f" (+{len(unv) - 1} more)" if len(unv) > 1 else "")
            return what, _where(first.get("location")) if first.get("location") else "-"
        wrong = (entry.get("run") or {}).get("wrong_results") or []
        if wrong:  # it runs, but an advisory says MPS computes a call of it wrong there (exit code 1)
            w = wrong[0]
            what = f"wrong result: {w.get('op')}" + (f" ({w['dtype']})" if w.get("dtype") else "")
            what += f"; fixed in {w['fixed_in']}" if w.get("fixed_in") else ""
            what += f" (+{len(wrong) - 1} more)" if len(wrong) > 1 else ""
            return what, _where(w.get("location")) if w.get("location") else "-"
        return "-", "-"
    what = " ".join(x for x in (ff.get("kind"), ff.get("op")) if x)
    if ff.get("dtype"):
        what += f" ({ff['dtype']})"
    if ff.get("fixed_in"):
        what += f"; fixed in {ff['fixed_in']}"
    if not ff.get("mac"):
        what = f"not a Mac failure: {what} {ff.get('exception') or ''}".rstrip()
    return what, _where(ff.get("location")) if ff.get("location") else "-"


def render_matrix_terminal(doc: dict[str, Any], color: bool = False, width: int | None = None) -> str:
    """The ``mpsready.run_matrix`` document (:mod:`mpsready.run.matrix`) as one table, release x outcome, then
    the first release where the program completes. Plain text (no escape codes) unless ``color``."""
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = doc["target"]
    buf = io.StringIO()
    con = Console(file=buf, width=width or 120, force_terminal=bool(color), no_color=not color,
                  color_system="auto" if color else None, highlight=False, emoji=False)
    con.print(Text(f"mpsready run, release matrix (emulated Mac: macOS {t['macos']}, "
                   f"PYTORCH_ENABLE_MPS_FALLBACK={'1' if t['fallback'] else 'unset'}) - predicted, "
                   "not observed on a Mac"))
    from mpsready.escape import visible

    con.print(Text("program: " + visible(" ".join(doc["program"]["argv"]))))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in ("release", "outcome", "first failure", "where"):
        table.add_column(col, justify="left", overflow="fold")
    for col in ("CPU fallbacks", "steps", "seconds here"):
        table.add_column(col, justify="right", overflow="fold")
    for e in doc["releases"]:
        what, where = _matrix_failure(e)
        run = e.get("run") or {}
        outcome = e["outcome"] + (f" ({run['stop_reason']})" if run.get("stop_reason") else "")
        fb = f"{e['fallback_calls']} ({e['fallback_ops']} op{'s' if e['fallback_ops'] != 1 else ''})" \
            if e["fallback_ops"] else "0"
        # Text, not markup: a path or an op name with "[" stays as written; control characters as \xNN
        table.add_row(e["torch"], Text(visible(outcome), style=_OUTCOME_STYLE.get(e["outcome"], "")),
                      Text(visible(what)), Text(visible(where)), fb,
                      str(run["steps"]) if run else "-",
                      f"{e['seconds']:.1f}" if e["seconds"] is not None else "-")
    con.print(table)
    first = doc["summary"]["first_completing"]
    con.print(Text(f"first release where it completes: {first or 'none'}"))
    return buf.getvalue()


def render_matrix_outputs(doc: dict[str, Any]) -> str:
    """The program's own output of the releases the document shows it for (``output.shown`` tail or all),
    one block per release under a header line naming it. An output already shown for an earlier release is named,
    not repeated: a program that fails the same way on all 13 releases printed the same traceback 13 times."""
    parts = []
    seen: dict[str, str] = {}  # output text -> the first release that showed it
    for e in doc["releases"]:
        out = e["output"]
        if out["shown"] == "none" or out["text"] is None:
            continue
        which = "all" if out["shown"] == "all" else f"last {min(out['lines'], _tail_lines())} of"
        head = f"--- torch {e['torch']} ({e['outcome']}): program output, {which} {out['lines']} line(s)"
        if out["text"] and out["text"] in seen:
            parts.append(f"{head}: the same as torch {seen[out['text']]} ---\n")
            continue
        seen.setdefault(out["text"], e["torch"])
        parts.append(f"{head} ---\n")
        parts.append(out["text"])
    return "".join(parts)


def _tail_lines() -> int:
    from mpsready.run.matrix import TAIL_LINES

    return TAIL_LINES
