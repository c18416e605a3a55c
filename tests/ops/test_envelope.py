"""The evidence envelope (issue 33, round 10; ``mpsready.ops.envelope``): kernel families, call features, the
regimes mined from what PyTorch's MPS tests exercise, and the conditions that match them."""
from __future__ import annotations

import ast

from mpsready.ops import envelope
from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex
from mpsready.ops.build import envelope as build_envelope
from mpsready.ops.build.envelope import common_mps_lists


def test_family_joins_forward_backward_and_routed_forms():
    got = {op: envelope.family(op) for op in (
        "aten::convolution_backward", "aten::_mps_convolution", "aten::convolution", "aten::native_layer_norm",
        "aten::native_layer_norm_backward", "max_pool2d_with_indices_backward.grad_input",
        "aten::binary_cross_entropy_backward", "aten::_native_batch_norm_legit", "aten::add_.Tensor",
        "aten::conv2d", "aten::_scaled_dot_product_flash_attention_for_cpu")}
    assert got == {
        "aten::convolution_backward": "convolution", "aten::_mps_convolution": "convolution",
        "aten::convolution": "convolution", "aten::native_layer_norm": "layer_norm",
        "aten::native_layer_norm_backward": "layer_norm",
        "max_pool2d_with_indices_backward.grad_input": "max_pool2d",
        "aten::binary_cross_entropy_backward": "binary_cross_entropy", "aten::_native_batch_norm_legit": "batch_norm",
        "aten::add_.Tensor": "add", "aten::conv2d": "convolution",
        "aten::_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention"}


def test_features_of_a_call():
    assert envelope.features([(2, 0, 3), (3,)], ["float32", "float32"], [(3, 3, 1), (1,)]) == {
        "rank": 3, "empty": True, "mixed_float": False, "noncontig": False, "trailing_one": False}
    # a transposed (8, 4) tensor is a strided view
    assert envelope.features([(8, 4), (8,)], ["float16", "float32", "int64"], [(1, 8), (1,)]) == {
        "rank": 2, "empty": False, "mixed_float": True, "noncontig": True, "trailing_one": False}
    # a 0-d tensor is not empty; a trailing size 1 counts from two dimensions; a broadcast is not a strided view
    assert envelope.features([(), (5, 1), (1,), (3, 4)], ["bfloat16"] * 4, [(), (1, 1), (1,), (0, 1)]) == {
        "rank": 2, "empty": False, "mixed_float": False, "noncontig": False, "trailing_one": True}


def test_strided_view():
    sv = envelope.strided_view
    assert [sv((2, 3), (3, 1)), sv((2, 3), (1, 2)), sv((2, 3), (6, 1)), sv((2, 3), (0, 1)), sv((4, 1), (1, 7)),
            sv((0, 3), (1, 9))] == [False, True, True, False, False, False]


def test_common_mps_lists_read_with_ast_and_float32_filter():
    text = (
        "def mps_ops_modifier(ops):\n"
        "    UNDEFINED_XFAILLIST = {'a': [torch.float16], 'b': None}\n"
        "    if MACOS_VERSION < 14.0:\n"
        "        SKIPLIST_GRAD: dict = {'c': [torch.float32, torch.int8]}\n"
        "    OTHER = {'d': None}\n")
    ast.parse(text)
    assert common_mps_lists(text) == {"UNDEFINED_XFAILLIST": {"a", "b"}, "SKIPLIST_GRAD": {"c"}}
    assert common_mps_lists(text, float32_only=True) == {"UNDEFINED_XFAILLIST": {"b"}, "SKIPLIST_GRAD": {"c"}}


def test_mined_envelope_of_the_shipped_release():
    doc = envelope.load()
    assert doc["torch"] == "2.13.0"
    # what the OpInfo samples of 2.13.0 exercise (float32, forward and backward)
    assert doc["ops"]["mse_loss"]["empty"] is False
    assert doc["ops"]["mm"]["empty"] is True and doc["ops"]["mm"]["noncontig"] is True
    assert doc["ops"]["convolution_backward"]["noncontig"] is False
    assert doc["ops"]["native_layer_norm"]["mixed_float"] is False
    # records: the curated tables and common_mps.py's failure lists, each with its source
    assert {r["id"] for r in doc["records"]["mse_loss"]} == {"mse-loss-noncontiguous"}
    assert "add" not in doc["records"]
    cov = envelope.coverage()
    assert cov["overloads_exercised"] == len(doc["ops"]) and cov["regimes"] == len(envelope.regimes())


