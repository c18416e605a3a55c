// Fused tanh-approximation GELU, forward only (the backward uses autograd on the fallback).
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void fused_gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
    y[i] = 0.5f * v * (1.0f + tanhf(inner));
  }
}

torch::Tensor fused_gelu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "fused_gelu: x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "fused_gelu: x must be float32");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  int64_t n = xc.numel();
  int threads = 256;
  int blocks = (int)((n + threads - 1) / threads);
  fused_gelu_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("fused_gelu", &fused_gelu, "fused GELU (CUDA)");
}
