// The architecture of the loaded device code (arch.hpp): the PTX version cudaFuncGetAttributes
// reports for an empty kernel of this library, which every build compiles for every architecture
// it lists (SASS compiled from compute_90 reports 90, PTX JIT-compiled from compute_80 reports 80).
#include "kernels/common/arch.hpp"

#include <cuda_runtime.h>

namespace smr {
namespace {
__global__ void arch_probe_kernel() {}
}  // namespace

int kernels_code_arch() {
  cudaFuncAttributes attrs{};
  if (cudaFuncGetAttributes(&attrs, arch_probe_kernel) != cudaSuccess) {
    (void)cudaGetLastError();  // no image for this device (or no device): not sticky
    return 0;
  }
  return attrs.ptxVersion;
}

bool kernels_have_clusters() { return kernels_code_arch() >= 90; }

}  // namespace smr
