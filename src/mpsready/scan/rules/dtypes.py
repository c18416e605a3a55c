"""DTY1xx: dtypes MPS lacks or limits."""

from mpsready.scan.rules._define import rule

FLOAT64 = rule(
    "DTY101", "float64", "blocker",
    "float64 in code: torch.float64/torch.double, `.double()`, dtype=torch.double, set_default_dtype(float64).",
    "MPS has no float64: 'TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't "
    "support float64. Please use float32 instead.' Static analysis cannot tell whether the tensor reaches MPS, so "
    "CPU-side float64 (metrics, data prep) is reported too.",
    "x = torch.zeros(3, dtype=torch.float64, device=dev)",
    "Use float32 on MPS; keep float64 only for CPU-side computations.",
    "https://github.com/pytorch/pytorch/issues/79019 ; maintainers: hardware limitation (#122602)",
    triggers=("float64", "double"),  # torch.float64, torch.double, .double()
)
NUMPY_FLOAT64 = rule(
    "DTY102", "numpy-float64-to-tensor", "blocker",
    "A NumPy array created with NumPy's default float64 dtype becomes a tensor (torch.from_numpy, torch.tensor, "
    "torch.as_tensor) and is moved to a device before being cast.",
    "torch.from_numpy keeps float64; `.to('mps')` then fails. Cast first (`.float()`), then move.",
    "table = np.random.rand(100, 3)\nfeats = torch.from_numpy(table).to(dev).float()",
    "torch.from_numpy(table).float().to(dev), or create the array with dtype=np.float32.",
    "https://github.com/pytorch/pytorch/issues/79019",
    triggers=("numpy", "astype", "as_tensor", "from_numpy"),  # a NumPy factory (imported from numpy) or .astype(float)
)
BFLOAT16 = rule(
    "DTY103", "bfloat16", "degrades",
    "bfloat16 in code.",
    "MPS bfloat16 needs PyTorch >= 2.3 and macOS 14 (Sonoma): older systems raise 'MPS BFloat16 is only "
    "supported on MacOS 14 or newer'.",
    "emb = torch.nn.Embedding(100, 16).to(dtype=torch.bfloat16)",
    "Require macOS 14+ for the Mac port, or use float16/float32 on older macOS.",
    "https://github.com/pytorch/pytorch/issues/104191 (fixed for macOS 14 by PR #119641, PyTorch 2.3)",
    triggers=("bfloat16",),
)
COMPLEX = rule(
    "DTY104", "complex-dtype", "degrades",
    "Complex dtypes (complex64, complex128, cfloat, cdouble).",
    "complex128 does not exist on MPS; complex64 needs macOS 14 and is supported by a subset of operators only "
    "(the SUPPORTED_COMPLEX_OPS allow-list in PyTorch's MPS tests).",
    "spec = torch.stft(x, 512, return_complex=True).to(torch.complex128)",
    "Use complex64 on macOS 14+, and check the operators with `mpsready trace`.",
    "PyTorch 2.13.0 torch/testing/_internal/common_mps.py (SUPPORTED_COMPLEX_OPS), research notes §3",
    triggers=("complex128", "cdouble", "complex64", "cfloat", "complex32", "chalf"),
)
