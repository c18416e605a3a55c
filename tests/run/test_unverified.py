"""Nothing unknown reads as a pass (issue 33, items 5 and 6): a call judged on no data, or a compiled region the
emulated Mac cannot vouch for, makes the run ``unverified`` (exit code 4), never ``completed``; an op whose own
out variant the target's table lists as missing fails there even when another release decomposes it."""
from __future__ import annotations

import itertools

import pytest

pytest.importorskip("torch")

from mpsready.run import matrix
from mpsready.run.document import OUTCOMES, build_document
from mpsready.run.render import render_terminal

from .helpers import emulate, write

SAFE_SOFTMAX = '''\
import torch
x = torch.randn(2, 4, device="mps")
y = torch.ops.aten._safe_softmax(x, -1)
print(tuple(y.shape))
'''


def test_callee_of_another_release_is_unverified_not_completed(tmp_path):
    # torch 2.13 decomposes _safe_softmax with isneginf, which has no MPS kernel in 2.5.1; 2.5's own kernel
    # may call other ops (docs/emulation.md): no data, so not a pass
    _, doc, out, _ = emulate(write(tmp_path, SAFE_SOFTMAX), torch="2.5")
    assert (doc["outcome"], doc["exit_code"], doc["failures"], out) == ("unverified", 4, [], "(2, 4)\n")
    [u] = doc["unverified"]
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == (
        "callee_of_other_release", "aten::isneginf.out", 3, 1)
    assert u["reason"].startswith("reached inside a composite as torch 2.13")
    assert doc["judged"]["none"] == 1
    text = render_terminal(doc)
    assert "outcome: unverified" in text
    assert "  script.py:3: aten::isneginf.out (callee_of_other_release; 1 call(s))" in text
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith("calls judged on mined facts: ") and last.endswith("; on no data: 1")
    # the installed release itself: the decomposition is the target's own, judged on data
    _, doc, _, _ = emulate(write(tmp_path, SAFE_SOFTMAX), torch="2.13")
    assert (doc["outcome"], doc["unverified"], doc["judged"]["none"], doc["exit_code"]) == ("completed", [], 0, 0)


LSTSQ = '''\
import torch
A = torch.randn(4, 4, device="mps")
b = torch.randn(4, 1, device="mps")
x = torch.linalg.lstsq(A, b).solution
print(tuple(x.shape))
'''


def test_solver_whose_out_variant_is_missing_fails_on_every_release_before_its_kernel(tmp_path):
    # linalg_lstsq is CompositeExplicitAutograd over linalg_lstsq.out, which has an MPS kernel from 2.14 only
    # (native_functions.yaml of each release): read through another release's decomposition it used to be
    # "unknown" and the run completed
    for rel in ("2.5", "2.9"):
        _, doc, out, _ = emulate(write(tmp_path, LSTSQ), torch=rel)
        ff = doc["first_failure"]
        assert (doc["outcome"], ff["kind"], ff["op"], ff["exception"], ff["location"]["line"], ff["fixed_in"],
                out) == ("failed", "missing", "aten::linalg_lstsq.out", "NotImplementedError", 4, "2.14.0", "")
    _, doc, out, _ = emulate(write(tmp_path, LSTSQ), torch="2.14")
    assert (doc["outcome"], out) == ("completed", "(4, 1)\n")


COMPILED = '''\
import torch
block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.SiLU()).to("mps")
fast = torch.compile(block)
print(tuple(fast(torch.randn(2, 8, device="mps")).shape))
@torch.compile
def total(w):
    return w.sum(dim=1)
print(tuple(total(torch.randn(4, 4, device="mps")).shape))
print(tuple(total(torch.randn(2, 2048, device="mps")).shape))
ordered = torch.compile(lambda w: w.sort(dim=1).values)
print(tuple(ordered(torch.randn(2, 3, device="mps")).shape))
'''


