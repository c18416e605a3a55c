"""The torch-API half of the one judge (ops/api_judge.py, python_checks.yaml): plain values in, Judgements out,
no torch. The emulated Mac only binds arguments and acts on these answers (tests/run/test_release_python.py)."""

from mpsready.ops.judge import Judge


def test_autocast_per_release():
    before = Judge("2.4", "14.4").autocast("float16")
    assert (before.outcome, before.kind, before.exception, before.message, before.fixed_in) == (
        "error", "autocast", "RuntimeError", "User specified an unsupported autocast device_type 'mps'", "2.5.0")
    assert Judge("2.4", "14.4").autocast("float16", enabled=False).outcome == "error"  # checked before `enabled`
    assert Judge("2.5", "14.4").autocast("float16") is None
    only_fp16 = Judge("2.5", "14.4").autocast("bfloat16")
    assert (only_fp16.outcome, only_fp16.dtype) == ("warns", "bfloat16")
    assert only_fp16.message.endswith("MPS Autocast only supports dtype of torch.bfloat16 currently.")
    assert Judge("2.6", "14.4").autocast("bfloat16") is None
    assert Judge("2.6", "13.5").autocast("bfloat16").message == (
        "In MPS autocast, but the target dtype torch.bfloat16 is not supported on macOS versions below 14. "
        "Disabling autocast.")
    assert Judge("2.6", "13.5").autocast("float32").message.startswith("In MPS autocast, but the target dtype is")
    assert Judge("2.6", "13.5").autocast("float32", enabled=False) is None
    assert (Judge("2.9", "13.5").autocast_checked, Judge("2.13", "13.5").autocast_checked) == (True, False)


def test_fused_optimizer_constructors():
    assert Judge("2.3", "14.4").fused_optimizers() == ("Adam", "AdamW")
    assert Judge("2.4", "14.4").fused_optimizers() == ("Adam", "AdamW", "SGD", "Adagrad")
    assert Judge("2.5", "14.4").fused_optimizers() == ()
    j = Judge("2.4", "14.4").optimizer_fused("Adagrad", frozenset({"mps"}), True)
    assert (j.op, j.outcome, j.kind, j.exception, j.fixed_in, j.message) == (
        "torch.optim.Adagrad", "error", "release_api", "RuntimeError", "2.5.0",
        "`fused=True` requires all the params to be floating point Tensors of supported devices: "
        "['xpu', 'cpu', 'privateuseone'].")
    assert Judge("2.4", "14.4").optimizer_fused("Adam", frozenset({"cpu"}), True) is None
    assert Judge("2.4", "14.4").optimizer_fused("Adam", frozenset({"cpu"}), False).outcome == "error"
    assert Judge("2.4", "14.4").optimizer_fused("Adam", frozenset(), True) is None  # no params: nothing to refuse
    assert Judge("2.3", "14.4").optimizer_fused("SGD", frozenset({"mps"}), True) is None  # judged at its step's op
    assert Judge("2.5", "14.4").optimizer_fused("Adam", frozenset({"mps"}), True) is None


def test_capturable_step():
    j = Judge("2.3", "14.4").optimizer_step("AdamW", capturable=True, fused=False, grads_on_mps=True)
    assert (j.op, j.exception, j.message) == ("torch.optim.AdamW.step", "AssertionError",
                                              "If capturable=True, params and state_steps must be CUDA or XLA tensors.")
    assert Judge("2.13", "14.4").optimizer_step("Adam", True, False, True).message == (
        "If capturable=True, params and state_steps must be on supported devices: "
        "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")
    judge = Judge("2.13", "14.4")
    assert [judge.optimizer_step("Adam", *flags) for flags in
            ((False, False, True), (True, True, True), (True, False, False))] == [None, None, None]
    assert judge.optimizer_step("SGD", True, False, True) is None


def test_compile_amp_surface_and_load():
    old, proto, new = Judge("2.6", "14.4"), Judge("2.7", "14.4"), Judge("2.8", "14.4")
    assert (old.compile(True).exception, old.compile(True).fixed_in) == ("BackendCompilerFailed", "2.7.0")
    assert old.compile(False) is None and old.compile(True, suppress_errors=True) is None
    assert proto.compile(True).outcome == "warns" and proto.compile(True).message.startswith("torch.compile for Metal")
    assert new.compile(True) is None and new.compile_checked  # compiled functions still run eagerly, judged
    assert (Judge("2.7", "14.4").grad_scaler_float64, new.grad_scaler_float64) == (True, False)
    assert Judge("2.3", "14.4").missing_api() == {
        "torch.mps": frozenset({"compile_shader", "device_count", "is_available", "load_metallib",
                                "recommended_max_memory"}),
        "torch.backends.mps": frozenset({"get_core_count", "get_name"}),
        "torch": frozenset({"accelerator"}), "torch.nn": frozenset({"RMSNorm"}),
        "torch.nn.functional": frozenset({"rms_norm"})}
    assert Judge("2.13", "14.4").missing_api() == {"torch.mps": frozenset(), "torch.backends.mps": frozenset()}
    assert Judge("2.5", "14.4").torch_load_default()["weights_only_default"] is False
    assert Judge("2.6", "14.4").torch_load_default() is None
    assert Judge("2.13", "14.4").foreach_per_tensor


