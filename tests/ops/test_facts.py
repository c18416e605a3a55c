"""Known MPS facts pinned per release (issue 3 "Done when"); each with its source."""

from __future__ import annotations

import pytest

from mpsready.ops.api import load_db, shipped_versions

ALL = ["2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.13.0", "2.14.1"]
# with the .0 releases and 2.12 (issue 10): since/fixed_in name the first release that shipped a change; 2.2.2 (issue
# 33: the last release with a macOS x86_64 wheel) is the oldest, so an op MPS ran in 2.2 says "since 2.2.2"
SHIPPED = ["2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1",
           "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"]


def test_shipped_versions():
    assert shipped_versions() == SHIPPED


@pytest.mark.parametrize("release", ALL)
def test_add_tensor_kernel_everywhere_through_delegate(release):
    # native_functions.yaml (every release): add.Tensor has `structured_delegate: add.out`, add.out has `MPS:`
    s = load_db(release).lookup("aten::add.Tensor")
    assert (s.status, s.how, s.since_torch, s.runs_on_mps) == ("kernel", "yaml:delegate(add.out)", "2.2.2", True)


@pytest.mark.parametrize("release,status", [(v, "missing") for v in ALL[:5]] + [(v, "kernel") for v in ALL[5:]])
def test_nanmedian_dim_values_first_kernel_in_2_8(release, status):
    # yaml: nanmedian.dim_values gains `MPS: nanmedian_out_mps` in 2.8.0 (research note §1.2 "since 2.8")
    s = load_db(release).lookup("nanmedian.dim_values")
    assert (s.status, s.since_torch) == (status, "2.8.0")
    assert s.fixed_in == ("2.8.0" if status == "missing" else None)


def test_nanmedian_dim_is_composite_explicit():
    # yaml: nanmedian.dim is CompositeExplicitAutograd in every release (research note §8: the flat lookup hides
    # the missing nanmedian.dim_values before 2.8)
    s = load_db("2.5").lookup("aten.nanmedian.dim")
    assert (s.status, s.how) == ("composite", "yaml:CompositeExplicitAutograd")


@pytest.mark.parametrize("release,status", [(v, "missing") for v in ALL[:3]] + [(v, "kernel") for v in ALL[3:]])
def test_upsample_bicubic2d_since_2_6(release, status):
    # yaml: upsample_bicubic2d.out gains `MPS:` in 2.6.0 (research note §1.2 "since 2.6")
    s = load_db(release).lookup("aten::upsample_bicubic2d")
    assert (s.status, s.since_torch) == (status, "2.6.0")


@pytest.mark.parametrize("release,status", [(v, "missing") for v in ALL[:-1]] + [("2.14.1", "kernel")])
def test_ctc_loss_since_2_14(release, status):
    # yaml: _ctc_loss gains `MPS: ctc_loss_mps` in 2.14.1 (research note §1.2 "since 2.14")
    s = load_db(release).lookup("aten::_ctc_loss")
    assert (s.status, s.since_torch, s.fixed_in) == (status, "2.14.0", "2.14.0" if status == "missing" else None)


@pytest.mark.parametrize("release", ALL)
def test_embedding_renorm_always_cpu_fallback(release):
    # MPSFallback.mm m.impl("embedding_renorm_", boxed mps_fallback) in every release (research note §2.3)
    s = load_db(release).lookup("aten::embedding_renorm_")
    assert (s.status, s.how, s.fixed_in) == ("cpu_fallback_always", "curated:MPSFallback.mm", None)
    assert any("MPSFallback.mm" in src for src in s.sources)


@pytest.mark.parametrize("release", ALL[:-1])
def test_linalg_svd_forced_to_cpu_up_to_2_13(release):
    # MPSFallback.mm registers linalg_svd and linalg_svd.U as boxed CPU fallback 2.3.1-2.13.0 (research note §2.3)
    db = load_db(release)
    for op in ("linalg_svd", "linalg_svd.U"):
        s = db.lookup(op)
        assert (s.status, s.fixed_in) == ("cpu_fallback_always", "2.14.0")


def test_linalg_svd_decomposes_in_2_14():
    # 2.14.1: MPSFallback.mm keeps only embedding_renorm_ (research note §2.3); linalg_svd is CIA in the yaml and
    # _linalg_svd has its own MPS kernel (research note §1.2 "since 2.14")
    db = load_db("2.14.1")
    assert (db.lookup("linalg_svd").status, db.lookup("linalg_svd").how) == ("composite", "yaml:implicit")
    assert db.lookup("_linalg_svd").status == "kernel"
    assert load_db("2.13").lookup("_linalg_svd").status == "missing"