def test_compiled_regions_not_vouched_for_are_unverified(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, COMPILED), torch="2.10")
    assert (doc["outcome"], doc["exit_code"], out) == ("unverified", 4, "(2, 8)\n(4,)\n(2,)\n(2, 3)\n")
    # the elementwise block (linear is an extern kernel, silu pointwise) and the reductions (multistage ones
    # fixed for 2.8) are vouched for; a sort is neither
    [u] = doc["unverified"]
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == ("compile", "torch.compile", 11, 1)
    assert u["reason"] == ("compiled region with non-elementwise ops (aten::sort): Inductor's Metal code "
                           "generation of such graphs (other kernels, bfloat16 before 2.11) is not emulated, and "
                           "torch 2.10.0 may refuse it")
    # 2.7: the prototype back-end: every region unverified, and the multistage reduction (over more than 1024
    # elements) fails as 2.7.0 does (pytorch#152155)
    _, doc, _, _ = emulate(write(tmp_path, COMPILED), torch="2.7")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"], ff["fixed_in"]) == (
        "failed", "compile", "InductorError", "SyntaxError: failed to compile", 9, "2.8.0")
    assert [(u["kind"], u["location"]["line"], u["calls"]) for u in doc["unverified"]] == [
        ("compile", 4, 1), ("compile", 8, 1)]
    # before 2.7 the first call fails as that release does: a failure, not unverified
    _, doc, _, _ = emulate(write(tmp_path, COMPILED), torch="2.6")
    assert (doc["outcome"], doc["first_failure"]["kind"], doc["unverified"]) == ("failed", "compile", [])


ELEMENTWISE = '''\
import torch
g = torch.compile(lambda x: torch.nn.functional.silu(x) * 2 + 1)
print(tuple(g(torch.randn(8, device="mps")).shape))
'''


def test_elementwise_compiled_region_completes_from_2_8(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, ELEMENTWISE), torch="2.8")
    assert (doc["outcome"], doc["unverified"], doc["exit_code"]) == ("completed", [], 0)
    # the same region in bfloat16: not vouched for
    script = write(tmp_path, ELEMENTWISE.replace('device="mps")', 'device="mps", dtype=torch.bfloat16)'))
    _, doc, _, _ = emulate(script, torch="2.8")
    assert (doc["outcome"], [u["reason"].split(":")[0] for u in doc["unverified"]]) == (
        "unverified", ["compiled region with dtype bfloat16"])
    _, doc, _, _ = emulate(script, torch="2.11")  # PR #176436 (release/2.11)
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


# ------------------------------------------------------------------ the guarantee itself
class _Rec:
    def __init__(self, op, outcome, kind, calls=1):
        self.op, self.outcome, self.kind, self.calls = op, outcome, kind, calls
        self.named, self.dtypes, self.seconds, self.frame, self.message, self.fixed_in = None, [], 0.0, None, None, None


def _fake_emu(records, regions=()):
    from mpsready.emulate import Emulator, Target

    emu = Emulator(Target("2.5", "15.0"), "/nonexistent")
    emu.records = {(r.op, r.outcome, r.kind, None): r for r in records}
    emu.unverified_regions = [dict(e) for e in regions]
    return emu


SPEC = {"target": {"torch": "2.5", "macos": "15.0", "fallback": False},
        "program": {"kind": "script", "target": "x.py", "argv": ["x.py"]}}
UNKNOWN_KINDS = ("unknown", "callee_of_other_release", "composite_unseen")


@pytest.mark.parametrize("kind,result_outcome", list(itertools.product(UNKNOWN_KINDS, ("completed", "stopped"))))
def test_an_unknown_judgement_never_yields_completed(kind, result_outcome):
    """Fails if any call judged ``unknown`` (any kind) ever leaves a run ``completed`` or exit code 0."""
    emu = _fake_emu([_Rec("aten::add.Tensor", "runs", None, 5), _Rec("aten::some_op", "unknown", kind)])
    doc = build_document(SPEC, {"emu": emu, "outcome": result_outcome, "seconds": 1.0})
    assert (doc["outcome"], doc["exit_code"]) == ("unverified", 4)
    assert [u["op"] for u in doc["unverified"]] == ["aten::some_op"]
    assert doc["judged"]["none"] == 1


def test_every_judge_outcome_unknown_is_no_data_and_nothing_else_is():
    from mpsready.ops.judge import OUTCOMES as JUDGE_OUTCOMES, Judge

    judge = Judge("2.5", "15.0")
    for outcome in JUDGE_OUTCOMES:
        for kind in (None, "missing", *UNKNOWN_KINDS):
            assert (judge.basis("aten::add.Tensor", outcome, kind) == "none") == (outcome == "unknown")


