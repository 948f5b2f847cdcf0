// One block per row, streaming the row in slices: the loop the unfused and online kernels share
// (device code plus the host-side choice of the block size).
//
// A block of kThreads threads walks its row in slices of kThreads * kSliceLoads elements. In a
// slice, thread t owns the elements
//     base + u * kThreads + t,   u = 0 .. kSliceLoads - 1,
// so each of the kSliceLoads loads is coalesced across the warp (32 consecutive floats), and a
// thread issues all of its kSliceLoads independent loads before it uses any of them: that is
// what keeps enough bytes in flight to cover the DRAM latency. Out-of-row elements are masked
// (never read, never written) and take a fill value chosen by the caller (-inf for a max, so a
// masked element is ignored by max and contributes exp(-inf) = 0 to a sum).
//
// The block size is a template parameter (the reductions in reduce.cuh need it at compile time);
// `row_block_threads` picks it from N and `with_row_block_threads` is the one switch that turns
// that run-time choice into a compile-time constant.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace smr {

// Loads per thread per slice: 16 floats (64 bytes) in flight per thread.
inline constexpr int kSliceLoads = 16;
inline constexpr int kRowBlockMinThreads = 64;
inline constexpr int kRowBlockMaxThreads = 1024;

// The smallest power of two >= ceil(N / kSliceLoads), clamped to [64, 1024]: short rows get a
// small block (few masked lanes), long rows the largest block (the most threads sharing the row,
// so each thread's chain of additions is short: N / (1024 * 16) steps at most).
inline int row_block_threads(std::int64_t n) {
  std::int64_t threads = kRowBlockMinThreads;
  while (threads < kRowBlockMaxThreads && threads * kSliceLoads < n) threads *= 2;
  return static_cast<int>(threads);
}

// Calls f(std::integral_constant<int, T>{}) for threads == T, T in {64, 128, ..., 1024}.
template <class F>
void with_row_block_threads(int threads, F&& f) {
  switch (threads) {
    case 64: f(std::integral_constant<int, 64>{}); return;
    case 128: f(std::integral_constant<int, 128>{}); return;
    case 256: f(std::integral_constant<int, 256>{}); return;
    case 512: f(std::integral_constant<int, 512>{}); return;
    case 1024: f(std::integral_constant<int, 1024>{}); return;
  }
  throw std::invalid_argument("with_row_block_threads: no instantiation for " +
                              std::to_string(threads) + " threads");
}

// v[u] = row[base + u * kThreads + t] where that is inside the row, `fill` elsewhere.
template <int kThreads>
__device__ __forceinline__ void load_slice(const float* row, std::int64_t base, std::int64_t n,
                                           float (&v)[kSliceLoads], float fill) {
#pragma unroll
  for (int u = 0; u < kSliceLoads; ++u) {
    const std::int64_t j = base + u * kThreads + threadIdx.x;
    v[u] = j < n ? row[j] : fill;
  }
}

// row[base + u * kThreads + t] = v[u] where that is inside the row; nothing is written outside.
template <int kThreads>
__device__ __forceinline__ void store_slice(float* row, std::int64_t base, std::int64_t n,
                                            const float (&v)[kSliceLoads]) {
#pragma unroll
  for (int u = 0; u < kSliceLoads; ++u) {
    const std::int64_t j = base + u * kThreads + threadIdx.x;
    if (j < n) row[j] = v[u];
  }
}

// A tree sum of one slice (depth log2(kSliceLoads) = 4, not a chain of 16 additions).
__device__ __forceinline__ float slice_sum(const float (&v)[kSliceLoads]) {
  float s[kSliceLoads];
#pragma unroll
  for (int u = 0; u < kSliceLoads; ++u) s[u] = v[u];
#pragma unroll
  for (int width = kSliceLoads / 2; width > 0; width /= 2)
#pragma unroll
    for (int u = 0; u < width; ++u) s[u] += s[u + width];
  return s[0];
}

__device__ __forceinline__ float slice_max(const float (&v)[kSliceLoads]) {
  float m = v[0];
#pragma unroll
  for (int u = 1; u < kSliceLoads; ++u) m = fmaxf(m, v[u]);
  return m;
}

}  // namespace smr
