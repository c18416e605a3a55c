// A stand-in for an MPS operator source: two functions with checks, written for the facts miner's test.
#include <ATen/native/mps/OperationUtils.h>

namespace at::native {

TORCH_IMPL_FUNC(cumsum_out_mps)
(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& result) {
  // TORCH_CHECK(false, "a comment is not a check");
  TORCH_CHECK(self.scalar_type() != ScalarType::Long || is_macos_13_or_newer(MacOSVersion::MACOS_VER_13_3_PLUS),
              "MPS does not support cumsum op with int64 input. Support has been added in macOS 13.3");
}

Tensor _mps_linear(const Tensor& input, const Tensor& weight_arg, const std::optional<Tensor>& bias_opt) {
  TORCH_CHECK(supportedFloatingOrComplexType(input), "MPS device does not support linear for non-float inputs");
  TORCH_CHECK(input.dim() <= 16, "MPS supports tensors with dimensions <= ", 16, " (got ", input.dim(), ")");
  return input;
}

} // namespace at::native
