// A split row's partials in global memory (device code): the (max, sum) each block of a row
// publishes for its slice, and how the row's blocks read them back. split_row.cu (slices in shared
// memory) and split_tile.cu (slices in registers) exchange their partials this way: one slot per
// (row, slice), M x S slots in the launch's workspace, filled with kUnpublishedByte before each
// launch (tagged) or read after the row's arrival counter reached S (counted, split_row only).
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/row_stats.cuh"

namespace smr::prod {

// A partial published as its own flag (SoftmaxPlan::tagged_partials): the (max, sum) pair as one
// 64-bit word, stored and loaded relaxed at device scope -- no fence, no counter. The workspace's
// slots are filled with kUnpublishedByte before each launch, so that an unpublished slot's sum
// reads kUnpublished (-1.498...), a value no sum of exponentials takes (they are >= +0 or NaN,
// and the GPU's NaN is 0x7fffffff).
inline constexpr unsigned char kUnpublishedByte = 0xBF;
inline constexpr std::uint32_t kUnpublished = 0xBFBFBFBFu;

__device__ __forceinline__ void publish_partial(float2* slot, RowStats st) {
  const unsigned long long bits =
      (static_cast<unsigned long long>(__float_as_uint(st.sum)) << 32) | __float_as_uint(st.max);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(
      *reinterpret_cast<unsigned long long*>(slot));
  word.store(bits, cuda::memory_order_relaxed);
}

// The slot's word as it is now (one relaxed device-scope load: it may still be unpublished).
__device__ __forceinline__ unsigned long long partial_bits(float2* slot) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(
      *reinterpret_cast<unsigned long long*>(slot));
  return word.load(cuda::memory_order_relaxed);
}
__device__ __forceinline__ bool unpublished(unsigned long long bits) {
  return static_cast<std::uint32_t>(bits >> 32) == kUnpublished;
}
// The partial, from `bits` (an earlier partial_bits of the slot) once published: loaded again until
// it is.
__device__ __forceinline__ RowStats await_partial(float2* slot, unsigned long long bits) {
  while (unpublished(bits)) {
    __nanosleep(32);
    bits = partial_bits(slot);
  }
  return RowStats{__uint_as_float(static_cast<std::uint32_t>(bits)),
                  __uint_as_float(static_cast<std::uint32_t>(bits >> 32))};
}
__device__ __forceinline__ RowStats await_partial(float2* slot) {
  return await_partial(slot, partial_bits(slot));
}

// This thread's share of the row's S partials merged (thread i takes partial i, i + kThreads,
// ...; S is at most the grid, 264 on the H200: one L2 round trip for a block of 512 or more), before the block reduction. Tagged:
// await_partial's relaxed device-scope loads spin until the slot is published. Counted (the
// caller has waited for the row's counter): __ldcg reads L2, never a stale L1 line (another block
// of this SM may have cached a neighbouring row's partials).
template <int kThreads>
__device__ __forceinline__ RowStats thread_partials(float2* row_partials, int S, bool tagged) {
  RowStats st = empty_stats();
  for (int i = static_cast<int>(threadIdx.x); i < S; i += kThreads) {
    if (tagged) {
      st = merge(st, await_partial(row_partials + i));
    } else {
      const float2 pr = __ldcg(row_partials + i);
      st = merge(st, RowStats{pr.x, pr.y});
    }
  }
  return st;
}

}  // namespace smr::prod