@pytest.mark.parametrize("release", ALL)
def test_linalg_eig_missing_everywhere(release):
    # yaml: linalg_eig / linalg_eig.out / _linalg_eigvals have CPU, CUDA keys only in every release.
    # The issue says "_linalg_eig": no overload of that name exists in any release's yaml (it is "unknown").
    db = load_db(release)
    for op in ("linalg_eig", "linalg_eig.out", "_linalg_eigvals"):
        s = db.lookup(op)
        assert (s.status, s.cuda, s.since_torch, s.fixed_in) == ("missing", "kernel", None, None)
    assert db.lookup("aten::_linalg_eig").status == "unknown"


@pytest.mark.parametrize("release", ALL[:9])
def test_native_group_norm_backward_python_registration(release):
    # torch/backends/mps/__init__.py _init(): _lib.impl("native_group_norm_backward", ..., "MPS") 2.3.1-2.11.0
    # (research note §2.4); the yaml alone says "none" for MPS there
    s = load_db(release).lookup("native_group_norm_backward")
    assert (s.status, s.how) == ("kernel", "python:torch/backends/mps/__init__.py")
    assert s.cuda == "kernel"


@pytest.mark.parametrize("release", ["2.13.0", "2.14.1"])
def test_native_group_norm_backward_yaml_from_2_13(release):
    # yaml 2.13.0+: native_group_norm_backward has its own MPS key; the Python registration is gone (§2.4)
    s = load_db(release).lookup("native_group_norm_backward")
    assert (s.status, s.how) == ("kernel", "yaml:explicit")


@pytest.mark.parametrize("release", ALL)
@pytest.mark.parametrize("macos", [None, "12.3", "14.0", "26.0"])
def test_float64_refused_whatever_the_op(release, macos):
    # libtorch_cpu.dylib string "Cannot convert a MPS Tensor to float64 dtype" in every release; pytorch#122602
    rules = {r.dtype: r for r in load_db(release).dtype_rules(macos=macos)}
    assert rules["float64"].effect == "error" and rules["float64"].min_macos is None
    assert rules["complex128"].effect == "error"
    assert "122602" in rules["float64"].source


@pytest.mark.parametrize("release", ALL)
def test_bfloat16_needs_macos_14(release):
    # "MPS BFloat16 is only supported on MacOS 14 or newer" (dylib 2.3.1-2.8.0), pytorch PR #119641 (§6)
    db = load_db(release)
    before = {r.dtype: r for r in db.dtype_rules(macos="13.5")}
    assert (before["bfloat16"].effect, before["bfloat16"].min_macos) == ("unsupported_before", "14.0")
    assert "bfloat16" not in {r.dtype for r in db.dtype_rules(macos="14.0")}
    assert "int64" not in before  # int64 native from macOS 13.3 (dylib strings 2.3.1-2.8.0, PRs #95817/#95941)
    assert db.dtype_rules(macos="13.2")[-1].dtype == "int64"


@pytest.mark.parametrize("release,macos", [("2.3.1", "12.3"), ("2.4.1", "12.3"), ("2.5.1", "12.3"),
                                           ("2.6.0", "13.0"), ("2.7.1", "13.0"), ("2.8.0", "13.0"),
                                           ("2.9.1", "14.0"), ("2.10.0", "14.0"), ("2.11.0", "14.0"),
                                           ("2.13.0", "14.0"), ("2.14.1", "14.0")])
def test_min_macos_per_release(release, macos):
    # "The MPS backend is supported on MacOS X+" string per dylib (research note §6); 2.4.1 assumed = 2.3/2.5
    db = load_db(release)
    assert db.min_macos == macos
    assert db.macos_supported(macos) and not db.macos_supported("12.0")


@pytest.mark.parametrize("op,release,removed", [("_pin_memory", "2.5.1", ("2.5.0",)),
                                                ("argsort.stable", "2.9", ("2.5.0",)),
                                                ("linalg_lu_factor", "2.11", ("2.10.0",)),
                                                ("cholesky.out", "2.13", ("2.14.0",))])
