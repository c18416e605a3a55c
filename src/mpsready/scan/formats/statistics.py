"""``mpsready scan --statistics``: the number of findings per rule, most frequent first, with the rule's fix
once, then each scan's summary lines (:func:`.concise.summary_lines`). The shape of ruff's ``--statistics``:
``COUNT  CODE  name  [severity]  fix``."""

from __future__ import annotations

from collections import Counter

from mpsready import rules as registry
from mpsready.scan.engine import ScanResult
from mpsready.scan.formats.concise import summary_lines


def statistics_rows(results: list[ScanResult]) -> list[tuple[int, str, str, str, str]]:
    """(count, code, rule name, severity, the rule's fix) per code, most frequent first, then by code."""
    counts = Counter(f.code for r in results for f in r.findings)
    severity = {f.code: f.severity.value for r in results for f in r.findings}
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        try:
            rule = registry.get(code)
            name, fix = rule.name, rule.fix
        except KeyError:
            name, fix = "", ""
        rows.append((n, code, name, severity[code], " ".join(fix.split())))
    return rows


def render_statistics(results: list[ScanResult]) -> str:
    rows = statistics_rows(results)
    width = max((len(str(n)) for n, *_ in rows), default=1)
    lines = [f"{n:>{width}}  {code}  {name}  [{sev}]  {fix}".rstrip() for n, code, name, sev, fix in rows]
    for r in results:
        lines += summary_lines(r)
    return "\n".join(lines) + "\n"
