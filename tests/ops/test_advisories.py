"""The shipped wrong-result advisories (mps_wrong_results.yaml) and their matching (mpsready.ops.advisories)."""
from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from mpsready.ops import advisories as A
from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex
from mpsready.ops.build import curated

T = ((2, 3),)


def test_table_loads_with_sourced_entries():
    advs = A.load()
    assert len(advs) >= 25
    assert len({a.id for a in advs}) == len(advs)
    for a in advs:
        assert a.report.startswith("https://github.com/pytorch/pytorch/")
        assert a.source.startswith("https://github.com/pytorch/pytorch/")
        assert a.summary and SpecifierSet(a.torch) is not None
        assert all(op.startswith("aten::") for op in a.ops)
        assert set(a.when) <= set(A.CONDITIONS)


def test_unknown_condition_or_field_fails_loading():
    entry = dict(curated.load(A.TABLE)["advisories"][0])
    with pytest.raises(ValueError, match=r"unknown condition\(s\) strided"):
        A.parse({"advisories": [dict(entry, when={"strided": True})]})
    with pytest.raises(ValueError, match=r"unknown field\(s\) severity"):
        A.parse({"advisories": [dict(entry, severity="high")]})
    with pytest.raises(ValueError, match="lacks 'report'"):
        A.parse({"advisories": [{k: v for k, v in entry.items() if k != "report"}]})
    with pytest.raises(ValueError, match="id\\(s\\) used twice: gelu-noncontiguous"):
        A.parse({"advisories": [entry, entry]})


def test_index_keeps_only_advisories_in_range():
    # wrong_ops: the wrong-result advisories in range (``ops`` adds the unverified regimes, the envelope's on every
    # release: aten::silu is a gated overload there, ops/envelope.py)
    assert "aten::addcdiv_" in AdvisoryIndex("2.3.1", "14.4").wrong_ops
    assert "aten::addcdiv_" not in AdvisoryIndex("2.4.0", "14.4").wrong_ops
    # macOS-bound: SiLU before macOS 15 only, bitwise ops from macOS 15 only
    assert "aten::silu" in AdvisoryIndex("2.5.1", "14.6").wrong_ops
    assert "aten::silu" not in AdvisoryIndex("2.5.1", "15.0").wrong_ops
    assert "aten::bitwise_and.Tensor" in AdvisoryIndex("2.6.0", "15.2").wrong_ops
    assert "aten::bitwise_and.Tensor" not in AdvisoryIndex("2.6.0", "14.7").wrong_ops


def test_match_conditions():
    idx = AdvisoryIndex("2.3.1", "14.4")
    hit = idx.match("aten::addcdiv_", AdvisoryFacts(("float32",) * 3, T * 3, (False, True, True)))
    assert hit is not None and hit.id == "addcdiv-noncontiguous" and hit.op == "aten::addcdiv_"
    assert hit.to_dict() == {
        "id": "addcdiv-noncontiguous", "op": "aten::addcdiv_", "dtype": "float32", "summary": hit.summary,
        "condition": {"non_contiguous": True}, "torch": "<2.4", "macos": None, "fixed_in": "2.4.0",
        "report": "https://github.com/pytorch/pytorch/issues/118115",
        "source": "https://github.com/pytorch/pytorch/pull/124442"}
    assert idx.match("aten::addcdiv_", AdvisoryFacts(("float32",) * 3, T * 3, (True, True, True))) is None
    # 5-D sum over a negative dim; not over a positive one, not on 4-D
    five = AdvisoryFacts(("float32",), ((1, 2, 1, 1, 1),), (True,), {"dim": [-3]})
    assert idx.match("aten::sum.dim_IntList", five).id == "reduction-5d-negative-dim"
    assert idx.match("aten::sum.dim_IntList", AdvisoryFacts(("float32",), ((1, 2, 1, 1, 1),), (True,),
                                                            {"dim": [2]})) is None
    assert idx.match("aten::sum.dim_IntList", AdvisoryFacts(("float32",), ((2, 1, 1, 1),), (True,),
                                                            {"dim": [-3]})) is None


