"""Rules of the ``trace`` stage: ``OPS1xx`` (aten operators) and ``DTY2xx`` (dtypes seen at run time).

Every finding of ``mpsready trace`` is a *prediction*: it comes from a trace on another
device (CPU or CUDA) classified against the shipped support data (``mpsready.ops``).
"""

from __future__ import annotations

from mpsready.findings import Severity
from mpsready.rules import Rule, register

_FALLBACK_SRC = ("aten/src/ATen/mps/MPSFallback.mm (PyTorch 2.0+): PYTORCH_ENABLE_MPS_FALLBACK=1 runs ops without "
                 "an MPS kernel on the CPU with a warning; without it they fail with NotImplementedError "
                 "(issue #77764 up to 2.5, #141287 from 2.6)")

OPS_MISSING = register(Rule(
    code="OPS101", name="op-missing-on-mps", severity=Severity.BLOCKER,
    summary="The step dispatches an aten operator that has no MPS kernel in the target PyTorch release.",
    why="PyTorch raises NotImplementedError (\"The operator 'aten::...' is not currently implemented for the MPS "
        "device\") at the first call. With PYTORCH_ENABLE_MPS_FALLBACK=1 set before `import torch`, the op runs on "
        "the CPU instead, copying its inputs and outputs each call.",
    example="torch.linalg.eig(a)  # aten::_linalg_eig: no MPS kernel in 2.3.1 - 2.14.1",
    fix="Upgrade to the first PyTorch release that has the kernel (fixed_in), replace the call, move that op to the "
        "CPU explicitly, or set PYTORCH_ENABLE_MPS_FALLBACK=1 and accept the CPU round trip.",
    source="mpsready.ops support data (native_functions.yaml MPS dispatch keys per release); " + _FALLBACK_SRC,
))

OPS_FALLBACK = register(Rule(
    code="OPS102", name="op-cpu-fallback", severity=Severity.DEGRADES,
    summary="An aten operator of the step runs on the CPU: it is on PyTorch's always-fallback list, or it has no "
            "MPS kernel and PYTORCH_ENABLE_MPS_FALLBACK=1 is assumed.",
    why="The step finishes, but each call copies tensors to the CPU and back; one such op inside the loss can make "
        "MPS training slower than CPU training (kraken CTC loss).",
    example="F.ctc_loss(log_probs, targets, in_lens, out_lens)  # aten::_ctc_loss falls back before 2.14",
    fix="Upgrade to the release with an MPS kernel (fixed_in), or keep the fallback and check the share of step "
        "time it moves to the CPU.",
    source="mpsready.ops support data; " + _FALLBACK_SRC,
))

OPS_UNKNOWN = register(Rule(
    code="OPS103", name="op-support-unknown", severity=Severity.INFO,
    summary="The support data does not know this aten operator (or could not see the callees of a composite), "
            "so its MPS behaviour is not predicted.",
    why="mpsready never guesses that an op is supported; an unknown op may run, fall back or fail on a Mac.",
    example="aten::some_new_op  # added after the shipped support tables",
    fix="Run `mpsready record ENTRY --device mps` on a Mac to observe it.",
    source="mpsready.ops support data (absence of an entry)",
))

OPS_SPARSE = register(Rule(
    code="OPS104", name="sparse-tensor-on-mps", severity=Severity.BLOCKER,
    summary="A sparse tensor reaches the device, and the op that builds or uses it has no SparseMPS kernel in "
            "the target release.",
    why="Moving a model with a sparse buffer to MPS fails in `model.to('mps')` with \"Could not run "
        "'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from the 'SparseMPS' backend\"; "
        "the CPU-fallback switch does not cover sparse kernels.",
    example="self.register_buffer('heads', mask.to_sparse())  # openai-whisper alignment_heads",
    fix="Keep the buffer dense (or on the CPU), or upgrade to a release whose SparseMPS kernels cover the op.",
    source="pytorch/pytorch#141711; SparseMPS dispatch keys in native_functions.yaml (2.9+) via mpsready.ops",
))

OPS_MACOS = register(Rule(
    code="OPS105", name="op-needs-newer-macos", severity=Severity.BLOCKER,
    summary="The op's MPS kernel needs a newer macOS than the target.",
    why="The kernel exists in the release but refuses to run on an older macOS (a TORCH_CHECK on the OS version).",
    example="an MPS kernel guarded by is_macos_13_or_newer()",
    fix="Upgrade macOS, or move the op to the CPU on older systems.",
    source="macOS guards in the MPS kernels, via mpsready.ops (min_macos)",
))

OPS_DTYPE = register(Rule(
    code="OPS106", name="op-dtype-unsupported", severity=Severity.BLOCKER,
    summary="The op has an MPS kernel, but not for a dtype the step uses (on the target macOS).",
    why="The kernel raises a TypeError/RuntimeError such as \"MPS does not support cumsum op with int64 input\".",
    example="attn_mask.long().cumsum(-1)  # int64 cumsum needs macOS 13.3",
    fix="Cast to a supported dtype around the op, or upgrade macOS/PyTorch as the evidence says.",
    source="per-op dtype exceptions in mpsready.ops (common_mps.py xfail lists, MPS kernel checks)",
))

OPS_CUSTOM = register(Rule(
    code="OPS107", name="custom-op-mps-unknown", severity=Severity.INFO,
    summary="The step calls an operator from a non-aten namespace (torch.ops.<ns>.*: a compiled extension, "
            "torchvision) whose MPS support the shipped data does not cover.",
    why="Extensions dispatch on the device themselves; without an MPS kernel they fail (\"nms_impl: "
        "implementation for device mps:0 not found\"), and PYTORCH_ENABLE_MPS_FALLBACK does not apply to them.",
    example="mmcv.ops.nms(boxes, scores, 0.5)",
    fix="Check the extension's MPS support (torchvision ships MPS kernels for nms and roi_align since 0.16), or "
        "run the op on the CPU explicitly.",
    source="mmcv nms on M2 (open-mmlab reports); torchvision csrc/ops/mps",
))

