"""Wording shared by the renderers, so every format says the same thing."""

from __future__ import annotations

from mpsready.findings import Basis, Verdict
from mpsready.report.checklist import CheckItem, Status

MARK = {  # plain-text marks, for Markdown and the terminal
    "passed": "PASS", "passed (static review)": "PASS (static)", "failed": "FAIL",
    "failed (predicted)": "FAIL (predicted)", "not checked (predicted to pass)": "NOT CHECKED (predicted pass)",
    "not checked": "NOT CHECKED",
}

VERDICT_BLURB = {
    Verdict.RUNS_ON_MAC: "Critical operators run on MPS, results meet the study's criteria, run time and memory "
                         "are acceptable.",
    Verdict.MAC_FOR_DEV: "The portable part runs on the Mac; training at scale, some extensions or the reference "
                         "runs stay on CUDA.",
    Verdict.STAY_ON_CUDA: "A required part is CUDA-only with no confirmed alternative, or results or time fail "
                          "the protocol.",
}


def css_class(item: CheckItem) -> str:
    if item.status is Status.PASSED:
        return "pass" if item.basis is Basis.OBSERVED else "pass-static"
    if item.status is Status.FAILED:
        return "fail" if item.basis is Basis.OBSERVED else "fail-predicted"
    return "predicted" if item.prediction == "pass" else "unchecked"


def basis_word(basis: Basis | None) -> str:
    return {Basis.OBSERVED: "observed", Basis.PREDICTED: "predicted", None: "-"}[basis]


def seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    if s < 120:
        return f"{s:.2f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def gib(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 2**30:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**30:.1f} GiB"