def test_unvouched_region_alone_makes_unverified_and_failures_still_win():
    region = {"kind": "compile", "op": "torch.compile", "reason": "r", "location": None, "calls": 1,
              "basis": "predicted"}
    doc = build_document(SPEC, {"emu": _fake_emu([], [region]), "outcome": "completed", "seconds": 1.0})
    assert (doc["outcome"], doc["exit_code"], len(doc["unverified"])) == ("unverified", 4, 1)
    doc = build_document(SPEC, {"emu": _fake_emu([], [region]), "outcome": "inconclusive", "seconds": 1.0})
    assert (doc["outcome"], doc["exit_code"]) == ("inconclusive", 2)
    assert "unverified" in OUTCOMES


def test_matrix_never_names_an_unverified_release_as_the_first_that_works():
    def rr(rel, outcome, code):
        return matrix.ReleaseRun(rel, rel, {"outcome": outcome, "exit_code": code}, 0, "", 1.0)

    runs = [rr("2.3.1", "unverified", 4), rr("2.9.1", "completed", 0)]
    assert (matrix.first_completing(runs), matrix.matrix_exit_code(runs)) == ("2.9.1", 4)
    assert matrix.first_completing(runs[:1]) is None
    assert matrix.matrix_exit_code([rr("2.3.1", "unverified", 4), rr("2.4.1", "inconclusive", 2)]) == 2
    assert matrix.matrix_exit_code([rr("2.3.1", "unverified", 4), rr("2.4.1", "failed", 1)]) == 1


def test_pytest_verdict_unverified():
    from mpsready.pytest_plugin.watch import verdict

    assert verdict("passed", [], [], [], True, False, [{"op": "aten::x"}]) == "unverified"
    assert verdict("passed", [], [], [], True, False) == "clean"
    assert verdict("passed", [{"kind": "missing"}], [], [], True, False, [{"op": "aten::x"}]) == "mac_failure"


def test_matrix_row_of_an_unverified_release_names_what_was_not_judged():
    from mpsready.run.render import _matrix_failure

    entry = {"outcome": "unverified", "first_failure": None, "child_status": 4,
             "run": {"unverified": [{"kind": "callee_of_other_release", "op": "aten::isneginf.out",
                                     "location": {"path": "train.py", "line": 3, "function": "<module>"}},
                                    {"kind": "compile", "op": "torch.compile", "location": None}]}}
    assert _matrix_failure(entry) == ("not verified: callee_of_other_release aten::isneginf.out (+1 more)",
                                      "train.py:3")


DYNAMIC_PAD = '''\
import torch
pad = torch.nn.ReflectionPad2d(1)
padded = torch.compile(lambda x: pad(x), dynamic={dynamic})
x = torch.randn(2, 3, 10, 10, device="mps")
print(padded(x).shape)
'''


def test_a_compiled_region_inductor_refuses_fails_at_its_call(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, DYNAMIC_PAD.format(dynamic=True)), torch="2.9", macos="15.6")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "compile", "InductorError", "use of undeclared identifier 'Where'", 5)
    # without dynamic shapes the region is not refused; reflection padding is not vouched for either: unverified
    _, doc, _, _ = emulate(write(tmp_path, DYNAMIC_PAD.format(dynamic=False)), torch="2.9", macos="15.6")
    assert (doc["outcome"], doc["exit_code"]) == ("unverified", 4)


SHADER = '''\
import torch
x = torch.ones(4, device="mps")
lib = torch.mps.compile_shader("kernel void k(device float* x, uint i [[thread_position_in_grid]]) {{ x[i] += i; }}")
lib.k(x)
print(x.tolist())
'''


def test_the_programs_own_metal_kernels_are_unverified_not_an_error_of_this_machine(tmp_path):
    # 2.7+: torch.mps.compile_shader exists on a Mac; here nothing can compile or run Metal
    _, doc, out, _ = emulate(write(tmp_path, SHADER.format()), torch="2.7", macos="15.5")
    assert (doc["outcome"], doc["exit_code"], out) == ("unverified", 4, "[1.0, 1.0, 1.0, 1.0]\n")
    [u] = doc["unverified"]
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == (
        "metal_shader", "torch.mps.compile_shader", 3, 1)
    # 2.6 has no such name: the Mac's AttributeError
    _, doc, _, _ = emulate(write(tmp_path, SHADER.format()), torch="2.6", macos="15.5")
    assert (doc["outcome"], doc["first_failure"]["exception"]) == ("failed", "AttributeError")
