// read_device_limits (registry.hpp): the DeviceLimits of a CUDA device, every field read from it,
// capped to the loaded code's architecture and to SMR_DEVICE_PROFILE's card where one is named.
#include <algorithm>

#include "kernels/common/arch.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_profiles.hpp"
#include "kernels/registry.hpp"

namespace smr {

namespace {

// A kernel that only exists to ask the runtime how large a cluster the device places
// (cudaOccupancyMaxPotentialClusterSize needs a kernel; this one uses no resources to speak of).
__global__ void cluster_probe_kernel() {}

// The largest cluster of small blocks the device places: 16 where the non-portable opt-in is
// accepted (H100, H200), 8 (portable) where only that is, 1 without cluster launch. The cluster
// kernels' own blocks may be too large for it: the launch path asks again per kernel
// (cluster_placeable, softmax.cu).
int probe_max_cluster(bool cluster_launch) {
  if (!cluster_launch) return 1;
  const void* kernel = reinterpret_cast<const void*>(cluster_probe_kernel);
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
      cudaSuccess)
    (void)cudaGetLastError();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(32);
  cfg.blockDim = dim3(128);
  int size = 0;
  if (cudaOccupancyMaxPotentialClusterSize(&size, kernel, &cfg) != cudaSuccess || size < 1) {
    (void)cudaGetLastError();
    return 8;  // the portable size every cluster-launching device accepts
  }
  return std::min(size, 16);
}

}  // namespace

DeviceLimits read_device_limits(int device) {
  const auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  DeviceLimits d;
  d.sm_count = attr(cudaDevAttrMultiProcessorCount);
  d.shared_bytes_per_block =
      static_cast<std::size_t>(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  d.shared_bytes_per_sm =
      static_cast<std::size_t>(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  d.l2_bytes = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
  d.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  d.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  d.registers_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
  d.cluster_launch = attr(cudaDevAttrClusterLaunch) != 0;
  // 2 (DDR) x clock (kHz) x bus width / 8: the datasheet-style peak, GB/s.
  d.dram_GBps = 2.0 * attr(cudaDevAttrMemoryClockRate) * 1e3 *
                (attr(cudaDevAttrGlobalMemoryBusWidth) / 8.0) / 1e9;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.global_bytes = prop.totalGlobalMem;
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) CUDA_CHECK(cudaSetDevice(device));
  // The dispatch plans for what the card and the loaded code both run: a build for 80-virtual on
  // an H100 has the Hopper-only families' sm_80 bodies, a trap (common/arch.cuh), so there the
  // limits are those of an sm_80 card without clusters.
  if (const int code = kernels_code_arch(); code > 0 && code < d.compute_capability()) {
    d.cc_major = code / 10;
    d.cc_minor = code % 10;
    if (code < 90) d.cluster_launch = false;
  }
  d.max_cluster = probe_max_cluster(d.cluster_launch);
  if (current != device) CUDA_CHECK(cudaSetDevice(current));
  // SMR_DEVICE_PROFILE: the dispatch of a smaller card, on this one (device_profiles.hpp).
  if (const DeviceProfile* profile = restricting_profile())
    return restrict_to_profile(d, profile->limits);
  return d;
}

}  // namespace smr
