"""Predicted silent wrong results in `mpsready run` (mps_wrong_results.yaml through the emulated Mac)."""
from __future__ import annotations

import json
from importlib import resources

import pytest

from mpsready.report.checklist import Status, item_comparison
from mpsready.report.evidence import Evidence
from mpsready.report.evidence.run import from_doc
from mpsready.run.render import render_terminal

from .helpers import emulate, write

ADDCDIV = """import torch
x = torch.rand(2, 3, device="mps").t()
y = torch.rand(2, 3, device="mps").t()
z = torch.rand(2, 3, device="mps").t()
for _ in range(3):
    x.addcdiv_(y, z)
print("done")
"""
CONTIGUOUS = ADDCDIV.replace(".t()", "")
FLOAT16 = ADDCDIV.replace('device="mps")', 'device="mps", dtype=torch.float16)')
UINT8_SHIFT = """import torch
u = torch.tensor([255], dtype=torch.uint8, device="mps")
v = u >> 4
w = u.int() >> 4
"""


def test_inside_the_range_one_entry_at_the_users_line(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    assert doc["outcome"] == "completed" and doc["failures"] == [] and out == "done\n"
    assert doc["exit_code"] == 1
    [w] = doc["wrong_results"]
    assert (w["id"], w["op"], w["dtype"], w["calls"], w["basis"]) == (
        "addcdiv-noncontiguous", "aten::addcdiv_", "float32", 3, "predicted")
    assert w["location"] == {"path": "script.py", "line": 6, "function": "<module>"}
    assert (w["fixed_in"], w["report"]) == ("2.4.0", "https://github.com/pytorch/pytorch/issues/118115")


def test_at_the_fixed_release_none(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.4")
    assert (doc["outcome"], doc["wrong_results"], doc["exit_code"]) == ("completed", [], 0)


def test_near_misses_none(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, CONTIGUOUS), torch="2.3")
    assert (doc["wrong_results"], doc["exit_code"]) == ([], 0)
    # the dtype condition: a uint8 shift at 2.5 matches, the int32 one on the next line does not
    _r, doc, _o, _e = emulate(write(tmp_path, UINT8_SHIFT, "shift.py"), torch="2.5", macos="15.2")
    assert [(w["id"], w["op"], w["dtype"], w["location"]["line"]) for w in doc["wrong_results"]] == [
        ("shift-uint8", "aten::__rshift__.Scalar", "uint8", 3)]


def test_other_dtype_still_matched_when_the_advisory_has_none(tmp_path):
    # addcdiv-noncontiguous names no dtypes: float16 matches too (the dtype recorded is the call's)
    _r, doc, _o, _e = emulate(write(tmp_path, FLOAT16), torch="2.3")
    assert [(w["id"], w["dtype"]) for w in doc["wrong_results"]] == [("addcdiv-noncontiguous", "float16")]


def test_document_validates_and_terminal_names_the_advisory(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("mpsready.run").joinpath("data/run.schema.json").read_text())
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    text = render_terminal(doc)
    assert "outcome: completed" in text
    assert "predicted wrong result(s): 1" in text
    assert "  script.py:6: aten::addcdiv_ float32 (3 call(s)) - " in text
    assert ("    advisory addcdiv-noncontiguous; fixed in torch 2.4.0; "
            "https://github.com/pytorch/pytorch/issues/118115") in text


def test_report_item_5_fails_on_a_predicted_wrong_result(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, ADDCDIV), torch="2.3")
    item = item_comparison(Evidence(run=from_doc(json.loads(json.dumps(doc)))))
    assert (item.status, item.label, item.prediction) == (Status.FAILED, "failed (predicted)", "fail")
    assert item.summary.startswith("predicted wrong result: aten::addcdiv_ at script.py:6 matches advisory "
                                   "addcdiv-noncontiguous")
    assert item.workaround == "upgrade to PyTorch 2.4.0"
    assert "https://github.com/pytorch/pytorch/issues/118115" in item.evidence[0].text
    # without wrong results the item stays not checked (no comparison)
    _r, clean, _o, _e = emulate(write(tmp_path, CONTIGUOUS, "clean.py"), torch="2.3")
    assert item_comparison(Evidence(run=from_doc(json.loads(json.dumps(clean))))).status is Status.NOT_CHECKED