def test_regimes_only_for_families_with_a_record_and_features_outside():
    ids = {a.id for a in envelope.regimes()}
    assert "envelope-mse_loss-empty" in ids
    assert "envelope-mm-empty" not in ids  # mm's samples have empty tensors
    assert not any(i.startswith("envelope-add-") for i in ids)  # add has no record
    [a] = [a for a in envelope.regimes() if a.id == "envelope-mse_loss-empty"]
    # round 11 (h3): a loss is no elementwise kernel, so its empty result is no early return: the inputs decide
    assert (a.ops, a.when, a.torch) == (("aten::mse_loss",), {"any_empty_input": True}, ">=2.2")
    assert a.summary == ("mse_loss with a tensor with no elements: no sample of torch 2.13.0's MPS OpInfo tests had "
                         "one, and the mse_loss family has a record of MPS aborts or wrong results "
                         "(mse-loss-noncontiguous)")


def test_index_matches_envelope_regimes_on_shapes_dtypes_and_contiguity():
    idx = AdvisoryIndex("2.9.0", "15.5", advisories=())
    empty = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((0, 3), (0, 3)), contiguous=(True, True))
    assert idx.regime("aten::mse_loss", empty).id == "envelope-mse_loss-empty"
    full = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((2, 3), (2, 3)), contiguous=(True, True))
    assert idx.regime("aten::mse_loss", full) is None
    grad = AdvisoryFacts(dtypes=("float32",) * 3, shapes=((2, 4, 6, 6), (2, 3, 8, 8), (4, 3, 3, 3)),
                         contiguous=(), strides=((144, 1, 24, 4), (192, 64, 8, 1), (27, 9, 3, 1)))
    assert idx.regime("aten::convolution_backward", grad).id == "envelope-convolution_backward-noncontig"
    expanded = AdvisoryFacts(dtypes=grad.dtypes, shapes=grad.shapes, contiguous=(),
                             strides=((0, 0, 0, 0), (192, 64, 8, 1), (27, 9, 3, 1)))
    assert idx.regime("aten::convolution_backward", expanded) is None  # a broadcast gradient (of a sum)



def test_views_and_trailing_size_one_count_only_in_a_backward():
    ids = {a.id for a in envelope.regimes()}
    # forwards of real programs take views and size-1 dims (attention over transposed q/k/v, any() of a
    # (B, 1, 1, 1, 1) batch): the tuning cost that kept these features to backward overloads
    assert "envelope-_scaled_dot_product_flash_attention_for_cpu-noncontig" not in ids
    assert "envelope-any-trailing_one" not in ids
    assert {"envelope-convolution_backward-noncontig", "envelope-any-empty"} <= ids


def test_an_empty_result_and_a_curated_fact_leave_the_call_to_others():
    idx = AdvisoryIndex("2.13.0", "15.5", advisories=())
    # an elementwise call whose result is empty too: MPS returns before any kernel (the numel() == 0 returns)
    empty = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((0, 3), (0, 3)), contiguous=())
    assert idx.regime("aten::clamp", empty).id == "envelope-clamp-empty"
    done = AdvisoryFacts(dtypes=("float32", "float32"), shapes=((0, 3), (0, 3)), contiguous=(), result_empty=True)
    assert idx.regime("aten::clamp", done) is None
    # round 11 (h3): a loss encodes its graph whatever its result's size, so an empty result leaves it gated
    assert idx.regime("aten::mse_loss", empty).id == idx.regime("aten::mse_loss", done).id == "envelope-mse_loss-empty"
    # a curated advisory of the overload speaks for the feature from the first release of its range: count_nonzero
    # over an empty tensor (wrong on 2.5, not after), a layer norm of mixed dtypes (named from 2.8); before that
    # release nothing does; batch-norm-backward-channels-last (<2.14) covers every release
    torch = {a.id: a.torch for a in envelope.regimes()}
    assert (torch["envelope-count_nonzero-empty"], torch["envelope-native_layer_norm-mixed_float"]) == (
        "<2.5.0", "<2.8.0")
    assert "envelope-native_batch_norm_backward-noncontig" not in torch


