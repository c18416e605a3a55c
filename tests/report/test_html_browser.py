"""The HTML report in a real headless browser (Debian chromium): DOM assertions and a screenshot."""

from __future__ import annotations

import html.parser
from pathlib import Path

import pytest

from mpsready.report.build import build_report
from mpsready.report.evidence import Evidence, compare, env, record, scan, trace
from mpsready.report.write import write_report
from tests.report import browser
from tests.report import fixtures as fx

pytestmark = pytest.mark.skipif(browser.chromium() is None,
                                reason="chromium is not installed (apt-get install chromium; .ci/run does it)")


class _Collect(html.parser.HTMLParser):
    """Collects elements by id with their attributes and text, and every <img>."""

    def __init__(self):
        super().__init__()
        self.by_id: dict[str, dict] = {}
        self.imgs: list[dict] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a)
        if "id" in a:
            self.by_id[a["id"]] = {"tag": tag, "attrs": a, "text": ""}
        self._stack.append(a.get("id"))

    def handle_endtag(self, tag):
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        for i in self._stack:
            if i:
                self.by_id[i]["text"] += data


def demo_like_report(tmp_path: Path):
    ev = Evidence(
        scan=scan.from_doc(fx.scan_doc([fx.FLASH_ATTN, fx.CUDA_EXT_WITH_FALLBACK,
                                        fx.finding("API101", "degrades", "device selection ignores MPS",
                                                   path="train.py", line=14)])),
        env=env.from_doc(fx.env_doc()),
        trace=trace.from_doc(fx.trace_doc(fx.CLEAN_OPS + [fx.op("aten::_ctc_loss", "fallback", 2, "2.14")],
                                          fallback_share=0.2)),
        records=[record.load(fx.write_record(tmp_path / "cpu", "cpu", losses=(2.3, 2.2, 2.0, 1.9),
                                             seconds=(.5, .1, .12, .11))),
                 record.load(fx.write_record(tmp_path / "cuda", "cuda", losses=(2.3, 2.2, 2.01, 1.92),
                                             seconds=(.05, .01, .012, .011), peak=2**30))],
        compare=compare.from_doc(fx.compare_doc("cuda", "cpu", failed=1, losses_a=(2.3, 2.2, 2.0, 1.9),
                                                losses_b=(2.3, 2.2, 2.01, 1.92))))
    return build_report(ev, job_steps=20000)


def test_html_report_renders_in_chromium(tmp_path):
    report = demo_like_report(tmp_path)
    paths = write_report(report, tmp_path / "out", ("html",))
    shot = tmp_path / "out" / "screenshot.png"
    dom = browser.render(paths["html"], shot)
    c = _Collect()
    c.feed(dom)
    assert c.by_id["verdict"]["attrs"]["data-verdict"] == "mac_for_dev"
    assert "Mac for development and tests" in c.by_id["verdict"]["text"]
    statuses = {i: (c.by_id[f"item-{i}"]["attrs"]["data-status"], c.by_id[f"item-{i}"]["attrs"]["data-basis"])
                for i in range(1, 9)}
    assert statuses == {1: ("failed", "predicted"), 2: ("passed", "predicted"), 3: ("not_checked", ""),
                        4: ("not_checked", ""), 5: ("failed", "predicted"), 6: ("failed", "predicted"),
                        7: ("passed", "observed"), 8: ("passed", "observed")}
    assert "not checked (predicted to pass)" in c.by_id["item-4"]["text"]
    assert {"plot-findings_by_kind", "plot-loss_curves", "plot-layer_errors"} <= set(c.by_id)
    # Self-contained: every image is inline PNG, nothing is fetched.
    assert len(c.imgs) == 3 and all(i["src"].startswith("data:image/png;base64,") for i in c.imgs)
    assert "http://" not in dom.replace("http://www.w3.org", "") and "https://" not in dom
    assert "PyTorch 2.14 fixes the one operator" in c.by_id["would-change"]["text"]
    assert shot.stat().st_size > 20_000 and shot.read_bytes().startswith(b"\x89PNG")