def test_support_removed_again(op, release, removed):
    # research note §1.2: _pin_memory, is_pinned, argsort.stable lose MPS in 2.5; linalg_lu_factor in 2.10;
    # cholesky(.out) removed from the yaml in 2.14
    assert load_db(release).lookup(op).removed_in == removed


def test_cholesky_absent_in_2_14_is_unknown():
    # yaml 2.14.1 has no cholesky (research note §9.3)
    s = load_db("2.14.1").lookup("cholesky")
    assert (s.status, s.removed_in) == ("unknown", ("2.14.0",))


@pytest.mark.parametrize("release,ops", [
    ("2.3.1", {"bitwise_left_shift.Tensor_out", "bitwise_right_shift.Tensor_out", "embedding_renorm_", "linalg_svd",
               "linalg_svd.U", "im2col", "col2im", "upsample_nearest3d.vec"}),
    ("2.5.1", {"embedding_renorm_", "linalg_svd", "linalg_svd.U", "im2col", "col2im", "upsample_nearest3d.vec"}),
    ("2.7.1", {"embedding_renorm_", "linalg_svd", "linalg_svd.U", "col2im", "upsample_nearest3d.vec"}),
    ("2.8.0", {"embedding_renorm_", "linalg_svd", "linalg_svd.U"}),
    ("2.14.1", {"embedding_renorm_"}),
])
def test_mpsfallback_lists(release, ops):
    # research note §2.3 table of boxed CPU-fallback ops per release; plus the _slow_conv2d_forward guard
    db = load_db(release)
    got = {k for k in db.op_names() if db.raw(k)["s"] == "cpu_fallback_always"}
    assert got == ops
    assert [k for k in db.op_names() if db.raw(k)["s"] == "guard"] == ["_slow_conv2d_forward"]


def test_lookup_names_normalised():
    db = load_db("2.13")
    for name in ("aten::relu", "relu", "relu.default", "aten.relu.default", "aten::relu.default"):
        assert db.lookup(name).op == "aten::relu"
    assert db.lookup("aten.add.Tensor").op == "aten::add.Tensor"
    s = db.lookup("torchvision::nms")
    assert (s.op, s.status) == ("torchvision::nms", "unknown")
    with pytest.raises(ValueError):
        db.lookup("  ")


@pytest.mark.parametrize("version,release", [("2.5", "2.5.1"), ("2.13.0+cpu", "2.13.0"),
                                             ("2.14", "2.14.1"), ("2.6.0a0+git123", "2.6.0"),
                                             ("2.5.0", "2.5.0"), ("2.12", "2.12.1"), ("2.12.0", "2.12.0")])
def test_version_resolution(version, release):
    assert load_db(version).torch_version == release


@pytest.mark.parametrize("version", ["2.1", "2.1.2", "1.13.1", "2.15.0", "3.0", "x"])
def test_version_outside_every_table(version):
    with pytest.raises(ValueError):
        load_db(version)


def test_missing_minor_release_is_refused_not_answered_from_another():
    # issue 10: a release without its own table is never silently answered from the previous one
    if "2.12.0" in shipped_versions():
        assert load_db("2.12").torch_version.startswith("2.12.")
    else:
        with pytest.raises(ValueError, match="no MPS support table for torch 2.12.0"):
            load_db("2.12.0")


@pytest.mark.parametrize("release,target", [("2.3.1", "aten::_scaled_dot_product_attention_math"),
                                            ("2.5.1", "aten::_scaled_dot_product_attention_math_for_mps"),
                                            ("2.14.1", "aten::_scaled_dot_product_attention_math_for_mps")])
def test_route_sdpa(release, target):
    # attention.cpp: MPS takes the math path; _scaled_dot_product_attention_math_for_mps exists from 2.5 (yaml)
    db = load_db(release)
    for op in ("_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_efficient_attention",
               "_scaled_dot_product_flash_attention"):
        assert db.route(op) == target
    # attention.cpp: _math_for_mps only without grad; training takes the CIA math decomposition
    info = db.route_info("_scaled_dot_product_flash_attention")
    assert info.get("otherwise") == ("_scaled_dot_product_attention_math" if "for_mps" in target else None)
    assert db.route("_scaled_dot_product_flash_attention_backward") == "aten::_scaled_dot_product_attention_math"
    assert db.lookup("_scaled_dot_product_attention_math").how == "yaml:implicit"