def test_match_dtype_offset_channels_last_expanded():
    assert AdvisoryIndex("2.5.1", "15.0").match(
        "aten::__rshift__.Scalar", AdvisoryFacts(("uint8",), ((1,),), (True,))).id == "shift-uint8"
    assert AdvisoryIndex("2.5.1", "15.0").match(
        "aten::__rshift__.Scalar", AdvisoryFacts(("int32",), ((1,),), (True,))) is None
    bn = AdvisoryIndex("2.4.1", "14.0")
    sliced = AdvisoryFacts(("float32",), ((3, 3, 5, 5),), (True,), strides=((75, 25, 5, 1),), offsets=(75,))
    assert bn.match("aten::native_batch_norm", sliced).id == "batch-norm-sliced-input"
    assert bn.match("aten::native_batch_norm", AdvisoryFacts(("float32",), ((3, 3, 5, 5),), (True,),
                                                            strides=((75, 25, 5, 1),), offsets=(0,))) is None
    cl = AdvisoryIndex("2.10.0", "15.0")
    nhwc = AdvisoryFacts(("float32",), ((1, 64, 8, 8),), (False,), strides=((4096, 1, 512, 64),), offsets=(64,))
    assert cl.match("aten::avg_pool2d", nhwc).id == "batch-norm-avg-pool-channels-last-offset"
    assert cl.match("aten::avg_pool2d", AdvisoryFacts(("float32",), ((1, 64, 8, 8),), (True,),
                                                     strides=((4096, 64, 8, 1),), offsets=(64,))) is None
    mm = AdvisoryIndex("2.9.1", "15.5")
    wide = AdvisoryFacts(("float32",) * 2, ((64, 1), (1, 16)), (False, True), strides=((0, 1), (16, 1)))
    assert mm.match("aten::mm", wide).id == "mm-expanded-input-macos15"
    assert AdvisoryIndex("2.9.1", "26.4").match("aten::mm", wide) is None


def _f(*shapes, dtype="float32", **kw):
    return AdvisoryFacts(dtypes=(dtype,) * len(shapes), shapes=tuple(shapes), contiguous=(True,) * len(shapes), **kw)


def test_compiled_size_eq_and_grouped_heads_conditions():
    ix = AdvisoryIndex("2.12.0", "15.6")
    ln = _f((4, 512), (512,), (512,))
    assert ix.match("aten::native_layer_norm", ln) is None  # eager: right
    hit = ix.match("aten::native_layer_norm", _f((4, 512), (512,), (512,), compiled=True))
    assert (hit.id, hit.fixed_in) == ("compiled-layer-norm", "2.13.0")
    assert AdvisoryIndex("2.13.0", "15.6").match("aten::native_layer_norm",
                                                _f((4, 512), compiled=True)) is None
    sdpa = AdvisoryIndex("2.10.0", "15.6")
    op = "aten::_scaled_dot_product_flash_attention_for_cpu"
    decode = _f((1, 16, 1, 128), (1, 2, 1024, 128), (1, 2, 1024, 128), dtype="bfloat16")
    assert sdpa.match(op, decode).id == "sdpa-gqa-decode-two-pass"
    same_heads = _f((1, 2, 1, 128), (1, 2, 1024, 128), (1, 2, 1024, 128), dtype="bfloat16")
    prefill = _f((1, 16, 4, 128), (1, 2, 1024, 128), (1, 2, 1024, 128), dtype="bfloat16")
    short_kv = _f((1, 16, 1, 128), (1, 2, 1023, 128), (1, 2, 1023, 128), dtype="bfloat16")
    assert [sdpa.match(op, f) for f in (same_heads, prefill, short_kv)] == [None, None, None]
    assert AdvisoryIndex("2.11.0", "15.6").match(op, decode) is None


def test_value_conditions_ask_the_probe_last_and_only_then():
    asked = []

    def probe(key, want):
        asked.append((key, want))
        return True

    ix = AdvisoryIndex("2.13.0", "15.6")
    keys = AdvisoryFacts(dtypes=("int64",), shapes=((10,),), contiguous=(True,), args={"return_inverse": False},
                         probe=probe)
    assert ix.match("aten::_unique2", keys) is None and asked == []  # the argument fails first: no tensor read
    keys = AdvisoryFacts(dtypes=("int64",), shapes=((10,),), contiguous=(True,), args={"return_inverse": True},
                         probe=probe)
    assert ix.match("aten::_unique2", keys).id == "unique-inverse-int64-beyond-2-24"
    assert asked == [("int_abs_gt", 16777216)]
    no_probe = AdvisoryFacts(dtypes=("int64",), shapes=((10,),), contiguous=(True,), args={"return_inverse": True})
    assert ix.match("aten::_unique2", no_probe) is None


