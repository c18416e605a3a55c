"""API1xx: CUDA-only APIs and device handling found in Python syntax trees."""

from mpsready.scan.rules._define import rule

TORCH = "PyTorch 2.13.0"

DOT_CUDA = rule(
    "API101", "dot-cuda-call", "blocker",
    "A `.cuda()` call moves a tensor or module to CUDA.",
    "On a Mac PyTorch is built without CUDA: `.cuda()` raises 'AssertionError: Torch not compiled with CUDA "
    "enabled' and nothing reaches MPS.",
    "model = Net().cuda()",
    "Pick a device once (`device = torch.accelerator.current_accelerator()` or an MPS-aware selection) and use "
    "`.to(device)`.",
    f"{TORCH} torch/cuda/__init__.py _lazy_init; https://github.com/mistralai/mistral-inference/issues/3",
    triggers=("cuda",),  # `.cuda()`
)
TORCH_CUDA_CALL = rule(
    "API102", "torch-cuda-api", "blocker",
    "A `torch.cuda.*` name; the finding names its MPS or device-agnostic equivalent where one exists.",
    "Most torch.cuda functions initialise CUDA and raise 'Torch not compiled with CUDA enabled' on a Mac; some "
    "(is_available, device_count, empty_cache, manual_seed) quietly return False/0 or do nothing. The severity "
    "is per function (data file src/mpsready/scan/data/cuda_api.yaml).",
    "torch.cuda.synchronize()",
    "Use the equivalent named in the finding: torch.mps.* (synchronize, empty_cache, manual_seed, "
    "current_allocated_memory) or torch.accelerator.* (PyTorch >= 2.6).",
    f"{TORCH} torch/cuda/__init__.py, torch/mps/__init__.py, torch/accelerator/__init__.py",
    triggers=("cuda",),  # every name in data/cuda_api.yaml is torch.cuda.<name>
)
CUDA_DEVICE_LITERAL = rule(
    "API103", "cuda-device-literal", "blocker",
    "A hard-coded CUDA device: 'cuda'/'cuda:N' passed as a device, `.to('cuda')`, `torch.device('cuda', ...)`.",
    "Creating or moving a tensor to a CUDA device on a Mac raises 'Torch not compiled with CUDA enabled'.",
    "x = torch.zeros(3, device='cuda')",
    "Pass the selected device object instead of a literal.",
    f"{TORCH} torch/cuda/__init__.py _lazy_init; https://github.com/mistralai/mistral-inference/issues/3",
    triggers=("cuda",),  # "cuda" / "cuda:N" literals
)
DEVICE_SELECTION = rule(
    "API104", "device-selection-ignores-mps", "degrades",
    "Device selection that picks 'cuda' if available else 'cpu' and never considers MPS.",
    "On a Mac torch.cuda.is_available() is False, so the code silently runs everything on the CPU: no error, "
    "just a slow run that looks like a working Mac port.",
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
    "`device = torch.accelerator.current_accelerator() or torch.device('cpu')` (PyTorch >= 2.6), or add an "
    "`elif torch.backends.mps.is_available(): 'mps'` branch.",
    "https://github.com/openai/whisper/pull/382 ; PyTorch 2.13.0 torch/accelerator/__init__.py",
    triggers=("cuda",),  # the 'cuda' side of the selection
)
CUDNN_FLAGS = rule(
    "API105", "cudnn-flags", "info",
    "torch.backends.cudnn settings (benchmark, deterministic, enabled).",
    "cuDNN does not exist on MPS, so these settings do nothing there. `cudnn.deterministic = True` in particular "
    "does not make MPS deterministic; use torch.use_deterministic_algorithms(True) and check its MPS coverage.",
    "torch.backends.cudnn.benchmark = True",
    "Keep for CUDA; for reproducibility on every backend use torch.use_deterministic_algorithms().",
    f"{TORCH} torch/backends/cudnn/__init__.py",
    triggers=("cudnn", "cuda"),  # torch.backends.cudnn.* / torch.backends.cuda.*
)
TF32_SWITCH = rule(
    "API106", "tf32-switch", "info",
    "TF32 switches: torch.backends.cuda.matmul.allow_tf32, cudnn.allow_tf32, torch.set_float32_matmul_precision.",
    "TF32 is an NVIDIA (Ampere+) format; MPS computes float32 matmuls in float32. Harmless on a Mac, but CUDA "
    "reference results made with TF32 differ from Mac results by more than float32 rounding.",
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "When comparing against a CUDA reference, record the TF32 setting and widen tolerances (or disable TF32).",
    f"{TORCH} torch/backends/cuda/__init__.py; https://pytorch.org/docs/stable/notes/cuda.html#tf32-on-ampere",
    triggers=("cudnn", "cuda", "set_float32_matmul_precision"),
)
NCCL = rule(
    "API107", "nccl-backend", "blocker",
    "NCCL: init_process_group('nccl'/backend='nccl'), torch.cuda.nccl or other NCCL imports.",
    "macOS PyTorch wheels are built without NCCL: 'RuntimeError: Distributed package doesn't have NCCL built in'. "
    "Reported with scope 'distributed': multi-GPU training stays on CUDA; it does not condemn the project.",
    "torch.distributed.init_process_group('nccl')",
    "Use 'gloo' when not on CUDA (`backend = 'nccl' if torch.cuda.is_available() else 'gloo'`), and skip "
    "process groups for single-device runs.",
    "https://github.com/meta-llama/llama/issues/722 ; PyTorch 2.13.0 torch/distributed/distributed_c10d.py",
    triggers=("nccl", "init_process_group"),
)
CUDA_AMP = rule(
    "API108", "cuda-amp", "degrades",
    "torch.cuda.amp (autocast, GradScaler) or autocast/GradScaler with device_type 'cuda'.",
    "torch.cuda.amp is deprecated, and on a Mac an enabled autocast('cuda') warns 'CUDA is not available or "
    "torch_xla is imported. Disabling autocast.' and runs in float32: --amp silently does nothing. "
    "autocast('cuda', enabled=False) is silent and switches off CUDA autocast only: inside an MPS autocast region "
    "the code it was meant to keep in float32 runs in reduced precision.",
    "with torch.cuda.amp.autocast():\n    out = model(x)",
    "torch.amp.autocast(device_type=device.type) and torch.amp.GradScaler(device.type).",
    "https://github.com/milesial/Pytorch-UNet/issues/393 ; PyTorch 2.13.0 torch/cuda/amp/autocast_mode.py, "
    "torch/amp/autocast_mode.py (autocast.__init__ warns only `if enabled:`)",
    triggers=("cuda",),  # torch.cuda.amp, autocast("cuda"), GradScaler("cuda")
)
GRAD_SCALER = rule(
    "API109", "grad-scaler", "info",
    "A torch.amp.GradScaler without a device, or one created for 'cuda'.",
    "GradScaler defaults to 'cuda'. MPS gradient-scaling kernels (_amp_foreach_non_finite_check_and_unscale_, "
    "_amp_update_scale_) exist from PyTorch 2.8; on older versions or with 'cuda' the scaler disables itself.",
    "scaler = torch.amp.GradScaler()",
    "torch.amp.GradScaler(device.type); on MPS float16 training needs PyTorch >= 2.8.",
    "native_functions.yaml in PyTorch 2.8.0 (first MPS kernel for _amp_update_scale_), research notes §1.2",
    triggers=("GradScaler",),
)
CUDA_GRAPHS = rule(
    "API110", "cuda-graphs", "blocker",
    "CUDA graphs: torch.cuda.CUDAGraph, torch.cuda.graph, make_graphed_callables.",
    "CUDA graphs do not exist on MPS; the calls raise on a Mac.",
    "g = torch.cuda.CUDAGraph()",
    "Run eagerly on MPS (capture only when torch.cuda.is_available()).",
    f"{TORCH} torch/cuda/graphs.py",
    triggers=("cuda",),  # torch.cuda.graph(s), CUDAGraph
)
NVTX = rule(
    "API111", "nvtx", "blocker",
    "NVTX ranges: torch.cuda.nvtx.*.",
    "torch.cuda.nvtx needs NVTX compiled into PyTorch; on a Mac it raises 'NVTX functions not installed'.",
    "torch.cuda.nvtx.range_push('forward')",
    "torch.profiler.record_function('forward') works on every backend; torch.mps.profiler for Metal traces.",
    f"{TORCH} torch/cuda/nvtx.py",
    triggers=("cuda",),  # torch.cuda.nvtx
)
CUDA_EVENT = rule(
    "API112", "cuda-event-timing", "blocker",
    "Timing with torch.cuda.Event(enable_timing=True).",
    "CUDA events need CUDA; on a Mac constructing or recording one fails.",
    "start = torch.cuda.Event(enable_timing=True)",
    "torch.mps.Event(enable_timing=True) on MPS, torch.Event(device) on any accelerator, or time.perf_counter() "
    "after a synchronize.",
    f"{TORCH} torch/mps/event.py, torch/cuda/streams.py",
    triggers=("cuda",),  # torch.cuda.Event
)
PIN_MEMORY = rule(
    "API113", "pin-memory", "info",
    "pin_memory=True in a DataLoader or tensor call.",
    "Pinned host memory speeds up CUDA copies only; Apple silicon has unified memory, and on MPS pin_memory "
    "warns or does nothing (the _pin_memory MPS kernel was dropped in PyTorch 2.5).",
    "DataLoader(ds, batch_size=32, pin_memory=True)",
    "pin_memory=torch.cuda.is_available().",
    "native_functions.yaml PyTorch 2.5.1 (_pin_memory lost its MPS key), research notes §1.2",
    triggers=("pin_memory",),
)
TORCH_COMPILE = rule(
    "API114", "torch-compile", "info",
    "torch.compile is used.",
    "Inductor's MPS backend (Metal code generation) is newer and less complete than its CUDA (Triton) backend; "
    "whether a given model compiles on MPS depends on the PyTorch version. Recorded so the trace and record "
    "stages can check it.",
    "model = torch.compile(model)",
    "Make compilation optional (a flag) so the Mac run can fall back to eager mode.",
    "https://pytorch.org/docs/stable/torch.compiler.html ; PyTorch 2.13.0 torch/_inductor/codegen/mps.py",
    triggers=("compile",),
)
DEVICE_STRING_TEST = rule(
    "API115", "device-type-misroutes-mps", "degrades",
    "A device type derived by testing for 'cuda' in a string and defaulting to 'cpu' (e.g. "
    "`'cuda' if 'cuda' in device else 'cpu'`).",
    "MPS is classified as 'cpu', so autocast, pin_memory and dtype choices take the CPU path while tensors are "
    "on MPS: runtime errors or silent float32 training.",
    "device_type = 'cuda' if 'cuda' in device else 'cpu'",
    "device_type = torch.device(device).type",
    "https://github.com/karpathy/nanoGPT/pull/698",
    triggers=("cuda",),
)
CPU_ROUNDTRIP = rule(
    "API116", "cpu-roundtrip", "degrades",
    "A call whose tensor arguments are moved to the CPU and whose result is moved back (`f(x.cpu()).to(dev)`).",
    "A project-level CPU fallback: on MPS every call copies data to the CPU and back; micro-sam measured the MPS "
    "path 3.5x slower than the CPU path for this reason.",
    "keep = nms(boxes.cpu(), scores.cpu(), 0.5).to(dev)",
    "Check whether the operator now has an MPS kernel (mpsready ops) and call it on the device.",
    "https://github.com/computational-cell-analytics/micro-sam/pull/176",
    triggers=("cpu",),  # the `.cpu()` copies
)
DEVICE_GENERATOR = rule(
    "API117", "device-generator", "info",
    "A torch.Generator created on a non-CPU device, or random tensors drawn with a device generator.",
    "Each backend has its own random number stream: the same seed gives different numbers on MPS and CUDA, so "
    "runs cannot be compared value by value.",
    "gen = torch.Generator(device=dev).manual_seed(637)",
    "Draw random tensors on the CPU with a CPU generator, then move them to the device.",
    "https://github.com/AUTOMATIC1111/stable-diffusion-webui/pull/9734",
    triggers=("Generator",),
)
SPARSE_BUFFER = rule(
    "API118", "sparse-buffer", "blocker",
    "A sparse tensor (`.to_sparse()`, torch.sparse_coo_tensor) registered as a module buffer.",
    "Moving the module to MPS copies the sparse buffer, which needs SparseMPS kernels: PyTorch before 2.9 has "
    "none ('Could not run aten::_sparse_coo_tensor_with_dims_and_tensors with arguments from the SparseMPS "
    "backend'), and the CPU-fallback switch does not help. The finding is judged against the declared torch pin: "
    "a blocker (remedy: raise the torch pin to >= 2.9) only when a pin stays below 2.9; with torch unpinned, "
    "undeclared or pinned to admit 2.9 it degrades (needs PyTorch >= 2.9 on a Mac) and does not limit the outlook.",
    "self.register_buffer('heads', mask.to_sparse(), persistent=False)",
    "Raise the torch pin to >= 2.9 (the first release with SparseMPS kernels), or keep the buffer dense (or as an "
    "index tensor) and convert where needed.",
    "https://github.com/pytorch/pytorch/issues/141711 ; native_functions.yaml SparseMPS dispatch keys per release, "
    "shipped as src/mpsready/ops/data/tables/torch-*.json.gz: _sparse_coo_tensor_with_dims_and_tensors, _to_sparse, "
    "_coalesce have a SparseMPS kernel from torch-2.9.0, no operator has one in torch-2.3.0 to 2.8.0",
    triggers=("to_sparse", "to_sparse_coo", "to_sparse_csr", "sparse_coo_tensor", "sparse_csr_tensor"),
)
CUDA_DEFAULT_TENSOR_TYPE = rule(
    "API119", "cuda-default-tensor-type", "blocker",
    "The default tensor type or device is CUDA: `torch.set_default_tensor_type(\"torch.cuda.FloatTensor\")`, "
    "`torch.set_default_device(\"cuda\")`.",
    "Every device-less factory (torch.zeros, torch.randn, nn.Linear's parameters) then allocates on CUDA: on a Mac "
    "the first one raises 'Torch not compiled with CUDA enabled'. No `.cuda()` call is visible anywhere.",
    "torch.set_default_tensor_type('torch.cuda.FloatTensor')\nx = torch.zeros(3)",
    "`torch.set_default_device(device)` with the selected device (set_default_tensor_type is deprecated).",
    f"{TORCH} torch/__init__.py set_default_tensor_type, set_default_device",
    triggers=("set_default_tensor_type", "set_default_device"),
)
ASSERTS_CUDA = rule(
    "API120", "asserts-cuda-tensor", "blocker",
    "`assert x.is_cuda` (or `assert x.device.type == \"cuda\"`) in library code: the function exists only for CUDA "
    "tensors. Also an assertion that CUDA is available (`assert torch.cuda.is_available()`, `if not "
    "torch.cuda.is_available(): raise ...`): the program exists only for CUDA machines.",
    "An MPS tensor fails the assertion: the path has no implementation for any other device. When the function "
    "is the project's core (a fused renderer, an optimiser step in an extension), the project stays on CUDA. "
    "`torch.cuda.is_available()` is False on every Mac, so an availability assertion stops the program before "
    "anything runs; that one is a local edit (the code after it is judged by its own findings).",
    "def volume_render_fused(self, rays):\n    assert rays.is_cuda\n    return _C.render(...)",
    "Provide a pure-PyTorch implementation for other devices, or keep this path on CUDA. For an availability "
    "assertion: remove it, or accept MPS as well (`torch.cuda.is_available() or torch.backends.mps.is_available()`).",
    f"{TORCH} torch/_tensor.py (Tensor.is_cuda is False for MPS tensors); torch/cuda/__init__.py is_available "
    "(False in a build without CUDA)",
    triggers=("is_cuda", "is_available"),
)
CONFIG_CUDA_DEVICE = rule(
    "API121", "config-cuda-device", "blocker",
    "A config file (YAML, Hydra, OmegaConf) sets a device to CUDA (`device: cuda`).",
    "The value reaches torch.device(...) or .to(...) at run time: on a Mac it raises 'Torch not compiled with "
    "CUDA enabled'. It is a config value, so the fix is an override, not a code edit.",
    "configs/train.yaml:\n    device: cuda",
    "Override it for the Mac run (Hydra: `device=mps`; a plain config: set `device: mps`).",
    f"{TORCH} torch/cuda/__init__.py _lazy_init",
)