OPS_STAGE = register(Rule(
    code="OPS108", name="trace-stage-failed", severity=Severity.INFO,
    summary="A stage of the step failed while tracing on the trace device itself, so its ops (and those of the "
            "stages after it) are missing from the prediction.",
    why="The prediction covers only what ran; a failure on the CPU or CUDA is not an MPS fact.",
    example="loss stage: RuntimeError: shape mismatch",
    fix="Fix the step so it runs on the trace device, then trace again.",
    source="mpsready step runner",
))

OPS_RELEASE_MACOS = register(Rule(
    code="OPS109", name="release-needs-newer-macos", severity=Severity.BLOCKER,
    summary="The target PyTorch release does not run MPS at all on the target macOS.",
    why="Below the release's minimum macOS, torch.backends.mps.is_available() is False and every op of the "
        "step would have to run on the CPU (moving a tensor to 'mps' raises).",
    example="torch 2.9+ with macOS 13.6",
    fix="Upgrade macOS, or use an older PyTorch release whose MPS backend supports that macOS.",
    source="minimum macOS per release from the libtorch_cpu.dylib error strings, via mpsready.ops (min_macos)",
))

OPS_SHAPE = register(Rule(
    code="OPS110", name="op-shape-unsupported", severity=Severity.BLOCKER,
    summary="The op has an MPS kernel, but the kernel refuses this call's shape, rank or dtype combination "
            "(or macOS aborts the process on it).",
    why="Some MPS kernels check their arguments: \"ConvTranspose 3D is not supported on MPS\" (up to 2.7), "
        "\"Output channels > 65536 not supported at the MPS device\" (2.5+), an empty baddbmm input.",
    example="nn.ConvTranspose3d(4, 2, 2)(x_5d)  # torch 2.7 on MPS",
    fix="Reshape the call (e.g. a 3-D transposed convolution as 2-D ones), run it on the CPU, or upgrade PyTorch "
        "where the rule says it was lifted.",
    source="data/curated/mps_shape_rules.yaml (strings read from each macOS wheel's libtorch_cpu.dylib)",
))

DTY_FLOAT64 = register(Rule(
    code="DTY201", name="float64-on-device", severity=Severity.BLOCKER,
    summary="A float64 (double) tensor is created on, or moved to, the device during the step.",
    why="MPS has no float64: \"Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
        "float64. Please use float32 instead.\" No PyTorch release fixes it (hardware limitation, pytorch#122602).",
    example="w = torch.from_numpy(np.array([1.0, 2.0]))  # NumPy's default float64",
    fix="Cast to float32 before the move (`torch.from_numpy(a).float().to(dev)`), create tensors with "
        "dtype=torch.float32, or set torch.set_default_dtype(torch.float32).",
    source="aten/src/ATen/native/mps/OperationUtils.mm (getMPSDataType); pytorch/pytorch#122602",
))

DTY_COMPLEX128 = register(Rule(
    code="DTY202", name="complex128-on-device", severity=Severity.BLOCKER,
    summary="A complex128 tensor is created on, or moved to, the device during the step.",
    why="complex128 is built from float64 halves, which MPS does not have; no release supports it.",
    example="torch.fft.fft(x.double())",
    fix="Use complex64 (macOS 14+), or keep the computation on the CPU.",
    source="aten/src/ATen/native/mps/OperationUtils.mm (getMPSDataType), via mpsready.ops dtype rules",
))

DTY_BF16 = register(Rule(
    code="DTY203", name="bfloat16-needs-macos14", severity=Severity.BLOCKER,
    summary="bfloat16 tensors reach the device, and the target macOS is older than the version MPS needs for them.",
    why="MPS bfloat16 needs macOS 14 (Sonoma) and PyTorch 2.3+: \"MPS BFloat16 is only supported on MacOS 14 or "
        "newer\".",
    example="model.to(torch.bfloat16).to('mps')",
    fix="Use float16 or float32 on older macOS, or upgrade macOS.",
    source="pytorch/pytorch PR #119641 (2.3); MPS bfloat16 macOS check, via mpsready.ops dtype rules",
))

DTY_COMPLEX64 = register(Rule(
    code="DTY204", name="complex64-needs-macos14", severity=Severity.BLOCKER,
    summary="complex64 tensors reach the device, and the target macOS is older than the version MPS needs for them.",
    why="MPS complex support needs macOS 14; older systems raise on the first complex op.",
    example="torch.stft(x, 400, return_complex=True)",
    fix="Upgrade macOS, or compute the complex part on the CPU.",
    source="MPS complex dtype checks, via mpsready.ops dtype rules",
))

DTY_LIMITED = register(Rule(
    code="DTY205", name="dtype-limited-on-macos", severity=Severity.DEGRADES,
    summary="A dtype the step uses has known limits on MPS for the target macOS (e.g. int64 in some reductions "
            "before macOS 13.3).",
    why="Some kernels reject the dtype or compute it differently on that macOS.",
    example="position_ids = attn_mask.long().cumsum(-1)",
    fix="Check the ops named in the evidence on the target macOS, or upgrade macOS.",
    source="mpsready.ops dtype rules",
))

DTYPE_RULE_CODES = {"float64": "DTY201", "complex128": "DTY202", "bfloat16": "DTY203", "complex64": "DTY204"}