def test_size_gt_broadcast_batch_tensor_arg_and_full_reduction():
    # the weight gradient of a linear over more than 2**15 rows (pytorch#177116, 2.10): the reduced dim is the last
    ix = AdvisoryIndex("2.10.0", "26.3")
    assert ix.match("aten::mm", _f((64, 32776), (32776, 32))).id == "weight-grad-mm-over-32768-rows"
    assert ix.match("aten::mm", _f((32776, 32), (32, 64))) is None  # the forward product is right
    # a batch of systems against one broadcast right-hand side (pytorch#189134, 2.12)
    solve = AdvisoryIndex("2.12.0", "26.5")
    assert solve.match("aten::_linalg_solve_ex", _f((2, 3, 3), (3, 1))).id == "linalg-solve-broadcast-rhs"
    assert solve.match("aten::_linalg_solve_ex", _f((2, 3, 3), (2, 3, 1))) is None
    assert solve.match("aten::_linalg_solve_ex", _f((3, 3), (3,))) is None
    # a linear with a bias over 2 features of a 3-D input on macOS 26 (pytorch#188438)
    lin = AdvisoryIndex("2.14.0", "26.0")
    with_bias = _f((80, 1, 2), (192, 2), (192,), tensor_names=("input", "weight", "bias"))
    assert lin.match("aten::linear", with_bias).id == "linear-bias-tiny-k-macos26"
    assert lin.match("aten::linear", _f((80, 1, 2), (192, 2), tensor_names=("input", "weight"))) is None
    assert AdvisoryIndex("2.14.0", "15.6").match("aten::linear", with_bias) is None
    # a compiled full sum over more than 1024 elements (pytorch#170360), not a sum over one dim
    red = AdvisoryIndex("2.9.0", "15.6")
    assert red.match("aten::sum.dim_IntList", _f((32, 64), compiled=True, args={"dim": None})).id == (
        "compiled-large-reduction")
    assert red.match("aten::sum.dim_IntList", _f((32, 64), compiled=True, args={"dim": [1]})) is None
    assert red.match("aten::sum.default", _f((32, 64))) is None  # eager


def test_arg_odd():
    ix = AdvisoryIndex("2.3.1", "14.4")
    odd = AdvisoryFacts(dtypes=("complex64",), shapes=((4,),), contiguous=(True,),
                        args={"dim": [0], "normalization": 2, "last_dim_size": 7})
    assert ix.match("aten::_fft_c2r", odd).id == "irfft-odd-length"
    even = AdvisoryFacts(dtypes=("complex64",), shapes=((4,),), contiguous=(True,), args={"last_dim_size": 6})
    assert ix.match("aten::_fft_c2r", even) is None


def test_matmul_out_numel_and_misaligned_offset_conditions():
    ix = AdvisoryIndex("2.14.1", "15.6")
    big = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((65537, 256, 64), (65537, 64, 256)),
                        contiguous=(False, True))
    assert ix.match("aten::bmm", big).id == "bmm-over-2-32-non-contiguous"
    exact = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((65536, 256, 64), (65536, 64, 256)),
                          contiguous=(False, True))
    assert ix.match("aten::bmm", exact) is None  # exactly 2**32 elements
    view = AdvisoryFacts(dtypes=("bool", "int64", "bool"), shapes=((4,), (2,), (2,)), contiguous=(True,) * 3,
                         offsets=(1, 0, 0), args={"dim": 0})
    assert AdvisoryIndex("2.13.0", "15.6").match("aten::index_add_", view).id == "bool-accumulate-misaligned-view"
    aligned = AdvisoryFacts(dtypes=("bool", "int64", "bool"), shapes=((4,), (2,), (2,)), contiguous=(True,) * 3,
                            offsets=(4, 0, 0), args={"dim": 0})
    assert AdvisoryIndex("2.13.0", "15.6").match("aten::index_add_", aligned) is None
    ones = AdvisoryFacts(dtypes=("bool",), shapes=((128,),), contiguous=(True,), args={"dim": 0})
    assert AdvisoryIndex("2.3.1", "14.4").match("aten::cumsum", ones).id == "cumsum-bool-overflows-int8"
    assert AdvisoryIndex("2.4.1", "14.4").match("aten::cumsum", ones) is None
