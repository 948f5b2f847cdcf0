// L2 prefetches: one bulk instruction (the copy engine's cp.async.bulk.prefetch.L2) that brings
// a stretch of global memory towards L2 without waiting for it and without any register or
// shared-memory destination. A hint: it changes no result, and the loads that later read those
// bytes are ordinary loads. split_row's blocks prefetch their next slice while they wait for their
// row's partials (SplitRowPlan::prefetch).
#pragma once

#include <cstdint>

#include "kernels/common/arch.cuh"

namespace smr::prod {

// Brings bytes [src, src + bytes) towards L2 without waiting (one bulk prefetch instruction;
// 16-byte aligned source and size). sm_90 and later; elsewhere nothing (a hint).
__device__ __forceinline__ void prefetch_l2(const void* src, std::uint32_t bytes) {
#if SMR_ARCH_HAS_CLUSTERS
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
#else
  (void)src;
  (void)bytes;
#endif
}

}  // namespace smr::prod