def test_every_curated_file_reads_the_same_with_libyaml():
    import yaml

    from mpsready.ops.build import curated

    for name in ("python_checks", "mps_dtype_checks", "mps_shape_rules", "routing", "autocast_mps"):
        text = curated.resources.files(curated.CURATED).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
        assert curated.load(name) == yaml.safe_load(text)


def test_a_compiled_layer_norm_is_vouched_for_as_either_call():
    # under inference_mode a layer norm reaches the emulated device as aten::layer_norm (MPS runs it whole)
    judge = Judge("2.13", "15.6")
    assert judge.compile_region([("aten::layer_norm", "float32", "other")]) is None
    assert judge.compile_region([("aten::native_layer_norm", "float32", "other")]) is None
    assert judge.compile_region([("aten::sort", "float32", "other")]) is not None


def test_compiled_eye_is_refused_on_2_13_only():
    # pytorch#191942: uint16 index expressions Metal code generation has no type for; fixed for 2.14 (PR #192020)
    region = [("aten::eye", "float32", "other"), ("aten::matmul", "float32", "other")]
    j = Judge("2.13", "15.6").compile_refusal(region)
    assert (j.exception, j.message, j.fixed_in, j.kind) == ("InductorError", "KeyError: torch.uint16", "2.14.0",
                                                            "compile")
    assert Judge("2.14", "15.6").compile_refusal(region) is None
    assert Judge("2.14", "15.6").compile_region(region) is None  # eye and matmul are vouched for


def test_compiled_bfloat16_literals_and_dynamic_reflection_padding_are_refused():
    # PR #176436 (fixed 2.11): a bfloat16 padding value or GELU constant in generated Metal does not compile
    pad = [("aten::gelu", "bfloat16", "pointwise"), ("aten::constant_pad_nd", "bfloat16", "other")]
    j = Judge("2.10", "15.6").compile_refusal(pad)
    assert (j.exception, j.message, j.fixed_in) == ("InductorError", "SyntaxError: failed to compile", "2.11.0")
    assert Judge("2.11", "15.6").compile_refusal(pad) is None
    assert Judge("2.10", "15.6").compile_refusal([("aten::gelu", "float32", "pointwise")]) is None
    # pytorch#169643 (2.9): reflection padding compiled with dynamic=True only
    refl = [("aten::reflection_pad2d", "float32", "other")]
    assert Judge("2.9", "15.6").compile_refusal(refl, dynamic=True).message == "use of undeclared identifier 'Where'"
    assert Judge("2.9", "15.6").compile_refusal(refl) is None


def test_compiled_train_mode_batch_norm_refused_on_2_12_vouched_for_on_2_13():
    # PR #184502: only the looped (multistage) form; a single pass compiles (advisory of PR #184328), a split one is
    # not established (unverified)
    region = [("aten::native_batch_norm", "float32", "welford_multistage"), ("aten::mean", "float32", "reduction")]
    j = Judge("2.12", "15.6").compile_refusal(region)
    assert (j.exception, j.message, j.fixed_in) == ("InductorError", "SyntaxError: failed to compile", "2.13.0")
    assert Judge("2.13", "15.6").compile_refusal(region) is None
    assert Judge("2.13", "15.6").compile_region([("aten::native_batch_norm", "float32", "welford_multistage")]) is None
    single = [("aten::native_batch_norm", "float32", "welford")]
    assert Judge("2.12", "15.6").compile_refusal(single) is None
    assert Judge("2.12", "15.6").compile_region(single) is None
    split = [("aten::native_batch_norm", "float32", "welford_split")]
    assert Judge("2.12", "15.6").compile_refusal(split) is None
    assert Judge("2.12", "15.6").compile_region(split).startswith(
        "compiled region with aten::native_batch_norm (welford_split): torch 2.12.1's Inductor is known to refuse")
    assert Judge("2.13", "15.6").compile_region(split) is None
    looped_norm = [("aten::native_layer_norm", "float32", "welford_multistage")]
    assert Judge("2.12", "15.6").compile_refusal(looped_norm) is None
    assert Judge("2.12", "15.6").compile_region(looped_norm) is not None
    assert Judge("2.12", "15.6").compile_region([("aten::native_layer_norm", "float32", "welford")]) is None
