// GPU test of common/arch.hpp ([gpu][arch]): the architecture of the device code that runs on the
// device at hand -- never newer than the device, the one the build asks for where the run says
// which (SMR_EXPECT_CODE_ARCH: scripts/gpu-session's sm80-ptx step sets 80 for its 80-virtual
// build on a Hopper card, where the device has clusters and the code has not).
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "kernels/common/arch.hpp"
#include "kernels/device_profiles.hpp"
#include "kernels/production/softmax_dispatch.hpp"

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

TEST_CASE("SMR_DEVICE_PROFILE restricts the dispatch's limits to the profile's card",
          "[gpu][arch]") {
  int device = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  const smr::DeviceLimits d = smr::read_device_limits(device);
  const smr::DeviceProfile* profile = smr::restricting_profile();
  if (!profile) {
    WARN("SMR_DEVICE_PROFILE unset: the card's own limits (scripts/gpu-session's sm80-ptx step "
         "sets it)");
    CHECK(d.has_clusters() == (smr::kernels_have_clusters() && d.cluster_launch));
    return;
  }
  INFO("profile " << profile->name << ": dispatch sees sm_" << d.compute_capability()
                  << (d.has_clusters() ? ", clusters" : ", no clusters") << ", "
                  << d.shared_bytes_per_block << " B per block");
  CHECK(d.compute_capability() <= profile->limits.compute_capability());
  CHECK(d.shared_bytes_per_block <= profile->limits.shared_bytes_per_block);
  if (!profile->limits.cluster_launch) {
    CHECK_FALSE(d.has_clusters());
    CHECK(d.max_cluster == 1);
  }
  // The dispatch on this device picks only what the profile's card has.
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{32768}, std::int64_t{300000}}) {
    const smr::Problem p = smr::dense(64, n);
    if (smr::softmax_unsupported(p, d)) continue;
    CHECK(smr::family_available(smr::plan_softmax(p, d).family(), profile->limits));
  }
}