@pytest.mark.parametrize("release", ALL)
def test_route_conv_lstm(release):
    # Convolution.cpp select_conv_backend (ConvBackend::Mps); RNN.cpp lstm() -> _lstm_mps
    db = load_db(release)
    assert db.route("aten::_slow_conv2d_forward") == "aten::_mps_convolution"
    assert db.route("mkldnn_convolution") == "aten::_mps_convolution"
    assert db.route("cudnn_convolution") == "aten::_mps_convolution"
    assert db.route("slow_conv_transpose2d") == "aten::_mps_convolution_transpose"
    assert db.route("_cudnn_rnn") == "aten::_lstm_mps"
    assert db.route("aten::add.Tensor") is None
    for target in ("_mps_convolution", "_lstm_mps", "mps_convolution_backward"):
        assert db.lookup(target).status == "kernel"


@pytest.mark.parametrize("release", ["2.3.1", "2.8.0", "2.9.1", "2.14.1"])
def test_route_native_dropout(release):
    # Dropout.cpp is_fused_kernel_acceptable(): CUDA/XPU/Lazy/PrivateUse1 only, so a CUDA trace's native_dropout
    # is bernoulli_ + div_ + mul on MPS in every release
    db = load_db(release)
    assert db.route("native_dropout") == db.route("aten::_fused_dropout") == "aten::bernoulli_.float"
    assert db.route("native_dropout_backward") == "aten::mul.Tensor"
    # the rest of _dropout_impl, what the CPU/MPS path dispatches besides bernoulli_ (routing.yaml `with`)
    impl = [{"op": "empty_like"}, {"op": "empty_strided", "parent": "empty_like"}, {"op": "div_.Scalar"},
            {"op": "div_.Tensor", "parent": "div_.Scalar"}, {"op": "mul.Tensor"}]
    assert db.route_info("native_dropout")["with"] == db.route_info("_fused_dropout")["with"] == impl
    assert "with" not in db.route_info("native_dropout_backward")


def test_every_route_target_exists_in_its_release():
    # a routed op points at an op of the same release's yaml; the target may itself be missing on MPS
    # (_cudnn_ctc_loss -> _ctc_loss, which has an MPS kernel only from 2.14.1): that is the honest prediction
    missing_targets = set()
    for release in ALL:
        db = load_db(release)
        for key in db._doc["routing"]:
            s = db.lookup(db.route(key))
            assert s.status != "unknown", (release, key)
            if s.status == "missing":
                missing_targets.add(s.op)
    assert missing_targets == {"aten::_ctc_loss", "aten::_ctc_loss.Tensor", "aten::grid_sampler_2d_backward"}


def test_core_and_sparse_columns():
    # yaml tags: add.Tensor is `core`; SparseMPS keys appear in 2.9 (research note §1.2: 108 overloads)
    assert load_db("2.13").lookup("add.Tensor").core is True
    assert load_db("2.9").counts["yaml"]["sparse_mps"] == 108
    assert load_db("2.8").counts["yaml"]["sparse_mps"] == 0


def test_matrix_exp_needs_macos_15_in_2_14():
    # common_mps.py 2.14.1 MACOS_BEFORE_15_0_XFAILLIST = {matrix_exp}; dylib string "linalg.matrix_exp on MPS
    # requires macOS 15.0 or newer" (research note §6); yaml 2.14.1 gives linalg_matrix_exp an MPS key
    db = load_db("2.14.1")
    s = db.lookup("linalg_matrix_exp", macos="14.4")
    assert (s.status, s.min_macos, s.dtype_exceptions["*"]["min_macos"]) == ("kernel", "15.0", "15.0")
    assert db.lookup("linalg_matrix_exp", macos="15.0").dtype_exceptions == {}


@pytest.mark.parametrize("release", ["2.8.0", "2.9.1", "2.11.0", "2.13.0", "2.14.1"])
def test_integer_convolution_gap(release):
    # common_mps.py (2.8+): "nn.functional.conv1d"/"conv2d": [torch.int64] -> the kernel's gap;
    # "conv_transpose2d": [int64, bfloat16], "conv_transpose3d": [int64, bfloat16, float16] differ by rank, so
    # they are conditions on _mps_convolution_transpose
    db = load_db(release)
    assert db.lookup("_mps_convolution").dtype_exceptions["int64"]["unsupported"] is True
    t = db.lookup("_mps_convolution_transpose")
    assert "float16" not in t.dtype_exceptions and "bfloat16" not in t.dtype_exceptions
    assert any("'nn.functional.conv_transpose3d'" in c and "float16" in c for c in t.conditions)