def test_common_mps_entries_keep_comments_and_drop_random_draws():
    # round 10b: a paragraph that puts entries down to random draws (MPS and CPU use different generators) is no
    # record of an MPS fault; the nearest paragraph above an entry (its own or its run's heading) decides
    text = (
        "def mps_ops_modifier(ops):\n"
        "    UNDEFINED_XFAILLIST = {\n"
        "        # topk fails with duplicate indices\n"
        "        'topk': [torch.int16],\n"
        "        # Failures due to random output that they generate using\n"
        "        # Philox engine causing mismatch with CPU results\n"
        "        'bernoulli': None,\n"
        "        'uniform': [torch.float32],\n"
        "        # singular vectors are sign-ambiguous; the new randn shifted the sequence\n"
        "        'pca_lowrank': [torch.float32],\n"
        "        # See the issue\n"
        "        'index_put': [torch.int8],\n"
        "    }\n"
        "    SKIPLIST_GRAD = {'nn.functional.nll_loss': None}\n"
        "    XFAILLIST_GRAD = {'x': None}\n")
    assert build_envelope.common_mps_entries(text) == {
        "UNDEFINED_XFAILLIST": {"topk": "topk fails with duplicate indices", "index_put": "See the issue"},
        "SKIPLIST_GRAD": {"nn.functional.nll_loss": ""}}


def test_records_keep_the_releases_whose_file_lists_them():
    lists = {"2.9.0": {"ON_MPS_XFAILLIST": {"grid_sampler_2d"}}, "2.10.0": {"ON_MPS_XFAILLIST": {"grid_sampler_2d"}},
             "2.13.0": {"SKIPLIST": {"nosuchop"}}}
    recs = build_envelope.records({"grid_sampler_2d": {"grid_sampler_2d"}, "nosuchop": set()}, lists)
    assert [r for r in recs["grid_sampler_2d"] if r["from"] == "common_mps.py"] == [{
        "id": "ON_MPS_XFAILLIST:grid_sampler_2d", "report": "", "from": "common_mps.py",
        "releases": ["2.9.0", "2.10.0"],
        "source": "https://github.com/pytorch/pytorch/blob/v2.10.0/torch/testing/_internal/common_mps.py"}]
    assert not any(r["id"] == "SKIPLIST:nosuchop" for rs in recs.values() for r in rs)  # unmapped: no family


def test_mined_records_carry_the_releases_whose_common_mps_lists_them():
    # round 10b: every release that ships common_mps.py, each read in its own wheel's file
    doc = envelope.load()
    assert doc["coverage"]["common_mps_releases"] == ["2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0",
                                                      "2.12.1", "2.13.0", "2.14.0", "2.14.1"]
    got = {r["id"]: r["releases"] for f in ("grid_sampler_2d", "index_put", "topk") for r in doc["records"][f]
           if r["from"] == "common_mps.py"}
    assert got == {"ON_MPS_XFAILLIST:grid_sampler_2d": ["2.9.0", "2.9.1", "2.10.0"],
                   "SKIPLIST:nn.functional.grid_sample": ["2.13.0", "2.14.0", "2.14.1"],
                   "UNDEFINED_XFAILLIST:index_put": ["2.8.0"],
                   "SKIPLIST_GRAD:topk": ["2.13.0", "2.14.0", "2.14.1"],
                   "UNDEFINED_XFAILLIST:topk": ["2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.12.1"]}
    # random draws are no record (2.13.0's randint entries sit under the "Random ops" paragraph); no release's
    # file lists binary cross-entropy, so the family still has no record (the known gap)
    assert not {"randint", "randint_like", "linalg_svd", "binary_cross_entropy"} & set(doc["records"])
    assert (doc["coverage"]["families_with_a_record"], len(envelope.regimes())) == (105, 637)
