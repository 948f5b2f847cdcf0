// Which hardware features the architecture being compiled has (device code), one place for every
// kernel file: the build targets every card from Turing (sm_75) on (CMakeLists.txt, "CUDA
// architectures"), and nvcc compiles each .cu once per architecture with __CUDA_ARCH__ set to it.
//
//   SMR_ARCH_HAS_CLUSTERS  sm_90 and later: thread-block clusters, distributed shared memory
//                          (mapa, ld.shared::cluster, barrier.cluster), the copy engine's bulk
//                          copies and prefetches (cp.async.bulk, TMA), mbarrier transaction
//                          counts and fence.proxy.async. The cluster families (cluster_row,
//                          cluster_tile), block_hybrid and split_row are built from these.
//   SMR_ARCH_HAS_SM80      sm_80 and later: cp.async (LDGSTS), mbarrier, the L2::256B load hint.
//
// Both are 0 in the host pass (no __CUDA_ARCH__). A kernel that needs a feature compiles its body
// only where the feature exists and traps elsewhere (SMR_ARCH_UNSUPPORTED, as CUTLASS and CUB do
// for their sm_90 kernels): the kernel exists in every architecture's image, so the host code that
// launches it builds once for all of them, but on an older card it is never run -- the dispatch
// picks a family only where the device has what the family needs, and a launch that reached one
// anyway stops at its first instruction instead of computing something wrong.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SMR_ARCH_HAS_CLUSTERS 1
#else
#define SMR_ARCH_HAS_CLUSTERS 0
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SMR_ARCH_HAS_SM80 1
#else
#define SMR_ARCH_HAS_SM80 0
#endif

// Threads one SM holds: 1024 on Turing (sm_75), 1536 on sm_86, 87, 89 and from sm_110 on, 2048 on
// sm_80, 90 and 100 (and in the host pass, where nothing reads it). A __launch_bounds__ minimum of
// blocks per SM past it is ignored by ptxas with a warning: min_blocks_within() keeps it inside.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define SMR_ARCH_MAX_THREADS_PER_SM 1024
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                                 __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1100)
#define SMR_ARCH_MAX_THREADS_PER_SM 1536
#else
#define SMR_ARCH_MAX_THREADS_PER_SM 2048
#endif

namespace smr {
// `blocks` blocks of `threads` threads per SM, or as many as the architecture being compiled holds.
constexpr int min_blocks_within(int blocks, int threads) {
  return blocks * threads <= SMR_ARCH_MAX_THREADS_PER_SM ? blocks
                                                         : SMR_ARCH_MAX_THREADS_PER_SM / threads;
}
}  // namespace smr

// The body of a kernel compiled for an architecture that lacks what it needs.
#define SMR_ARCH_UNSUPPORTED() __trap()