@pytest.mark.parametrize("release", ["2.3.1", "2.11.0", "2.14.1"])
def test_adaptive_avg_pool_is_a_condition_not_a_gap(release):
    # research note §3 caveat: "input sizes must be divisible by output sizes" is an input condition
    s = load_db(release).lookup("_adaptive_avg_pool2d")
    assert (s.status, s.conditions, s.dtype_exceptions) == ("kernel", ("input size divisible by output size",), {})


def test_scatter_reduce_mode_gaps_are_conditions():
    # common_mps.py 2.9.1: "scatter_reduceamax": [torch.int32, torch.int64] if MACOS_VERSION < 15.0 else [int64].
    # The key is a variant (reduce="amax"): sum/mean still work for int64, so it is a condition, not a dtype gap.
    s = load_db("2.9.1").lookup("scatter_reduce.two", macos="14.0")
    assert "int64" not in s.dtype_exceptions
    assert s.conditions[0] == ("some calls fail on MPS for int32 (below macOS 15.0), int64: common_mps.py xfails "
                               "OpInfo 'scatter_reduceamax'")


@pytest.mark.parametrize("release", ["2.8.0", "2.11.0", "2.13.0", "2.14.1"])
def test_variant_opinfo_does_not_block_plain_op(release):
    # common_mps.py: "log_softmaxwith_dtype" xfails float32 (the with-dtype variant), "nn.functional.grid_sample"
    # and "linalg.cond"/"svd_lowrank" xfail every dtype: none of them may mark the shared kernel unsupported
    db = load_db(release)
    for op in ("_log_softmax", "_softmax", "grid_sampler_2d", "_linalg_svd"):
        dx = db.lookup(op).dtype_exceptions
        assert "float32" not in dx and "*" not in dx, (op, dx)
    assert any("log_softmaxwith_dtype" in c for c in db.lookup("_log_softmax").conditions)


def test_no_common_mps_before_2_8():
    # common_mps.py is absent from wheels before 2.8 (research note §3): no per-op dtype data there
    assert load_db("2.7.1")._doc["common_mps"] is None
    assert load_db("2.7.1").lookup("scatter_reduce.two").dtype_exceptions == {}


@pytest.mark.parametrize("release,unmapped", [
    ("2.9.1", ["linalg.matrix_norm", "linalg.norm", "linalg.normsubgradients_at_zero", "nn.functional.norm",
               "sparse.mm", "symeig", "to"]),
    ("2.14.1", ["nn.functional.local_response_norm", "nn.functional.multilabel_soft_margin_loss", "to"]),
])
def test_unmapped_opinfo_keys_are_listed(release, unmapped):
    # which common_mps keys have no aten overload (stale keys, conversions, SVD-only ords): see docs/ops.md
    assert load_db(release)._doc["common_mps"]["unmapped_keys"] == unmapped


def test_autocast_mps_list_only_where_known():
    # research note §2.3: AutocastMPS has 98 registrations in 2.5.1 (binary); the curated list from
    # autocast_mode.cpp @ 008ec6b has those 98 (data/curated/autocast_mps.yaml); other releases ship none
    db = load_db("2.5.1")
    assert len(db.autocast_mps) == 98
    assert (db.autocast_mps_policy["aten::mm"], db.autocast_mps_policy["aten::softmax.int"]) == (
        "lower_precision_fp", "fp32_set_opt_dtype")
    for release in ("2.3.1", "2.4.1", "2.9.1", "2.14.1"):
        other = load_db(release)
        assert other.autocast_mps == frozenset() and "binary" in other.autocast_mps_note


def test_mps_only_ops():
    # yaml: overloads with an MPS key and no CPU/CUDA kernel (research note §9 pitfall 2: _mps_convolution,
    # _lstm_mps, linear, max_pool2d, ... run as themselves only on MPS). Our count: 15 (2.3.1) to 19 (2.8.0).
    assert sorted(load_db("2.14.1").mps_only_ops) == [
        "aten::_copy_from", "aten::_copy_from_and_resize", "aten::_lstm_mps", "aten::_mps_convolution",
        "aten::_mps_convolution_transpose", "aten::_scaled_dot_product_attention_math_for_mps",
        "aten::constant_pad_nd", "aten::linear", "aten::linear_backward", "aten::lstm_mps_backward",
        "aten::max_pool2d", "aten::max_pool2d_backward", "aten::mps_convolution_backward",
        "aten::mps_convolution_transpose_backward", "aten::permute", "aten::repeat"]
    assert [len(load_db(v).mps_only_ops) for v in ALL] == [15, 15, 18, 18, 18, 19, 18, 16, 16, 16, 16]


