// GPU test of common/arch.hpp ([gpu][arch]): the architecture of the device code that runs on the
// device at hand -- never newer than the device, the one the build asks for where the run says
// which (SMR_EXPECT_CODE_ARCH: scripts/gpu-session's sm80-ptx step sets 80 for its 80-virtual
// build on a Hopper card, where the device has clusters and the code has not).
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "kernels/common/arch.hpp"

TEST_CASE("the loaded device code's architecture is the build's, no newer than the device",
          "[gpu][arch]") {
  int device = 0;
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaGetDeviceProperties(&prop, device) == cudaSuccess);
  const int device_arch = prop.major * 10 + prop.minor;
  const int code = smr::kernels_code_arch();
  INFO("device sm_" << device_arch << ", code compiled for sm_" << code);
  REQUIRE(code >= 75);
  REQUIRE(code <= device_arch);
  CHECK(smr::kernels_have_clusters() == (code >= 90));
  if (const char* want = std::getenv("SMR_EXPECT_CODE_ARCH")) REQUIRE(code == std::atoi(want));
}
