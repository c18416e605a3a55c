"""EXT1xx: custom kernels and compiled extensions."""

from mpsready.scan.rules._define import rule

FALLBACK_NOTE = (
    " When the kernel's module is imported under try/except with a fallback beside it, the finding is lowered "
    "to 'degrades' and names the fallback."
)

CUDA_SOURCES = rule(
    "EXT101", "cuda-source-files", "blocker",
    "The project ships CUDA sources (.cu/.cuh): one finding per directory that holds them.",
    "nvcc does not exist on macOS and Apple GPUs do not run CUDA; these kernels have to be ported (to Metal, "
    "e.g. torch.mps.compile_shader) or replaced by PyTorch ops." + FALLBACK_NOTE,
    "csrc/rasterize.cu",
    "Write or reuse a pure-PyTorch reference path and select it when torch.cuda.is_available() is False.",
    "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (no macOS toolkit since CUDA 10.2); "
    "PyTorch 2.13.0 torch/mps/__init__.py compile_shader",
    # Python code naming a .cu/.cuh file (the fallback check): the suffix before the closing quote
    triggers=('.cu"', ".cu'", ".cuh"),
)
CUDA_EXTENSION_BUILD = rule(
    "EXT102", "cuda-extension-build", "blocker",
    "A build declares a CUDA extension: CUDAExtension, BuildExtension with CUDA sources, "
    "cpp_extension.load/load_inline with CUDA sources or -lcuda.",
    "torch.utils.cpp_extension raises 'CUDA_HOME environment variable is not set' (or cannot find nvcc) on a Mac, "
    "so `pip install .` or the first import fails." + FALLBACK_NOTE,
    "from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('ops._C', ['ops.cpp', 'ops_kernel.cu'])",
    "Build a CppExtension (CPU) on macOS and keep the CUDA one for Linux, or provide a PyTorch fallback.",
    "PyTorch 2.13.0 torch/utils/cpp_extension.py (CUDAExtension needs CUDA_HOME / nvcc)",
    triggers=("cpp_extension",),
)
TRITON_KERNEL = rule(
    "EXT103", "triton-kernel", "blocker",
    "A Triton kernel (@triton.jit or @triton.autotune).",
    "Triton has no macOS wheel and no Apple GPU backend; the module does not import on a Mac." + FALLBACK_NOTE,
    "@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...",
    "Keep a pure-PyTorch reference function and dispatch to it when triton is unavailable.",
    "https://pypi.org/project/triton/#files (Linux wheels only)",
    triggers=("triton",),
)
CUPY_KERNEL = rule(
    "EXT104", "cupy-kernel", "blocker",
    "A CuPy kernel: RawKernel, RawModule, ElementwiseKernel or ReductionKernel.",
    "CuPy needs an NVIDIA (or AMD ROCm) GPU; it does not install on macOS." + FALLBACK_NOTE,
    "kernel = cupy.RawKernel(code, 'my_kernel')",
    "Port the kernel to PyTorch ops (or torch.mps.compile_shader), keep CuPy for Linux.",
    "https://docs.cupy.dev/en/stable/install.html",
    triggers=("cupy",),
)
NUMBA_CUDA_KERNEL = rule(
    "EXT105", "numba-cuda-kernel", "blocker",
    "A Numba CUDA kernel (@numba.cuda.jit / @cuda.jit).",
    "Numba's CUDA target needs an NVIDIA GPU and driver; on a Mac the decorator raises CudaSupportError when "
    "the kernel is compiled or launched." + FALLBACK_NOTE,
    "from numba import cuda\n@cuda.jit\ndef kernel(a): ...",
    "Use @numba.njit (CPU) or PyTorch ops on MPS for the Mac path.",
    "https://numba.readthedocs.io/en/stable/cuda/overview.html",
    triggers=("cuda",),  # numba.cuda.jit, cuda.jit
)
PYCUDA_KERNEL = rule(
    "EXT106", "pycuda-kernel", "blocker",
    "A PyCUDA SourceModule compiles CUDA C at run time.",
    "PyCUDA needs the CUDA toolkit and an NVIDIA GPU." + FALLBACK_NOTE,
    "from pycuda.compiler import SourceModule\nmod = SourceModule(cuda_code)",
    "Port the kernel to PyTorch ops or Metal.",
    "https://documen.tician.de/pycuda/",
    triggers=("pycuda",),
)
CPU_EXTENSION = rule(
    "EXT107", "cpp-extension", "info",
    "A C++ (CPU) PyTorch extension: CppExtension or load() with C++ sources only.",
    "It builds on macOS with Xcode's clang, but its kernels take CPU tensors: MPS tensors must be moved to the "
    "CPU around each call (a device round trip).",
    "CppExtension('ops._C', ['ops.cpp'])",
    "Nothing to do for correctness; for speed, consider an MPS kernel (torch.mps.compile_shader) or PyTorch ops.",
    "PyTorch 2.13.0 torch/utils/cpp_extension.py (CppExtension)",
    triggers=("cpp_extension",),
)
FALLBACK_KEYED_ON_CPU = rule(
    "EXT108", "fallback-keyed-on-cpu", "blocker",
    "A pure-PyTorch fallback chosen by `x.device.type == \"cpu\"` (or `not x.is_cuda` spelled as a CPU test), "
    "with the CUDA kernel in the other branch.",
    "On a Mac the tensor's device type is 'mps', not 'cpu', so MPS tensors take the CUDA branch and fail "
    "('Torch not compiled with CUDA enabled', or the extension is missing) although the fallback is right "
    "there.",
    "if input.device.type == \"cpu\":\n    return upfirdn2d_native(input, kernel)\nreturn UpFirDn2d.apply(input, kernel)",
    "Key the branch on CUDA instead: `if input.device.type != \"cuda\":` (and import the extension lazily, "
    "under try/except, so a Mac never builds it).",
    "PyTorch 2.13.0 torch/_tensor.py (Tensor.device.type is 'mps' for MPS tensors)",
    triggers=("cpu",),
)
PURE_PATH_UNWIRED = rule(
    "EXT109", "pure-path-unwired", "info",
    "A pure-PyTorch implementation beside a CUDA kernel or extension (`*_pytorch`, `*_naive`, `*_native`, "
    "`*_ref`, `*_reference`) that the main code never calls.",
    "The Mac needs no port: the reference path already exists, it only has to be selected when the tensor is "
    "not on CUDA. The outlook then lists the kernel as a local edit (wire it), not as CUDA-only.",
    "def ms_deform_attn_core_pytorch(value, shapes, locations, weights): ...\n"
    "# forward() always calls MSDeformAttnFunction.apply(...)",
    "Dispatch on the device: `if value.is_cuda: Function.apply(...) else: ms_deform_attn_core_pytorch(...)`.",
    "https://pytorch.org/docs/stable/notes/extending.html (a custom Function needs an implementation per device)",
)  # no trigger words: found from every file's function definitions (mpsready.scan.model.flow), not by the visitor