@pytest.mark.parametrize("release", ["2.8.0", "2.13.0", "2.14.1"])
def test_complex_allowlist_applied_per_op(release):
    # common_mps.py: every OpInfo outside SUPPORTED_COMPLEX_OPS xfails complex32/complex64 on MPS; an op is
    # flagged only if no allow-listed OpInfo reaches it ("add", "mul", "fft.*" are allow-listed)
    db = load_db(release)
    qr = db.lookup("linalg_qr").dtype_exceptions["complex64"]
    assert (qr["unsupported"], qr["opinfo"]) == (True, "linalg.qr")
    for op in ("add.Tensor", "mul.Tensor", "empty_like", "resize_", "_fft_c2c"):
        assert "complex64" not in db.lookup(op).dtype_exceptions, op
    # fft.hfft2 complex64 below macOS 14.4 (MACOS_BEFORE_14_4_XFAILLIST) is one transform: a condition on c2c
    cond = [c for c in db.lookup("_fft_c2c").conditions if "'fft.hfft2'" in c]
    assert len(cond) == 1 and "complex64 (below macOS 14.4)" in cond[0]


def test_complex_allowlist_grows():
    # SUPPORTED_COMPLEX_OPS gains e.g. "vdot" by 2.13 (common_mps.py 2.9.1 vs 2.13.0)
    assert "complex64" in load_db("2.9.1").lookup("vdot").dtype_exceptions
    assert "complex64" not in load_db("2.13.0").lookup("vdot").dtype_exceptions


def test_new_mps_device_kernels_per_release():
    # research note §1.2: "MPS device kernels first appearing per version (yaml): 2.3.1 658, +7 (2.4), +24 (2.5),
    # +21 (2.6), +32 (2.7), +74 (2.8), +34 (2.9), +10 (2.10), +12 (2.11), +23 (2.13), +24 (2.14)"
    seen, new = set(), []
    for release in ALL:
        db = load_db(release)
        dev = {k for k in db.op_names() if db.raw(k)["h"].startswith(("yaml:explicit", "yaml:delegate"))}
        new.append(len(dev - seen))
        seen |= dev
    assert new == [658, 7, 24, 21, 32, 74, 34, 10, 12, 23, 24]


@pytest.mark.parametrize("release,ops", [
    # research note §1.2 "Examples (first version with an MPS kernel, from the yaml)", at the .0 release that shipped it
    ("2.5.0", ["_fused_adam_", "_fused_adamw_", "_fused_sgd_"]),
    ("2.7.0", ["_upsample_bilinear2d_aa", "angle"]),
    ("2.8.0", ["nanmedian", "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]),
    ("2.9.0", ["grid_sampler_3d", "avg_pool3d", "kthvalue.values", "max_unpool2d"]),
    ("2.10.0", ["_embedding_bag", "unique_dim"]),
    ("2.12.0", ["linalg_qr.out", "index_reduce.out"]),  # the research note saw them first in 2.13.0 (no 2.12 table then)
    ("2.14.0", ["_linalg_svd", "_linalg_eigh", "linalg_lstsq.out", "_ctc_loss"]),  # linalg_lstsq itself is CEA
])
def test_kernel_since_examples(release, ops):
    for op in ops:
        assert load_db("2.14.1").lookup(op).kernel_since == release, op


def test_still_missing_in_2_14():
    # research note §1.2: "Still missing in 2.14.1: take, put_, logspace, _adaptive_avg_pool3d,
    # adaptive_max_pool3d, fractional_max_pool2d and _pdist_forward" (logspace: the CIA op decomposes onto the
    # missing logspace.out)
    db = load_db("2.14.1")
    for op in ("take", "put_", "logspace.out", "_adaptive_avg_pool3d", "adaptive_max_pool3d",
               "fractional_max_pool2d", "_pdist_forward"):
        assert db.lookup(op).status == "missing", op
    assert db.lookup("linalg_lstsq").since_torch == "2.2.2"  # CEA everywhere: an MPS path (composite) since 2.2.2
