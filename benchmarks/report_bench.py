"""Report stage speed on a large evidence set: a scan with 20 000 findings, a trace with 2 000 operators,
three run records of 200 steps, a comparison of 5 000 tensors.

Prints seconds for loading (adapters), judging (checklist + verdict + outlook), and rendering each
format, and the ratio of the whole report to a plain ``json.loads`` of the same inputs.

    PYTHONPATH=src python benchmarks/report_bench.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpsready.report.build import build_report  # noqa: E402
from mpsready.report.evidence import Evidence, compare, record, scan, trace  # noqa: E402
from mpsready.report.formats import html, json as json_fmt, markdown, plots  # noqa: E402
from tests.report import fixtures as fx  # noqa: E402


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="report-bench-"))
    codes = ["DEP101", "API101", "API103", "DTY101", "EXT102", "API104"]
    findings = [fx.finding(codes[i % 6], "blocker" if i % 3 == 0 else "degrades", f"finding {i}",
                           path=f"pkg/mod{i % 500}.py", line=i % 900 + 1, package=f"pkg{i % 40}",
                           **({"alternative": "x"} if i % 2 else {})) for i in range(20_000)]
    ops = [fx.op(f"aten::op{i}", ("runs", "fallback", "error")[i % 3] if i % 50 == 0 else "runs", calls=i % 7 + 1,
                 fixed_in="2.14" if i % 100 == 0 else None) for i in range(2_000)]
    rows = [{"key": f"activation:layer{i}", "status": "pass" if i % 97 else "fail",
             "metrics": {"max_abs": 1e-6 * (i % 13 + 1), "max_rel": 1e-5 * (i % 17 + 1), "cosine": 1.0}}
            for i in range(5_000)]
    docs = {"scan": fx.scan_doc(findings), "trace": fx.trace_doc(ops),
            "compare": fx.compare_doc("cuda", "mps", failed=52, rows=rows)}
    paths = {k: fx.dump(tmp / f"{k}.json", v) for k, v in docs.items()}
    recs = [fx.write_record(tmp / d, d, losses=[2.0 - 0.001 * i for i in range(200)], seconds=[0.1] * 200,
                            peak=2**30) for d in ("cpu", "cuda", "mps")]

    t0 = time.perf_counter()
    for p in paths.values():
        json.loads(p.read_text())
    floor = time.perf_counter() - t0

    t0 = time.perf_counter()
    ev = Evidence(scan=scan.load(paths["scan"]), trace=trace.load(paths["trace"]),
                  compare=compare.load(paths["compare"]), records=[record.load(r) for r in recs])
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    rep = build_report(ev, job_steps=20_000)
    t_judge = time.perf_counter() - t0
    timings = {}
    for name, fn in (("json", lambda: json_fmt.render(rep)), ("md", lambda: markdown.render(rep)),
                     ("plots", lambda: plots.all_plots(rep)), ("html (with plots)", lambda: html.render(rep))):
        t0 = time.perf_counter()
        fn()
        timings[name] = time.perf_counter() - t0
    total = t_load + t_judge + timings["json"] + timings["md"] + timings["html (with plots)"]
    print(f"inputs: {len(findings)} findings, {len(ops)} ops, {len(rows)} compared tensors, 3 records")
    print(f"json.loads floor      {floor:8.3f} s")
    print(f"load (adapters)       {t_load:8.3f} s   ratio {t_load / floor:5.1f}x")
    print(f"judge                 {t_judge:8.3f} s   verdict {rep.verdict.verdict.value}")
    for k, v in timings.items():
        print(f"render {k:<15}{v:8.3f} s")
    print(f"whole report          {total:8.3f} s   ratio to json.loads floor {total / floor:5.1f}x")


if __name__ == "__main__":
    main()
