"""Builds the optional fused GELU kernel (CUDA only): ``pip install -e .`` on the GPU server."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="tinyformer",
    version="0.3.0",
    packages=["tinyformer"],
    ext_modules=[
        CUDAExtension(
            name="fused_gelu_cuda",
            sources=["csrc/fused_gelu.cu"],
            extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
