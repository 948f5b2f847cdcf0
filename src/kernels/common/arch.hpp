// Which architecture the device code that runs on the current device was compiled for (host
// code). Not the device's compute capability: a build for 80-virtual (PTX only) runs on an H100
// through the driver's JIT with __CUDA_ARCH__ == 800 in every kernel, so there the cluster
// families' kernels are their sm_80 bodies, a trap (common/arch.cuh). A dispatch that may pick a
// Hopper-only family asks both: the device has clusters, and so does the code.
#pragma once

namespace smr {

// __CUDA_ARCH__ / 10 of the code loaded for the current device (90 for SASS or PTX of sm_90, 80
// for the 80-virtual build on any card); 0 when no image of this library loads on it.
int kernels_code_arch();
// kernels_code_arch() >= 90: the cluster, TMA and bulk-copy kernels have their real bodies.
bool kernels_have_clusters();

}  // namespace smr