UNIQUE = """import torch
keys = torch.tensor([{big}, 3, {big}, 7], device="mps")
values, inverse = torch.unique(keys, return_inverse=True)
print(inverse.tolist())
"""
MASKED_SDPA = """import torch
import torch.nn.functional as F
q = torch.randn(1, 1, 2, 4, device="mps")
mask = torch.tensor([[[[{row}], [True, True]]]], device="mps")
out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
"""
HISTC = """import torch
x = torch.tensor([{low}, 0.5, 1.0], device="mps")
h = torch.histc(x, bins=4, min=0.0, max=1.0)
"""
COMPILED_SUM = """import torch
def f(a, b):
    return (a[:, None] - b[None, :]).sum()
a = torch.randn({n}, device="mps")
b = torch.randn(64, device="mps")
out = torch.compile(f)(a, b)
"""


def _ids(doc):
    return [(w["id"], w["location"]["line"]) for w in doc["wrong_results"]]


def test_values_read_by_the_probes_decide(tmp_path):
    # int64 keys beyond 2**24 (pytorch#195595) on 2.13; small keys are fine
    _r, doc, out, _e = emulate(write(tmp_path, UNIQUE.format(big=2**25)), torch="2.13", macos="15.6")
    assert (doc["outcome"], _ids(doc), out) == ("completed", [("unique-inverse-int64-beyond-2-24", 3)],
                                                "[2, 0, 2, 1]\n")
    assert _ids(emulate(write(tmp_path, UNIQUE.format(big=2**23)), torch="2.13", macos="15.6")[1]) == []
    # a query row whose bool mask blocks every key (pytorch#156707) until 2.9
    masked = write(tmp_path, MASKED_SDPA.format(row="False, False"))
    assert _ids(emulate(masked, torch="2.7", macos="15.5")[1]) == [("sdpa-fully-masked-query-row", 5)]
    assert _ids(emulate(masked, torch="2.9", macos="15.5")[1]) == []
    partial = write(tmp_path, MASKED_SDPA.format(row="True, False"))
    assert _ids(emulate(partial, torch="2.7", macos="15.5")[1]) == []
    # histc's widened range test (pytorch#195076) on 2.14: -1e-6 is counted, -1e-3 is not
    assert _ids(emulate(write(tmp_path, HISTC.format(low=-1e-6)), torch="2.14", macos="15.6")[1]) == [
        ("histc-widened-range-edge", 3)]
    assert _ids(emulate(write(tmp_path, HISTC.format(low=-1e-3)), torch="2.14", macos="15.6")[1]) == []


def test_compiled_regions_are_matched_as_compiled(tmp_path):
    # a compiled sum over 32 x 64 = 2048 elements (pytorch#170360, fixed by PR #171479 for 2.11)
    _r, doc, _o, _e = emulate(write(tmp_path, COMPILED_SUM.format(n=32)), torch="2.9", macos="15.6")
    assert (doc["outcome"], _ids(doc)) == ("completed", [("compiled-large-reduction", 3)])  # the line in f
    assert _ids(emulate(write(tmp_path, COMPILED_SUM.format(n=8)), torch="2.9", macos="15.6")[1]) == []  # 512
    assert _ids(emulate(write(tmp_path, COMPILED_SUM.format(n=32)), torch="2.11", macos="15.6")[1]) == []
    eager = write(tmp_path, COMPILED_SUM.format(n=32).replace("torch.compile(f)(a, b)", "f(a, b)"))
    assert _ids(emulate(eager, torch="2.9", macos="15.6")[1]) == []


REPLAY = """import torch
gen = torch.Generator(device="mps")
gen.manual_seed(7)
snapshot = gen.get_state()
first = torch.empty(3, device="mps").exponential_(1.0, generator=gen)
again = torch.Generator(device="mps")
{restore}
replayed = torch.empty(3, device="mps").exponential_(1.0, generator=again)
"""


def test_a_restored_mps_generator_is_named_on_2_3(tmp_path):
    # pytorch#130613: set_state(get_state()) does not replay the draws on MPS
    restored = write(tmp_path, REPLAY.format(restore="again.set_state(snapshot)"))
    assert _ids(emulate(restored, torch="2.3", macos="14.5")[1]) == [("mps-generator-restored-state", 8)]
    assert _ids(emulate(restored, torch="2.4", macos="14.5")[1]) == []
    seeded = write(tmp_path, REPLAY.format(restore="again.manual_seed(7)"))
    assert _ids(emulate(seeded, torch="2.3", macos="14.5")[1]) == []
